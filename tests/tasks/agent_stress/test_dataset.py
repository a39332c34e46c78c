"""The generated workloads: kinds cycled, calls in the prompt, content digests, bad kinds."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from tasks.agent_stress.config import workload_kinds as _kinds
from tasks.agent_stress.dataset import (
    FAULTS,
    KINDS,
    WELL_BEHAVED,
    Limits,
    ops_from_metadata,
    stress_dataset,
    workload,
)
from tasks.agent_stress.solver import scripted_agent


def test_kinds_cycle_and_ids() -> None:
    samples = stress_dataset(23, KINDS, Limits())
    assert [s.metadata["kind"] for s in samples[:10]] == list(KINDS)
    assert samples[10].metadata["kind"] == KINDS[0] and len(samples) == 23
    assert len({s.id for s in samples}) == 23
    assert all(s.metadata["fault"] == (s.metadata["kind"] in FAULTS) for s in samples)


def test_prompt_carries_exactly_the_calls() -> None:
    for sample in stress_dataset(len(KINDS), KINDS, Limits()):
        ops = ops_from_metadata(sample.metadata)
        block = sample.input.split("<calls>")[1].split("</calls>")[0]  # type: ignore[union-attr]
        assert json.loads(block) == [op.call() for op in ops]
        assert sample.metadata["n_ops"] == len(ops)


def test_every_fault_is_followed_by_a_liveness_check() -> None:
    for kind in FAULTS:
        ops = workload(kind, Limits(), random.Random(0))
        assert sum(op.expect == "fault" for op in ops) == 1, kind
        assert ops[-1].arguments["cmd"] == "echo alive" and ops[-1].stdout_has == "alive"
    for kind in WELL_BEHAVED:
        assert all(op.expect != "fault" for op in workload(kind, Limits(), random.Random(0)))


def test_faults_are_sized_against_the_limits() -> None:
    limits = Limits(memory_mb=300, fault_timeout_s=5)
    hog = workload("memory_hog", limits, random.Random(0))[0]
    assert hog.extra["allocated_mb"] == 600 and "600 * 1024 * 1024" in hog.arguments["cmd"]
    loop = workload("runaway_loop", limits, random.Random(0))[0]
    assert loop.arguments["timeout"] == 5 and loop.check_leftovers


def test_file_io_digests_match_contents() -> None:
    ops = workload("file_io", Limits(), random.Random(7))
    written = {
        op.arguments["path"]: op.arguments["content"] for op in ops if op.tool == "write_file"
    }
    reads = [op for op in ops if op.tool == "read_file"]
    assert len(reads) == len(written) == 6
    for op in reads:
        assert op.sha256 == hashlib.sha256(written[op.arguments["path"]].encode()).hexdigest()
    # seeded: the same seed gives the same data
    again = workload("file_io", Limits(), random.Random(7))
    assert [o.arguments for o in again] == [o.arguments for o in ops]


def test_bad_inputs_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown workload kind"):
        stress_dataset(3, ["build_test", "nope"], Limits())
    with pytest.raises(ValueError, match="positive"):
        stress_dataset(0, KINDS, Limits())
    with pytest.raises(ValueError, match="unknown kind"):
        _kinds("build_test,forkbomb")
    assert _kinds("faults") == FAULTS and _kinds("all") == KINDS
    assert _kinds("network, memory_hog") == ("network", "memory_hog")


def test_scripted_agent_makes_the_calls_in_order_then_stops() -> None:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    sample = stress_dataset(1, ["network"], Limits())[0]
    calls = [op.call() for op in ops_from_metadata(sample.metadata)]
    messages: list = [ChatMessageUser(content=sample.input)]  # type: ignore[arg-type]
    for i, call in enumerate(calls):
        reply = scripted_agent(messages)
        assert isinstance(reply, dict) and reply["tool_calls"] == [call]
        messages += [
            ChatMessageAssistant(
                content="",
                tool_calls=[
                    ToolCall(id=str(i), function=call["function"], arguments=call["arguments"])
                ],
            ),  # fmt: skip
            ChatMessageTool(content="x", tool_call_id=str(i)),
        ]
    assert scripted_agent(messages) == "DONE"
    with pytest.raises(ValueError, match="no <calls>"):
        scripted_agent([ChatMessageUser(content="hello")])
