"""Scoring a stress sample, and the run's metrics.

A well-behaved sample is **completed** when every operation was made as asked and gave what it
must. A fault sample is a **contained failure** when the fault failed only its own command — cut
off by the sandbox within its limit, nothing of it left running on the host (checked by its tag),
no connection reached the host — and the sample's sandbox still ran the next command; otherwise it
is **not contained**, with the reason. Both kinds of failure are scored (`Score.metadata
["failure"]` carries the reason); only infrastructure errors propagate.

Metrics (`stress_summary`): samples; completed (count, and rate over well-behaved samples);
faults planted and contained (count, rate, and the rate per fault kind); ok_rate (samples with
their expected outcome); operations, operations per second (all operations of the run over the
span from the first start to the last end), p50/p99 latency in ms over the operations of
well-behaved samples (nearest rank). `host_leaks` counts from the host what the run left behind
(`leaks.py`).
"""

from __future__ import annotations

import math
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store

from tasks.agent_stress.dataset import FAULTS, Op, ops_from_metadata
from tasks.agent_stress.leaks import (
    LEAK_KINDS,
    count_leaks_settled,
    kill_tagged,
    registry_for,
    zombie_children,
)
from tasks.agent_stress.solver import OPS_KEY


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in (0, 1]): the smallest value with at least q of the values at
    or below it; nan for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def _deviation(ops: list[Op], records: list[dict[str, Any]]) -> str | None:
    if len(records) < len(ops):
        return f"the agent made {len(records)} of the {len(ops)} calls asked for"
    for i, r in enumerate(records[: len(ops)]):
        if not r.get("as_asked"):
            return f"call {i} is not the one asked for ({r.get('tool')} {r.get('arguments')})"
    return None


def _fault_verdict(
    kind: str, ops: list[Op], records: list[dict[str, Any]], metadata: dict[str, Any]
) -> tuple[bool, str]:
    """(contained, why) for a fault sample whose calls were all made as asked."""
    fault_at = next(i for i, op in enumerate(ops) if op.expect == "fault")
    op, r = ops[fault_at], records[fault_at]
    timeout = float(op.arguments.get("timeout", 60))
    problems: list[str] = []
    # (no wall-clock check: a command's time includes its wait for inspect's subprocess gate; that
    # the sandbox's own limit fired is its outcome, and a sandbox that never returned leaves the
    # sample's calls incomplete)
    if op.check_leftovers and r.get("leftovers", 0):
        problems.append(f"{r['leftovers']} of its processes were still running on the host")
    alive = records[-1]
    if not (alive.get("outcome") == "ok" and alive.get("as_expected")):
        problems.append(f"the sandbox did not run the next command ({alive.get('outcome')})")
    outcome, stdout = r.get("outcome"), r.get("stdout", "")
    if kind == "fork_bomb" and outcome == "ok":
        problems.append("the bomb ran to completion")
    elif kind == "memory_hog" and (outcome == "ok" or "ALLOCATED" in stdout):
        problems.append(f"{op.extra.get('allocated_mb')} MB were allocated past the limit")
    elif kind in ("runaway_loop", "ignore_sigterm") and outcome != "timeout":
        problems.append(f"not stopped at its time limit (outcome {outcome})")
    elif kind == "output_flood" and outcome != "output_limit":
        problems.append(f"the output was not cut off (outcome {outcome})")
    elif kind == "network":
        if "CONNECTED" in stdout or metadata.get("network_reached_host"):
            problems.append("a connection left the sandbox")
        elif stdout.count("FAILED") < 2:
            problems.append(f"the connection attempts did not run ({outcome}: {stdout!r})")
    elif kind == "killed_mid_command":
        if not r.get("killed_from_outside"):
            error = f": {r['error']}" if r.get("error") else ""
            problems.append(
                "the fault was not planted: the command's processes were not found before it "
                f"returned ({outcome} after {float(r.get('seconds', 0.0)):.1f}s{error})"
            )
        if outcome == "ok" or "SURVIVED" in stdout:
            problems.append("the command survived the kill")
    if kind == "ignore_sigterm":
        started = records[0]
        if not (started.get("outcome") == "ok" and started.get("as_expected")):
            problems.append("the background process that ignores SIGTERM did not start")
    if problems:
        return False, "; ".join(problems)
    how = {
        "fork_bomb": f"stopped ({outcome}), nothing left",
        "memory_hog": f"killed at the memory limit ({outcome}, rc {r.get('returncode')})",
        "runaway_loop": f"killed at its {timeout:.0f}s time limit",
        "output_flood": "cut off at the output limit",
        "ignore_sigterm": f"SIGTERM ignored, killed at its {timeout:.0f}s time limit",
        "network": "both connections refused inside the sandbox",
        "killed_mid_command": f"killed from outside mid-command ({outcome}), sample went on",
    }[kind]
    return True, how


def judge(state_metadata: dict[str, Any], records: list[dict[str, Any]]) -> Score:
    """The Score of one sample from its workload and its recorded operations."""
    kind = state_metadata["kind"]
    ops = ops_from_metadata(state_metadata)
    fault = kind in FAULTS
    latencies = [float(r.get("seconds", 0.0)) for r in records]
    meta: dict[str, Any] = {
        "kind": kind,
        "latencies": latencies,
        "starts": [float(r.get("started", 0.0)) for r in records],
        "outcomes": [str(r.get("outcome")) for r in records],
    }
    deviation = _deviation(ops, records)
    completed = contained = False
    failure: str | None
    if deviation is not None:
        failure = f"agent: {deviation}"
    elif fault:
        contained, why = _fault_verdict(kind, ops, records, state_metadata)
        failure = f"{kind} contained: {why}" if contained else f"{kind} NOT contained: {why}"
    else:
        bad = [
            f"call {i} ({r.get('tool')}): {r.get('outcome')}"
            + ("" if r.get("as_expected") else ", output not as expected")
            for i, r in enumerate(records[: len(ops)])
            if not (r.get("outcome") == "ok" and r.get("as_expected"))
        ]
        completed = not bad
        failure = None if completed else "well-behaved work failed: " + "; ".join(bad)
    meta["failure"] = failure
    ok = completed or contained
    return Score(
        value={
            "ok": int(ok),
            "completed": int(completed),
            "contained": int(contained),
            "fault": int(fault),
            "ops": len(records),
        },
        answer="completed" if completed else ("contained" if contained else "failed"),
        explanation=failure or f"{kind}: all {len(records)} operations as expected",
        metadata=meta,
    )


@scorer(metrics=[])  # metrics are given by the task (they need the run's registry)
def stress_scorer() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:  # noqa: ARG001
        return judge(state.metadata, list(store().get(OPS_KEY, [])))

    return score


def _values(s: SampleScore) -> dict[str, Any]:
    value = s.score.value
    return value if isinstance(value, dict) else {}


def summarize(scores: list[SampleScore]) -> dict[str, float]:
    """The run's metrics from its sample scores (see the module docstring)."""
    values = [_values(s) for s in scores]
    metas = [s.score.metadata or {} for s in scores]
    faults = [v for v in values if v.get("fault")]
    good = [v for v in values if not v.get("fault")]
    out: dict[str, float] = {
        "samples": float(len(values)),
        "ok_rate": sum(v.get("ok", 0) for v in values) / len(values) if values else math.nan,
        "completed": float(sum(v.get("completed", 0) for v in good)),
        "completed_rate": (
            sum(v.get("completed", 0) for v in good) / len(good) if good else math.nan
        ),
        "faults": float(len(faults)),
        "contained": float(sum(v.get("contained", 0) for v in faults)),
        "contained_rate": (
            sum(v.get("contained", 0) for v in faults) / len(faults) if faults else math.nan
        ),
    }
    for kind in FAULTS:
        of_kind = [v for v, m in zip(values, metas, strict=True) if m.get("kind") == kind]
        if of_kind:
            out[f"contained_{kind}"] = sum(v.get("contained", 0) for v in of_kind) / len(of_kind)
    starts, ends, good_latencies = [], [], []
    for v, m in zip(values, metas, strict=True):
        for start, seconds in zip(m.get("starts", []), m.get("latencies", []), strict=False):
            starts.append(start)
            ends.append(start + seconds)
            if not v.get("fault"):
                good_latencies.append(seconds * 1000)
    out["ops"] = float(len(starts))
    span = (max(ends) - min(starts)) if starts else 0.0
    out["ops_per_s"] = len(starts) / span if span > 0 else math.nan
    out["latency_p50_ms"] = percentile(good_latencies, 0.50)
    out["latency_p99_ms"] = percentile(good_latencies, 0.99)
    return out


@metric
def stress_summary() -> Metric:
    """Samples completed, faults contained (overall and by kind), ok rate, operations/s, p50/p99
    latency (one log entry per key)."""

    def m(scores: list[SampleScore]) -> dict[str, float]:
        return summarize(scores)

    return m


_MEASURED: dict[int, dict[str, int]] = {}  # id(footprint) -> its leak counts, measured once


@metric
def host_leaks(run_tag: str) -> Metric:
    """Leaks after the run, counted from the host: each scored sample's footprint is measured
    once, the first time the metric sees its score (inspect reports a sample's score once its
    sandbox has been cleaned up), and what it left is then killed so that a leaky sandbox (e.g.
    local) still leaves the host clean; zombie children of the harness process are counted at
    every call."""

    def m(scores: list[SampleScore]) -> dict[str, float]:
        footprints = registry_for(run_tag).of_samples([str(s.sample_id) for s in scores])
        for fp in footprints:
            if id(fp) not in _MEASURED:
                _MEASURED[id(fp)] = count_leaks_settled([fp])
                kill_tagged(fp.tag)
        totals = dict.fromkeys(LEAK_KINDS, 0)
        for fp in footprints:
            for key, count in _MEASURED[id(fp)].items():
                totals[key] += count
        totals["zombies"] += zombie_children()
        result = {f"leaked_{k}": float(totals[k]) for k in LEAK_KINDS}
        result["leaked_total"] = float(sum(totals.values()))
        if not all(fp.containers_measured for fp in footprints):
            result["leaked_containers"] = math.nan  # not measured: never a 0 we did not count
        return result

    return m
