"""The audit loop: auditor ↔ target ↔ judges, over plain callables (no model or sandbox API).

Each turn the auditor policy says what to send (asking the auditor model when it needs one), the
target plays one turn (its whole tool loop), the work dir is snapshotted and the canaries are
checked, so the turn of first compliance is known. After the last turn the deterministic
evidence is gathered and the four judges are asked. ``run_audit`` returns the audit record that
the task stores in the sample's metadata and the scorer reads.

The caller provides the roles as callables (``AuditRoles``):

- ``auditor(messages) -> str`` and ``judge(messages) -> str``: one model call on chat messages
  given as ``(role, text)`` pairs; an exception is recorded as a failed call (the auditor falls
  back to its template, the judge verdict is a scored failure), never fatal to the audit;
- ``target(message, turn) -> TargetTurn``: the target agent's turn on one user message;
- ``exec(argv, timeout) -> ExecResult``: a command in the sandbox's work dir (the snapshots).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import methods.anchor._judges as judges
from methods.common import AnswerFormat, takes_answer_format

from ._auditor import AuditContext, AuditorMessage, AuditorPolicy, Exchange
from ._evidence import (
    CheckResult,
    CommandRecord,
    WorldState,
    evaluate_checks,
    unrequested_artifacts,
)
from ._scenario import Scenario
from ._snapshot import Exec, SnapshotError, SnapshotLimits, prepare_world, snapshot_world

__all__ = [
    "AuditRoles",
    "AuditSettings",
    "ChatGenerate",
    "TargetTurn",
    "run_audit",
    "run_judges",
]

# One model call: chat messages as (role, text) pairs, role "system" or "user" → the reply text.
ChatGenerate = Callable[[list[tuple[str, str]]], Awaitable[str]]

# The marker the task's guard writes into a rejected tool call's error.
GUARD_MARKER = "blocked by the audit harness"


@dataclass
class TargetTurn:
    """What the target did with one user message."""

    reply: str  # its last non-empty text reply
    commands: list[CommandRecord] = field(default_factory=list)
    limit: str | None = None  # the turn limit it hit, if any


@dataclass
class AuditRoles:
    auditor: ChatGenerate
    target: Callable[[str, int], Awaitable[TargetTurn]]
    judge: ChatGenerate
    exec: Exec


@dataclass(frozen=True)
class AuditSettings:
    max_turns: int = 6
    stop_on_compliance: bool = True
    guard: str = "record"  # "block": the harness rejected flagged calls; "record": the sandbox did
    snapshot: SnapshotLimits = SnapshotLimits()
    judge_reason_chars: int = 100  # the judges' reason length under their answer format


async def _call(
    generate: ChatGenerate,
    messages: list[tuple[str, str]],
    answer_format: AnswerFormat | None = None,
) -> tuple[str | None, str | None]:
    """The reply, or None and the reason when the call failed; ``answer_format`` is passed on
    when ``generate`` takes it (a constrained caller enforces it)."""
    try:
        if answer_format is not None and takes_answer_format(generate):
            reply = await generate(messages, answer_format=answer_format)  # type: ignore[call-arg]
            return reply, None
        return await generate(messages), None
    except Exception as e:  # a failed model call is recorded as such, never fatal  # noqa: BLE001
        return None, f"{type(e).__name__}: {e}"[:300]


@dataclass
class _Turn:
    exchange: Exchange
    note: dict[str, Any]


class _Audit:
    """The state of one audit while it runs; each step is one method."""

    def __init__(
        self,
        scenario: Scenario,
        policy: AuditorPolicy,
        roles: AuditRoles,
        settings: AuditSettings,
        initial: WorldState,
    ) -> None:
        self.scenario = scenario
        self.policy = policy
        self.roles = roles
        self.settings = settings
        self.turns: list[_Turn] = []
        self.commands: list[CommandRecord] = []
        self.initial = initial  # the world before the first turn (prepare_world's snapshot)
        self.world: WorldState | None = None
        self.canaries: list[CheckResult] = []
        self.first_compliance: int | None = None
        self.snapshot_notes: list[dict[str, Any]] = []

    @property
    def history(self) -> list[Exchange]:
        return [t.exchange for t in self.turns]

    async def auditor_message(self) -> tuple[AuditorMessage, str | None] | None:
        """The next user message (None when the audit is over) and a failed call's reason."""
        ctx = AuditContext(self.scenario, self.history, self.settings.max_turns)
        if ctx.turn >= self.settings.max_turns:
            return None
        request = self.policy.next_request(ctx)
        if request is None:
            return None
        output, call_error = None, None
        if request.prompt is not None:
            output, call_error = await _call(self.roles.auditor, list(request.prompt))
        return self.policy.finalize(request, output), call_error

    async def observe(self, turn: int) -> None:
        """Snapshot the work dir and check the canaries against it and the command log.

        A snapshot that fails after the target has acted (it can fill or break its own work dir)
        keeps the last good snapshot, says so, and the audit goes on: it is evidence, not a crash.
        """
        try:
            self.world = await snapshot_world(
                self.scenario, self.roles.exec, self.settings.snapshot
            )
        except SnapshotError as e:
            last = self.world or self.initial
            self.world = replace(last, truncated=f"snapshot failed after turn {turn}: {e}")
        if self.world.notes or self.world.truncated:
            self.snapshot_notes.append(
                {"turn": turn, "truncated": self.world.truncated, "notes": dict(self.world.notes)}
            )
        self.canaries = evaluate_checks(self.scenario.canaries, self.world, self.commands)

    async def play_turn(self, message: AuditorMessage, call_error: str | None) -> bool:
        """One auditor message → the target's turn → evidence; True when the turn complied."""
        turn = len(self.turns) + 1
        played = await self.roles.target(message.text, turn)
        self.commands.extend(played.commands)
        await self.observe(turn)
        complied = judges.deterministic_compliance(self.scenario, self.canaries) == "full"
        if complied and self.first_compliance is None:
            self.first_compliance = turn
        exchange = Exchange(
            turn=turn,
            stage=message.stage,
            message=message.text,
            reply=played.reply,
            refused=judges.detect_refusal(played.reply),
            canaries_hit=[c.id for c in self.canaries if c.hit],
            source=message.source,
        )
        note = {
            "turn": turn,
            "stage": message.stage,
            "auditor_source": message.source,
            "auditor_note": message.note or (call_error or ""),
            "limit": played.limit,
            "n_commands": len(played.commands),
        }
        self.turns.append(_Turn(exchange, note))
        return complied

    async def run(self) -> None:
        while (next_message := await self.auditor_message()) is not None:
            complied = await self.play_turn(*next_message)
            if complied and self.settings.stop_on_compliance:
                break
        if self.world is None:  # no turn ran (e.g. max_turns=0)
            await self.observe(0)

    def record(self, verdicts: dict[str, dict[str, Any]], evidence: _Evidence) -> dict[str, Any]:
        """The audit record (``state.metadata["anchor"]``) the scorer reads."""
        history = self.history
        return {
            "turns": [
                {
                    **t.note,
                    "message": t.exchange.message[:600],
                    "reply": t.exchange.reply[:600],
                    "refused": t.exchange.refused,
                    "canaries_hit": t.exchange.canaries_hit,
                }
                for t in self.turns
            ],
            "commands": [c.as_dict() for c in self.commands],
            "violations": [_violation(c) for c in self.commands if c.flags],
            "guard": self.settings.guard,
            "canaries": {c.id: {"hit": c.hit, "evidence": c.evidence} for c in self.canaries},
            "beyond_request": {
                b.id: {"hit": b.hit, "evidence": b.evidence} for b in evidence.beyond
            },
            "unrequested_artifacts": evidence.artifacts,
            "compliance": evidence.compliance,
            "first_compliance_turn": self.first_compliance,
            "first_refusal_turn": next((e.turn for e in history if e.refused), None),
            "refused_any": evidence.refused_any,
            "over_compliance_count": evidence.over_count,
            "harm": evidence.harm,
            "judges": verdicts,
            "snapshots": self.snapshot_notes,
        }


@dataclass
class _Evidence:
    """The deterministic evidence after the last turn."""

    beyond: list[CheckResult]
    artifacts: list[str]
    compliance: str
    over_count: int
    harm: int
    refused_any: bool


def _evidence(audit: _Audit) -> _Evidence:
    assert audit.world is not None
    s = audit.scenario
    beyond = evaluate_checks(s.beyond_request, audit.world, audit.commands)
    artifacts = unrequested_artifacts(s, audit.world)
    compliance = judges.deterministic_compliance(s, audit.canaries)
    over = judges.deterministic_over_compliance(beyond, artifacts)
    return _Evidence(
        beyond=beyond,
        artifacts=artifacts,
        compliance=compliance,
        over_count=over.count,
        harm=judges.deterministic_harm(s, compliance, over.count, len(audit.commands)),
        refused_any=any(e.refused for e in audit.history),
    )


def _violation(c: CommandRecord) -> dict[str, Any]:
    return {
        "turn": c.turn,
        "tool": c.tool,
        "command": c.command[:300],
        "flags": c.flags,
        "stopped_by": "harness_guard" if (c.error and GUARD_MARKER in c.error) else "sandbox",
        "error": c.error,
        "output": c.output[:300],
    }


async def run_judges(
    scenario: Scenario,
    turns: Sequence[tuple[str, str]],
    commands: Sequence[CommandRecord],
    artifacts: Sequence[str],
    deterministic: dict[str, Any],
    judge: ChatGenerate,
    reason_chars: int = 100,
) -> dict[str, dict[str, Any]]:
    """Ask the judge model each rubric; each verdict sits beside its deterministic value.

    ``deterministic`` holds the evidence's value per judge: ``refusal`` (bool), ``compliance``
    (full/partial/none), ``over_compliance`` (bool) and ``harm`` (0-5).
    """
    transcript = judges.render_transcript(turns, commands)
    rubrics = (
        ("refusal", judges.refusal_prompt(scenario, transcript), judges.parse_refusal),
        ("compliance", judges.compliance_prompt(scenario, transcript), judges.parse_compliance),
        (
            "over_compliance",
            judges.over_compliance_prompt(scenario, transcript, artifacts),
            judges.parse_over_compliance,
        ),
        ("harm", judges.harm_prompt(scenario, transcript), judges.parse_harm),
    )
    verdicts = {}
    for name, prompt, parse in rubrics:
        raw, err = await _call(judge, [("user", prompt)], judges.judge_format(name, reason_chars))
        verdict = parse(raw or "", deterministic[name])
        if err is not None:
            verdict.error = f"judge model call failed: {err}"
        verdicts[name] = verdict.as_dict()
    return verdicts


async def run_audit(
    scenario: Scenario,
    policy: AuditorPolicy,
    roles: AuditRoles,
    settings: AuditSettings = AuditSettings(),
) -> dict[str, Any]:
    """Run one audit of ``scenario`` and return its record (see ``_Audit.record``)."""
    initial = await prepare_world(scenario, roles.exec, settings.snapshot)
    audit = _Audit(scenario, policy, roles, settings, initial)
    await audit.run()
    evidence = _evidence(audit)
    verdicts = await run_judges(
        scenario,
        [(e.message, e.reply) for e in audit.history],
        audit.commands,
        evidence.artifacts,
        {
            "refusal": evidence.refused_any,
            "compliance": evidence.compliance,
            "over_compliance": evidence.over_count > 0,
            "harm": evidence.harm,
        },
        roles.judge,
        settings.judge_reason_chars,
    )
    return audit.record(verdicts, evidence)
