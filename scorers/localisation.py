"""Error-localisation scorers and metrics (CORRECT / Who&When).

- step accuracy: exact integer match of the predicted and gold step (CORRECT's
  `evaluate.py --tolerance 0`), not Who&When's substring test (under which gold "1" matches "12");
- step accuracy within ±k: |pred − gold| ≤ k;
- agent accuracy: the predicted agent equals the gold agent, compared by `agent_key`
  (a turn label's role suffix "(thought)", case and punctuation ignored);
- a missing or invalid prediction is wrong, with the reason in `Score.explanation`;
- intervals: Wilson score (`wilson_low`/`wilson_high`, scipy-checked in `scorers.intervals`);
- cost: model tokens and seconds per trajectory (`mean`).

The solver leaves its prediction in `state.metadata["localisation"]` as
`{"agent", "step", "agent_error", "step_error", "tokens", "seconds", ...}` and the gold labels
are in the sample metadata (`mistake_agent`, `mistake_step`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    mean,
    metric,
    scorer,
)
from inspect_ai.solver import TaskState

from scorers.agents import agent_key
from scorers.stats import Interval, wilson_ci

LOCALISATION_KEY = "localisation"


def step_correct(pred: int | None, gold: int, tolerance: int = 0) -> bool:
    """|pred − gold| ≤ tolerance on integers; a missing prediction is wrong."""
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    if pred is None or isinstance(pred, bool) or not isinstance(pred, int):
        return False
    return abs(pred - int(gold)) <= tolerance


def agent_correct(pred: str | None, gold: str) -> bool:
    return bool(pred) and agent_key(pred) == agent_key(gold) and agent_key(gold) != ""


def _wilson_end(level: float, end: Callable[[Interval], float]) -> Metric:
    # `scores` stays annotated: inspect passes SampleScores only to metrics that say so.
    def compute(scores: list[SampleScore]) -> float:
        values = [float(s.score.as_float()) for s in scores]
        bad = [v for v in values if v not in (0.0, 1.0)]
        if bad:
            raise ValueError(f"Wilson interval needs 0/1 scores, got {bad[0]!r}")
        return end(wilson_ci(int(sum(values)), len(values), level))

    return compute


@metric
def wilson_low(level: float = 0.95) -> Metric:
    """Lower end of the Wilson score interval of a 0/1 accuracy (nan with no samples)."""
    return _wilson_end(level, lambda ci: ci.low)


@metric
def wilson_high(level: float = 0.95) -> Metric:
    """Upper end of the Wilson score interval of a 0/1 accuracy (nan with no samples)."""
    return _wilson_end(level, lambda ci: ci.high)


def score_localisation(
    pred: dict[str, Any], gold_agent: str, gold_step: int, tolerance: int
) -> Score:
    """The Score for one trajectory from the solver's prediction dict and the gold labels."""
    step = pred.get("step")
    agent = pred.get("agent")
    reasons = []
    if pred.get("step_error"):
        reasons.append(f"step wrong: {pred['step_error']}")
        step = None
    if pred.get("agent_error"):
        reasons.append(f"agent wrong: {pred['agent_error']}")
        agent = None
    exact = step_correct(step, gold_step)
    within = step_correct(step, gold_step, tolerance)
    agent_ok = agent_correct(agent, gold_agent)
    if step is not None and not exact:
        reasons.append(f"step {step} != gold {gold_step}")
    if agent is not None and not agent_ok:
        reasons.append(f"agent {agent!r} != gold {gold_agent!r}")
    return Score(
        value={
            "step": 1.0 if exact else 0.0,
            "step_within_k": 1.0 if within else 0.0,
            "agent": 1.0 if agent_ok else 0.0,
            "tokens": float(pred.get("tokens") or 0.0),
            "seconds": float(pred.get("seconds") or 0.0),
        },
        answer=f"agent={agent!r} step={step!r}",
        explanation="; ".join(reasons) if reasons else "agent and step correct",
        metadata={
            "gold_agent": gold_agent,
            "gold_step": gold_step,
            "tolerance": tolerance,
            "step_error": pred.get("step_error"),
            "agent_error": pred.get("agent_error"),
        },
    )


_ACC = [mean(), wilson_low(), wilson_high()]


@scorer(
    metrics={
        "step": _ACC,
        "step_within_k": _ACC,
        "agent": _ACC,
        "tokens": [mean()],
        "seconds": [mean()],
    }
)
def localisation_scorer(tolerance: int = 1) -> Scorer:
    """Step (exact and ±`tolerance`) and agent accuracy with Wilson intervals; tokens and seconds."""
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")

    async def score(state: TaskState, target: Target) -> Score:  # noqa: ARG001
        meta = state.metadata or {}
        pred = meta.get(LOCALISATION_KEY)
        gold_agent, gold_step = meta.get("mistake_agent"), meta.get("mistake_step")
        if gold_agent is None or gold_step is None:
            raise ValueError(
                f"sample {state.sample_id!r}: metadata lacks the gold mistake_agent/mistake_step"
            )
        if not isinstance(pred, dict):
            pred = {
                "step_error": "no prediction: the solver produced none",
                "agent_error": "no prediction",
            }
        return score_localisation(pred, str(gold_agent), int(gold_step), tolerance)

    return score
