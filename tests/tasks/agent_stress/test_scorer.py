"""The verdicts and the metrics, on hand-built operation records."""

from __future__ import annotations

import math
import random
from dataclasses import asdict
from typing import Any

import pytest
from inspect_ai.scorer import SampleScore, Score

from tasks.agent_stress.dataset import Limits, workload
from tasks.agent_stress.scorer import judge, percentile, summarize


def _meta(kind: str) -> dict[str, Any]:
    ops = workload(kind, Limits(), random.Random(0))
    return {"kind": kind, "ops": [asdict(op) for op in ops]}


def _ok(**kw: Any) -> dict[str, Any]:
    return {"outcome": "ok", "as_asked": True, "as_expected": True, "seconds": 0.1,
            "started": 100.0, "stdout": "", **kw}  # fmt: skip


def test_percentile_nearest_rank() -> None:
    assert percentile(list(range(1, 101)), 0.50) == 50
    assert percentile(list(range(1, 101)), 0.99) == 99
    assert percentile([30.0, 10.0, 20.0], 0.50) == 20.0
    assert percentile([30.0, 10.0, 20.0], 0.99) == 30.0
    assert percentile([5.0], 0.99) == 5.0
    assert math.isnan(percentile([], 0.5))


def test_well_behaved_completed_or_failed() -> None:
    meta = _meta("build_test")
    score = judge(meta, [_ok() for _ in range(5)])
    assert score.value["completed"] == 1 and score.value["ok"] == 1  # type: ignore[index]
    assert score.metadata is not None and score.metadata["failure"] is None
    records = [_ok() for _ in range(5)]
    records[3] = _ok(as_expected=False)  # the tests did not pass
    failed = judge(meta, records)
    assert failed.value["completed"] == 0 and failed.answer == "failed"  # type: ignore[index]
    assert "call 3" in failed.metadata["failure"]  # type: ignore[index]


def test_agent_deviation_is_a_scored_failure() -> None:
    meta = _meta("build_test")
    short = judge(meta, [_ok(), _ok()])
    assert "2 of the 5 calls" in short.metadata["failure"]  # type: ignore[index]
    other = judge(meta, [_ok(), _ok(as_asked=False), _ok(), _ok(), _ok()])
    assert "call 1 is not the one asked for" in other.metadata["failure"]  # type: ignore[index]
    assert other.value["ok"] == 0  # type: ignore[index]


@pytest.mark.parametrize(
    ("kind", "fault", "contained"),
    [
        ("runaway_loop", {"outcome": "timeout", "seconds": 4.2, "leftovers": 0}, True),
        ("runaway_loop", {"outcome": "timeout", "seconds": 4.2, "leftovers": 3}, False),
        ("runaway_loop", {"outcome": "exit", "seconds": 1.0, "leftovers": 0}, False),
        ("memory_hog", {"outcome": "exit", "returncode": 137, "leftovers": 0}, True),
        ("memory_hog", {"outcome": "ok", "stdout": "ALLOCATED", "leftovers": 0}, False),
        ("output_flood", {"outcome": "output_limit", "leftovers": 0}, True),
        ("output_flood", {"outcome": "timeout", "leftovers": 0}, False),
        ("fork_bomb", {"outcome": "exit", "seconds": 5.0, "leftovers": 0}, True),
        ("fork_bomb", {"outcome": "timeout", "seconds": 8.0, "leftovers": 200}, False),
        ("network", {"outcome": "ok", "stdout": "FAILED 127.0.0.1 X\nFAILED 1.1.1.1 Y"}, True),
        ("network", {"outcome": "ok", "stdout": "CONNECTED 127.0.0.1\nFAILED 1.1.1.1 Y"}, False),
        ("killed_mid_command", {"outcome": "exit", "killed_from_outside": 2, "leftovers": 0}, True),
        (
            "killed_mid_command",
            {"outcome": "exit", "killed_from_outside": 0, "leftovers": 0},
            False,
        ),
    ],
)
def test_fault_verdicts(kind: str, fault: dict[str, Any], contained: bool) -> None:
    meta = _meta(kind)
    n = len(meta["ops"])
    records = [_ok() for _ in range(n)]
    at = next(i for i, op in enumerate(meta["ops"]) if op["expect"] == "fault")
    records[at] = _ok(**fault)
    score = judge(meta, records)
    assert score.value["contained"] == int(contained), score.explanation  # type: ignore[index]
    assert score.metadata["failure"]  # a contained fault is a scored failure too  # type: ignore[index]
    assert ("NOT contained" in score.explanation) != contained  # type: ignore[operator]


def test_fault_needs_the_sandbox_alive_afterwards() -> None:
    meta = _meta("runaway_loop")
    records = [_ok(outcome="timeout", seconds=4.0, leftovers=0), _ok(outcome="error:JailGoneError")]
    score = judge(meta, records)
    assert score.value["contained"] == 0 and "next command" in score.explanation  # type: ignore[index,operator]


def test_network_reaching_the_host_listener_is_not_contained() -> None:
    meta = {**_meta("network"), "network_reached_host": True}
    records = [_ok(stdout="FAILED 127.0.0.1\nFAILED 1.1.1.1"), _ok()]
    assert judge(meta, records).value["contained"] == 0  # type: ignore[index]


def _sample(value: dict[str, int], kind: str, starts: list[float], lat: list[float]) -> SampleScore:
    score = Score(value=value, metadata={"kind": kind, "starts": starts, "latencies": lat})
    return SampleScore(score=score, sample_id=kind)


def test_summary_hand_computed() -> None:
    scores = [
        _sample(
            {"ok": 1, "completed": 1, "contained": 0, "fault": 0},
            "build_test",
            [100.0, 101.0],
            [0.5, 1.0],
        ),  # fmt: skip
        _sample(
            {"ok": 0, "completed": 0, "contained": 0, "fault": 0}, "file_io", [100.2], [0.3]
        ),  # fmt: skip
        _sample(
            {"ok": 1, "completed": 0, "contained": 1, "fault": 1}, "memory_hog", [100.5], [2.0]
        ),  # fmt: skip
        _sample(
            {"ok": 0, "completed": 0, "contained": 0, "fault": 1}, "network", [101.5], [0.1]
        ),  # fmt: skip
    ]
    s = summarize(scores)
    assert s["samples"] == 4 and s["ok_rate"] == 0.5
    assert s["completed"] == 1 and s["completed_rate"] == 0.5
    assert s["faults"] == 2 and s["contained"] == 1 and s["contained_rate"] == 0.5
    assert s["contained_memory_hog"] == 1.0 and s["contained_network"] == 0.0
    assert "contained_fork_bomb" not in s  # not planted in this run
    assert s["ops"] == 5
    assert s["ops_per_s"] == pytest.approx(5 / (102.5 - 100.0))  # first start 100, last end 102.5
    # latency over the operations of well-behaved samples only: 300, 500, 1000 ms
    assert s["latency_p50_ms"] == pytest.approx(500.0)
    assert s["latency_p99_ms"] == pytest.approx(1000.0)


def test_summary_of_nothing() -> None:
    s = summarize([])
    assert s["samples"] == 0 and math.isnan(s["ok_rate"]) and math.isnan(s["ops_per_s"])


def test_unmeasured_containers_are_nan_never_zero() -> None:
    from tasks.agent_stress.leaks import SampleFootprint, registry_for
    from tasks.agent_stress.scorer import host_leaks

    registry_for("as-test-docker").add(
        "s1", SampleFootprint(sandbox="docker", tag="as-test-docker-s1")
    )
    registry_for("as-test-local").add(
        "s1", SampleFootprint(sandbox="local", tag="as-test-local-s1")
    )
    score = [SampleScore(score=Score(value={}), sample_id="s1")]
    docker = host_leaks("as-test-docker")(score)
    local = host_leaks("as-test-local")(score)
    assert math.isnan(docker["leaked_containers"]) and local["leaked_containers"] == 0  # type: ignore[index]
    assert local["leaked_total"] == 0  # type: ignore[index]
