"""Who&When's localisation baselines (all-at-once, step-by-step, binary search) and random.

All methods share one signature: `await method(trajectory, generate, config)` -> `Localisation`.
`generate` takes chat messages and returns text (sync or async).
"""

from __future__ import annotations

import random as _random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import methods.correct._prompts as _prompts
from methods.common import AnswerFormat
from methods.correct._generate import CallLog, Generate, call_model, messages
from methods.correct._parse import (
    HALF_FORMAT,
    YES_NO_PREFIX,
    localisation_format,
    localisation_prefix,
    parse_half,
    parse_localisation,
    parse_yes_no,
    yes_no_format,
)
from methods.correct._render import TokenCounter, approx_tokens, render_steps, truncate_text
from methods.correct._trajectory import Prediction, Trajectory, agent_key


@dataclass(frozen=True)
class LocaliserConfig:
    """Shared knobs. `max_prompt_tokens` bounds every prompt (the embedded SmolLM2 has 8,192
    positions; on CPU 2,048 keeps a call to seconds). `with_ground_truth` shows the task's answer
    (Who&When's "with ground truth" setting)."""

    max_prompt_tokens: int = 2048
    count_tokens: TokenCounter = approx_tokens
    with_ground_truth: bool = True
    schema_budget_fraction: float = 0.3  # at most this share of the prompt goes to schemata
    question_budget_tokens: int = 256
    seed: int = 0
    # The reply budget: sizes the free text of the answer formats so a reply ends in it.
    max_new_tokens: int = 256


@dataclass
class Localisation:
    method: str
    prediction: Prediction
    log: CallLog = field(default_factory=CallLog)
    truncation: list[dict[str, Any]] = field(default_factory=list)
    retrieved: list[str] = field(default_factory=list)  # ids of the schemata's source trajectories
    schemata_used: int = 0  # schemata that fitted into the prompt (best-ranked first)

    def summary(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "calls": self.log.calls,
            "prompt_chars": self.log.prompt_chars,
            "completion_chars": self.log.completion_chars,
            "model_seconds": round(self.log.seconds, 4),
            "notes": list(self.log.notes),
            "truncation": self.truncation,
            "retrieved": list(self.retrieved),
            "schemata_used": self.schemata_used,
        }


def _rng(config: LocaliserConfig, trajectory: Trajectory) -> _random.Random:
    # Per-trajectory seed: a run is reproducible and independent of sample order.
    return _random.Random(config.seed * 1_000_003 + zlib.crc32(trajectory.id.encode()))


def _question(t: Trajectory, config: LocaliserConfig) -> str:
    # At most 1/8 of the prompt: the history, not the task statement, holds the mistake.
    budget = min(config.question_budget_tokens, config.max_prompt_tokens // 8)
    return truncate_text(t.question, budget, config.count_tokens)


def _gt(t: Trajectory, config: LocaliserConfig) -> str | None:
    return t.ground_truth if config.with_ground_truth and t.ground_truth else None


def _conversation_budget(template: str, config: LocaliserConfig, system: str) -> int:
    return (
        config.max_prompt_tokens - config.count_tokens(template) - config.count_tokens(system) - 16
    )


def _free_chars(prefix: str, config: LocaliserConfig, cap: int = 200) -> int:
    """Characters of free text that fit in the reply budget after `prefix`, at most `cap`.

    Counted in characters, not the tokenizer's usual split: under a grammar a model may spell a
    fixed part one character per token, and one printable ASCII character is at most one token,
    so a reply within the format ends inside `max_new_tokens` whenever the prefix does."""
    return max(1, min(cap, config.max_new_tokens - len(prefix) - 2))


def localisation_answer(
    t: Trajectory, config: LocaliserConfig
) -> tuple[tuple[str, ...], AnswerFormat]:
    """The all-at-once reply's format for `t`: its agents, its steps, a reason that fits."""
    team = t.agents + ((t.mistake_agent,) if t.mistake_agent else ())
    chars = _free_chars(localisation_prefix(t.agents, t.n_steps), config)
    return team, localisation_format(t.agents, t.n_steps, chars)


def method_answer_formats(
    method: str, trajectories: Sequence[Trajectory], config: LocaliserConfig
) -> list[AnswerFormat]:
    """Every answer format `method` decodes under on `trajectories` (checked at task load)."""
    if method in ("all_at_once", "correct"):
        return [localisation_answer(t, config)[1] for t in trajectories]
    if method == "step_by_step":
        return [yes_no_format(_free_chars(YES_NO_PREFIX, config))]
    if method == "binary_search":
        return [HALF_FORMAT]
    return []


def _from_step(t: Trajectory, step: int, reason: str = "", raw: str = "") -> Prediction:
    return Prediction(agent=t.steps[step].agent, step=t.steps[step].index, reason=reason, raw=raw)


_MIN_SCHEMA_TOKENS = 32


def _schema_budget(config: LocaliserConfig, fixed_tokens: int) -> int:
    """Tokens the schemata may use: at most `schema_budget_fraction` of the prompt, and never so
    many that the history gets less than half of it."""
    return min(
        int(config.max_prompt_tokens * config.schema_budget_fraction),
        config.max_prompt_tokens - fixed_tokens - config.max_prompt_tokens // 2,
    )


def _fixed_tokens(t: Trajectory, config: LocaliserConfig) -> int:
    """The all-at-once prompt's tokens without history and schemata (task, answer, system)."""
    question, gt = _question(t, config), _gt(t, config)
    return config.count_tokens(_prompts.all_at_once_prompt(question, "", gt)) + config.count_tokens(
        _prompts.SYSTEM_ALL_AT_ONCE
    )


def schema_capacity(trajectory: Trajectory, config: LocaliserConfig) -> int:
    """How many schemata CORRECT's prompt for `trajectory` can hold at `config`'s budget (each
    gets at least 32 tokens); the schemata's text does not change it."""
    return max(_schema_budget(config, _fixed_tokens(trajectory, config)), 0) // _MIN_SCHEMA_TOKENS


def _fit_schemata(
    schemata: Sequence[str], config: LocaliserConfig, fixed_tokens: int, log: CallLog
) -> list[str]:
    """Schemata share at most `schema_budget_fraction` of the prompt and never squeeze the
    history below half of it; when each would get < 32 tokens, only the best-ranked ones that
    fit are kept (noted in the log)."""
    if not schemata:
        return []
    total = _schema_budget(config, fixed_tokens)
    keep = min(len(schemata), max(total, 0) // _MIN_SCHEMA_TOKENS)
    if keep < len(schemata):
        log.notes.append(
            f"schemata reduced from {len(schemata)} to {keep} to fit max_prompt_tokens"
        )
    if keep == 0:
        return []
    each = total // keep
    return [truncate_text(s, each, config.count_tokens) for s in schemata[:keep]]


async def all_at_once(
    trajectory: Trajectory,
    generate: Generate,
    config: LocaliserConfig = LocaliserConfig(),
    schemata: Sequence[str] = (),
    method: str = "all_at_once",
) -> Localisation:
    """One call over the whole (fitted) history; with `schemata`, CORRECT's guided prompt."""
    t = trajectory
    log = CallLog()
    question, gt = _question(t, config), _gt(t, config)
    fitted = _fit_schemata(schemata, config, _fixed_tokens(t, config), log)
    template = _prompts.all_at_once_prompt(question, "", gt, fitted)
    rendered = render_steps(
        t.steps,
        _conversation_budget(template, config, _prompts.SYSTEM_ALL_AT_ONCE),
        config.count_tokens,
    )
    prompt = _prompts.all_at_once_prompt(question, rendered.text, gt, fitted)
    team, fmt = localisation_answer(t, config)
    reply = await call_model(generate, messages(prompt, _prompts.SYSTEM_ALL_AT_ONCE), log, fmt)
    prediction = parse_localisation(reply, t.n_steps, team)
    return Localisation(method, prediction, log, [rendered.as_dict()], schemata_used=len(fitted))


async def step_by_step(
    trajectory: Trajectory,
    generate: Generate,
    config: LocaliserConfig = LocaliserConfig(),
    max_calls: int | None = None,
) -> Localisation:
    """Judge each step in order given the history so far; the first 'Yes' is the prediction.

    No 'Yes' at all predicts the last step (as Who&When does). `max_calls` caps the calls (an
    option for CPU budgets; when it stops early the prediction is the last step, noted in the log).
    """
    t = trajectory
    log = CallLog()
    truncation: list[dict[str, Any]] = []
    question, gt = _question(t, config), _gt(t, config)
    fmt = yes_no_format(_free_chars(YES_NO_PREFIX, config))
    unparsed = 0
    for pos, step in enumerate(t.steps):
        if max_calls is not None and log.calls >= max_calls:
            log.notes.append(f"stopped after max_calls={max_calls} at step {step.index}")
            break
        template = _prompts.step_prompt(question, "", gt, step.index, step.label)
        rendered = render_steps(
            t.steps[: pos + 1],
            _conversation_budget(template, config, _prompts.SYSTEM_STEP),
            config.count_tokens,
        )
        truncation.append(rendered.as_dict())
        prompt = _prompts.step_prompt(question, rendered.text, gt, step.index, step.label)
        reply = await call_model(generate, messages(prompt, _prompts.SYSTEM_STEP), log, fmt)
        verdict = parse_yes_no(reply)
        if verdict is None:
            unparsed += 1
        if verdict:
            if unparsed:
                log.notes.append(f"{unparsed} verdicts without yes/no, read as 'no'")
            return Localisation(
                "step_by_step",
                _from_step(t, pos, reason=reply, raw=reply),
                log,
                _summarise(truncation),
            )
    if unparsed:
        log.notes.append(f"{unparsed} verdicts without yes/no, read as 'no'")
    log.notes.append("no step judged erroneous: predicting the last step")
    return Localisation("step_by_step", _from_step(t, t.n_steps - 1), log, _summarise(truncation))


async def binary_search(
    trajectory: Trajectory,
    generate: Generate,
    config: LocaliserConfig = LocaliserConfig(),
) -> Localisation:
    """Halve the segment [start, end] by asking which half holds the decisive mistake.

    An answer naming neither (or both) halves picks one at random (seeded), as Who&When does.
    """
    t = trajectory
    log = CallLog()
    rng = _rng(config, t)
    truncation: list[dict[str, Any]] = []
    question, gt = _question(t, config), _gt(t, config)
    start, end = 0, t.n_steps - 1  # positions; equal to history indices for loaded data
    while start < end:
        mid = start + (end - start) // 2
        s_idx, m_idx, e_idx = t.steps[start].index, t.steps[mid].index, t.steps[end].index
        template = _prompts.binary_prompt(question, "", gt, s_idx, m_idx, e_idx)
        rendered = render_steps(
            t.steps[start : end + 1],
            _conversation_budget(template, config, _prompts.SYSTEM_BINARY),
            config.count_tokens,
        )
        truncation.append(rendered.as_dict())
        prompt = _prompts.binary_prompt(question, rendered.text, gt, s_idx, m_idx, e_idx)
        reply = await call_model(
            generate, messages(prompt, _prompts.SYSTEM_BINARY), log, HALF_FORMAT
        )
        half = parse_half(reply)
        if half is None:
            half = rng.choice(["upper", "lower"])
            log.notes.append(f"ambiguous half for steps {s_idx}..{e_idx}: chose {half} at random")
        start, end = (start, mid) if half == "upper" else (mid + 1, end)
    return Localisation("binary_search", _from_step(t, start), log, _summarise(truncation))


async def random_baseline(
    trajectory: Trajectory,
    generate: Generate | None = None,  # noqa: ARG001
    config: LocaliserConfig = LocaliserConfig(),
) -> Localisation:
    """Uniform step in [0, n) and, independently, a uniform agent among the speakers (seeded)."""
    t = trajectory
    rng = _rng(config, t)
    step = rng.randrange(t.n_steps)
    agent = rng.choice(list(t.speakers))
    return Localisation("random", Prediction(agent=agent, step=t.steps[step].index))


async def first_step_baseline(
    trajectory: Trajectory,
    generate: Generate | None = None,  # noqa: ARG001 - the methods' common signature
    config: LocaliserConfig = LocaliserConfig(),  # noqa: ARG001
) -> Localisation:
    """Always step 0 and its speaker: what the easiest answer in the format scores."""
    return Localisation("first_step", _from_step(trajectory, 0))


async def most_frequent_agent_baseline(
    trajectory: Trajectory,
    generate: Generate | None = None,  # noqa: ARG001 - the methods' common signature
    config: LocaliserConfig = LocaliserConfig(),  # noqa: ARG001
) -> Localisation:
    """The agent with the most turns (ties: the one who speaks first) at its first turn."""
    t = trajectory
    counts: dict[str, int] = {}
    for s in t.steps:
        counts[agent_key(s.agent)] = counts.get(agent_key(s.agent), 0) + 1
    best = max(counts.values())
    pos = next(i for i, s in enumerate(t.steps) if counts[agent_key(s.agent)] == best)
    return Localisation("most_frequent_agent", _from_step(t, pos))


def _summarise(truncation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep logs small: per-call records collapse to the worst case plus counts."""
    if len(truncation) <= 2:
        return truncation
    worst = max(truncation, key=lambda r: (r["steps_omitted"], r["steps_cut"]))
    return [
        dict(
            worst,
            calls=len(truncation),
            calls_truncated=sum(1 for r in truncation if r["steps_cut"] or r["steps_omitted"]),
        )
    ]
