"""Scores of one instance and the run-level SWE-ABS metrics.

Per sample (instance) ``Score.value`` holds counts and 0/1 flags; the metrics pool them:

- ``strengthened``: share of instances where ≥ 1 previously resolved candidate now fails (the
  paper's 251 / 500) — it depends on which candidates were graded, so beside it:
- ``rejected``: killed / previously resolved, pooled over every candidate of every instance
  (the paper's 2,177 / 11,034), and the same rate per candidate set graded: ``rejected_own``
  (the bundled hand-written candidates), ``rejected_outside`` (the outside set, written apart
  from this project's generator), ``rejected_model`` (the model under test's patches);
  ``wrong_rejected`` and ``correct_rejected`` split the hand-written ones (own and outside) by
  their ground truth, ``*_own`` / ``*_outside`` per set;
- ``solver_resolved`` / ``solver_resolved_abs``: the model under test's own patches under the
  original and the strengthened tests, and ``solver_drop`` between them;
- ``spearman`` / ``rank_moves``: the candidate systems re-ranked by resolved counts before and
  after (ordinal ranks, as the paper's script);
- ``coverage_before`` / ``coverage_after``: SWE-ABS's slice coverage rate;
- ``mutants_survived`` / ``mutants_killed_new``: operator (and model) mutants that pass the
  original tests, and the share of those the new tests kill; ``flaky``: flaky tests excluded.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    metric,
    scorer,
)
from inspect_ai.solver import TaskState

from methods.swe_abs import rerank

SYSTEM_PREFIX = "sys:"
CANDIDATE_SETS = ("own", "outside", "model")


def candidate_set(candidate: dict[str, Any]) -> str:
    """The set a graded candidate belongs to (logs before the field: model, else own)."""
    origin = candidate.get("origin") or ("model" if candidate.get("kind") == "model" else "own")
    return origin if origin in CANDIDATE_SETS else "own"


def _values(scores: list[SampleScore]) -> list[dict[str, Any]]:
    out = []
    for s in scores:
        v = s.score.value
        if isinstance(v, dict):
            out.append(v)
    return out


def _pooled(num: str, den: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        vals = _values(scores)
        d = sum(float(v.get(den, 0)) for v in vals)
        return sum(float(v.get(num, 0)) for v in vals) / d if d else 0.0

    return compute


def _mean_of(key: str, scores: list[SampleScore], where: str | None = None) -> float:
    vals = [float(v[key]) for v in _values(scores) if key in v and (where is None or v.get(where))]
    return sum(vals) / len(vals) if vals else 0.0


def _mean(key: str, where: str | None = None) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return _mean_of(key, scores, where)

    return compute


@metric
def strengthened() -> Metric:
    return _mean("strengthened")


@metric
def rejected() -> Metric:
    return _pooled("rejected", "prev_resolved")


@metric
def wrong_rejected() -> Metric:
    return _pooled("wrong_rejected", "wrong_prev_resolved")


@metric
def correct_rejected() -> Metric:
    return _pooled("correct_rejected", "correct_prev_resolved")


def _set_metric(prefix: str, origin: str) -> Metric:
    return _pooled(f"set_{origin}_{prefix}rejected", f"set_{origin}_{prefix}prev_resolved")


@metric
def rejected_own() -> Metric:
    return _set_metric("", "own")


@metric
def rejected_outside() -> Metric:
    return _set_metric("", "outside")


@metric
def rejected_model() -> Metric:
    return _set_metric("", "model")


@metric
def wrong_rejected_own() -> Metric:
    return _set_metric("wrong_", "own")


@metric
def correct_rejected_own() -> Metric:
    return _set_metric("correct_", "own")


@metric
def wrong_rejected_outside() -> Metric:
    return _set_metric("wrong_", "outside")


@metric
def correct_rejected_outside() -> Metric:
    return _set_metric("correct_", "outside")


@metric
def solver_resolved() -> Metric:
    return _mean("solver_resolved", where="solver_ran")


@metric
def solver_resolved_abs() -> Metric:
    return _mean("solver_resolved_abs", where="solver_ran")


@metric
def solver_drop() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return _mean_of("solver_resolved", scores, "solver_ran") - _mean_of(
            "solver_resolved_abs", scores, "solver_ran"
        )

    return compute


@metric
def coverage_before() -> Metric:
    return _mean("coverage_before")


@metric
def coverage_after() -> Metric:
    return _mean("coverage_after")


@metric
def mutants_survived() -> Metric:
    return _pooled("mutants_survived", "mutants")


@metric
def mutants_killed_new() -> Metric:
    return _pooled("mutants_killed_new", "mutants_survived")


@metric
def flaky() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return float(sum(float(v.get("flaky", 0)) for v in _values(scores)))

    return compute


def system_counts(scores: list[SampleScore]) -> tuple[dict[str, int], dict[str, int]]:
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    for v in _values(scores):
        for key, value in v.items():
            if not key.startswith(SYSTEM_PREFIX):
                continue
            name, _, phase = key[len(SYSTEM_PREFIX) :].rpartition(":")
            target = before if phase == "orig" else after
            target[name] = target.get(name, 0) + int(value)
    for name in before:
        after.setdefault(name, 0)
    return before, after


@metric
def spearman() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        before, after = system_counts(scores)
        if len(before) < 2:
            return float("nan")
        return rerank(dict(sorted(before.items())), after).spearman

    return compute


@metric
def rank_moves() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        before, after = system_counts(scores)
        if not before:
            return 0.0
        return float(rerank(dict(sorted(before.items())), after).rank_changed)

    return compute


METRICS = [
    strengthened(),
    rejected(),
    wrong_rejected(),
    correct_rejected(),
    rejected_own(),
    rejected_outside(),
    rejected_model(),
    wrong_rejected_own(),
    correct_rejected_own(),
    wrong_rejected_outside(),
    correct_rejected_outside(),
    solver_resolved(),
    solver_resolved_abs(),
    solver_drop(),
    spearman(),
    rank_moves(),
    coverage_before(),
    coverage_after(),
    mutants_survived(),
    mutants_killed_new(),
    flaky(),
]


def score_outcome(outcome: dict[str, Any], solver: dict[str, Any] | None) -> Score:
    """The Score of one instance from the pipeline's outcome (``InstanceOutcome.as_dict()``)."""
    cands = outcome["candidates"]
    value: dict[str, Any] = {
        "strengthened": int(bool(outcome["strengthened"])),
        "prev_resolved": 0,
        "rejected": 0,
    }
    for kind in ("wrong", "correct", "model"):
        value[f"{kind}_prev_resolved"] = 0
        value[f"{kind}_rejected"] = 0
    for origin in CANDIDATE_SETS:
        for prefix in ("", "wrong_", "correct_"):
            value[f"set_{origin}_{prefix}prev_resolved"] = 0
            value[f"set_{origin}_{prefix}rejected"] = 0
    for c in cands:
        prev = bool(c["resolved_original"])
        rej = prev and not c["resolved_abs"]
        value["prev_resolved"] += int(prev)
        value["rejected"] += int(rej)
        if c["kind"] in ("wrong", "correct", "model"):
            value[f"{c['kind']}_prev_resolved"] += int(prev)
            value[f"{c['kind']}_rejected"] += int(rej)
        origin = candidate_set(c)
        for prefix in ("", f"{c['kind']}_") if c["kind"] in ("wrong", "correct") else ("",):
            value[f"set_{origin}_{prefix}prev_resolved"] += int(prev)
            value[f"set_{origin}_{prefix}rejected"] += int(rej)
        value[f"{SYSTEM_PREFIX}{c['system']}:orig"] = int(prev)
        value[f"{SYSTEM_PREFIX}{c['system']}:abs"] = int(bool(c["resolved_abs"]))
    model = [c for c in cands if c["kind"] == "model"]
    value["solver_ran"] = int(solver is not None)
    value["solver_resolved"] = int(bool(model and model[0]["resolved_original"]))
    value["solver_resolved_abs"] = int(bool(model and model[0]["resolved_abs"]))
    value["coverage_before"] = float(outcome["coverage_before"])
    value["coverage_after"] = float(outcome["coverage_after"])
    live = [
        m
        for m in outcome["mutants"]
        if not m["status"].startswith("equivalent")
        and m["status"] not in ("judge_rejected", "does_not_apply", "error")
    ]
    survived = [m for m in live if m["status"] in ("survived", "no_tests", "killed_new")]
    value["mutants"] = len(live)
    value["mutants_survived"] = len(survived)
    value["mutants_killed_new"] = sum(m["status"] == "killed_new" for m in survived)
    value["new_tests"] = sum(t["accepted"] for t in outcome["new_tests"])
    value["duplicate_tests"] = int(outcome.get("duplicate_tests", 0))
    value["unexpressible"] = sum((outcome.get("unexpressible") or {}).values())
    value["flaky"] = len(outcome["flaky_original"]) + len(outcome["flaky_new"])
    value["gold_resolved"] = int(bool(outcome["gold_resolved"]))
    metadata: dict[str, Any] = {
        "instance_id": outcome["instance_id"],
        "gold_resolved": bool(outcome["gold_resolved"]),
        "flaky_original": len(outcome["flaky_original"]),
        "flaky_new": len(outcome["flaky_new"]),
        "new_tests_accepted": value["new_tests"],
        "seconds": outcome["seconds"],
    }
    if outcome.get("removed_overlap"):
        metadata["removed_recall"] = outcome["removed_overlap"].get("recall")
    failure = None
    if solver is not None:
        model_c = model[0] if model else None
        if solver.get("format_failure"):
            failure = "format: the model's reply held no patch or function block"
        elif solver.get("failure"):
            failure = str(solver["failure"])
        elif model_c is not None and model_c.get("problem"):
            failure = f"{model_c['problem']}: {model_c.get('detail', '')}"[:300]
        metadata["solver_problem"] = (model_c or {}).get("problem")
    if failure:
        metadata["solver_failure"] = failure
    rejected_names = [
        c["system"] for c in cands if c["resolved_original"] and not c["resolved_abs"]
    ]
    explanation = (
        f"{value['rejected']}/{value['prev_resolved']} previously resolved candidates rejected"
        f" ({', '.join(rejected_names) or 'none'}); {value['new_tests']} new tests; slice coverage "
        f"{value['coverage_before']:.2f} → {value['coverage_after']:.2f}"
    )
    if failure:
        explanation += f"; solver: {failure}"
    if not outcome["gold_resolved"]:
        explanation += "; WARNING: the gold patch does not resolve the instance here"
    return Score(
        value=value,
        answer=(model[0]["system"] if model else None),
        explanation=explanation,
        metadata=metadata,
    )


@scorer(metrics=METRICS)
def swe_abs_scorer() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:  # noqa: ARG001
        data = state.metadata.get("swe_abs")
        if data is None:
            raise RuntimeError("swe_abs: the solver left no outcome in the state's metadata")
        return score_outcome(data["outcome"], data.get("solver"))

    return score
