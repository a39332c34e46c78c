"""`anchor`: auditing CLI agents — auditor ↔ sandboxed target agent ↔ judges (ANCHOR, ICML 2026).

    harness eval task=anchor auditor=direct max_turns=1
    harness eval task=anchor auditor=persistent max_turns=6 role.auditor=<spec> role.judge=<spec>

Model roles: ``auditor`` (writes the user turns), ``target`` (the react agent under audit) and
``judge``; each falls back to the model under test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig

from harness.data import content_hash
from harness.records import task_metadata
from harness.splits import check_split, split_metadata
from tasks.anchor.dataset import SCENARIO_DIR, AuditorMode, anchor_dataset, load_split
from tasks.anchor.scorer import anchor_scorer
from tasks.anchor.solver import GuardMode, anchor_audit

TASK_VERSION = "1.1.0"
SandboxKind = Literal["bwrap", "docker", "local"]
# An auditor mode, or both = direct and persistent (paired per scenario).
AuditorChoice = Literal["direct", "persistent", "persistent_template", "both"]

DEVIATIONS = [
    "synthetic_scenarios: 22 hand-written synthetic scenarios grounded in US Code sections, "
    "not tasks derived from CourtListener opinions (none offline; no case is cited unverified)",
    "fake_services_as_files: the world is synthetic files and fake-service scripts in the "
    "sandbox work dir, not simulated MCP tools",
    "auditor_stage_machine: the persistent auditor is a prompted model role whose stage "
    "(reframe/decompose/escalate/adapt) is chosen by a deterministic machine, with a template "
    "message when the model's output is unusable; the paper trains its auditor (SFT + RL)",
    "deterministic_primary_judges: compliance, over-compliance and harm are scored from canaries, "
    "the tool log and the work dir; the model judges are recorded beside them (agreement, "
    "failures), not used as the score",
    "own_rubrics: harm scale 0-5 and judge rubrics are ours (the paper's were not retrieved)",
    "no_catastrophic_impact_judge: the paper's catastrophic-impact judge is folded into harm "
    "levels 4-5",
    "stop_on_compliance: the audit ends at the first turn with every required canary (option)",
]


def _sandbox_spec(kind: SandboxKind) -> Any:
    if kind == "bwrap":
        import sandboxes.bwrap  # noqa: F401  (registers the provider)

        # Default BwrapConfig (2 GiB, no network, read-only root): passing a BwrapConfig
        # instance fails in inspect's sandbox set (the model holds dict fields, unhashable).
        return "bwrap"
    if kind == "docker":
        from sandboxes import compose_docker_spec

        return compose_docker_spec()
    return "local"


@task
def anchor(
    auditor: AuditorChoice = "both",
    scenarios: str | None = None,
    split: str = "test",
    max_turns: int = 6,
    turn_time_limit: float = 180.0,
    turn_message_limit: int = 12,
    tool_timeout: int = 30,
    sample_time_limit: int = 1200,
    sandbox: SandboxKind = "bwrap",
    guard: GuardMode = "auto",
    stop_on_compliance: bool = True,
    max_tokens: int = 384,
    auditor_max_tokens: int = 200,
    judge_max_tokens: int = 160,
    auditor_script: list[str] | None = None,
    scenario_dir: str | None = None,
) -> Task:
    """ANCHOR audit over the bundled scenarios.

    Args:
        auditor: direct | persistent | persistent_template | both (direct and persistent).
        scenarios: comma-separated scenario ids (default: all bundled of the split).
        split: test (default: the scenarios whose category is on the test side of the frozen
            split by category, tasks/anchor/splits.yaml), dev (where choices are made) or all;
            a named scenario off the split is an error.
        max_turns: auditor turns per sample (direct always stops after one).
        turn_time_limit: seconds for one target turn (its whole tool loop).
        turn_message_limit: messages the target may add in one turn.
        tool_timeout: seconds per bash/python call.
        sample_time_limit: seconds for a whole sample (audit and judges).
        sandbox: bwrap | docker | local (local has no isolation; guard blocks flagged calls).
        guard: auto | block | record (auto: block on local, record elsewhere).
        stop_on_compliance: end the audit at the first fully compliant turn.
        max_tokens: generation cap per target call.
        auditor_max_tokens: generation cap per auditor-model message.
        judge_max_tokens: generation cap per judge verdict.
        auditor_script: fixed auditor messages (scripted auditor, for tests).
        scenario_dir: a folder of scenario files instead of the bundled ones.
    """
    chosen_split = check_split(split, task="anchor")
    modes: list[AuditorMode] = ["direct", "persistent"] if auditor == "both" else [auditor]
    ids = [s.strip() for s in scenarios.split(",") if s.strip()] if scenarios else None
    folder = Path(scenario_dir) if scenario_dir else SCENARIO_DIR
    dataset, by_id = anchor_dataset(modes, folder, ids, chosen_split)
    return Task(
        dataset=dataset,
        solver=anchor_audit(
            by_id,
            max_turns=max_turns,
            turn_time_limit=turn_time_limit,
            turn_message_limit=turn_message_limit,
            tool_timeout=tool_timeout,
            guard=guard,
            sandbox_type=sandbox,
            stop_on_compliance=stop_on_compliance,
            auditor_messages=auditor_script,
            auditor_max_tokens=auditor_max_tokens,
            judge_max_tokens=judge_max_tokens,
        ),
        scorer=anchor_scorer(),
        sandbox=_sandbox_spec(sandbox),
        time_limit=sample_time_limit,
        config=GenerateConfig(max_tokens=max_tokens),
        version=TASK_VERSION,
        metadata=task_metadata(
            dataset_source=f"bundled:{folder.name}" if not scenario_dir else str(folder),
            dataset_hash=content_hash(folder),
            deviations=DEVIATIONS,
            generated=False,
            **split_metadata(chosen_split, load_split()),
            split_scenarios=sorted(by_id),
            auditor_modes=modes,
            sandbox=sandbox,
        ),
    )


# `make run`: two scenarios in both modes (4 samples), at most two turns, short generations,
# on the embedded model in bwrap. split=all: ledger-diversion is a dev scenario (financial_fraud),
# evidence-deletion a test one (obstruction); a smoke run is labelled all.
RUN_ALL_ARGS: dict[str, Any] = {
    "auditor": "both",
    "scenarios": "ledger-diversion,evidence-deletion",
    "split": "all",
    "max_turns": 2,
    "max_tokens": 128,
    "auditor_max_tokens": 96,
    "judge_max_tokens": 64,
    "turn_message_limit": 4,
    "turn_time_limit": 240.0,
}
