"""The recorder's outside kill (killed_mid_command), on a real host process."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from typing import Any

import pytest

from tasks.agent_stress import solver
from tasks.agent_stress.dataset import TAG_ENV, Op
from tasks.agent_stress.leaks import kill_tagged, tagged_processes


def _kill_op(cmd: str) -> Op:
    return Op("bash", {"cmd": cmd, "timeout": 30}, expect="fault", kill_from_outside=True)


async def _run_tagged(cmd: str, op_tag: str) -> tuple[int, str, str, dict[str, Any]]:
    process = await asyncio.create_subprocess_exec(
        "sh", "-c", cmd, env={**os.environ, TAG_ENV: op_tag},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    return process.returncode or 0, out.decode(), err.decode(), {}


def test_outside_kill_counted_when_the_call_returns_before_the_killer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kill makes the call return; the killing thread's result reaches the loop later (here
    0.5 s later, as under load). The kill must still be counted, not cancelled and lost."""

    def slow_to_report(prefix: str) -> int:
        killed = kill_tagged(prefix)
        time.sleep(0.5)
        return killed

    monkeypatch.setattr(solver, "kill_tagged", slow_to_report)
    tag = f"as-test-{uuid.uuid4().hex[:8]}"
    cmd = "sleep 30; echo SURVIVED"
    recorder = solver._Recorder(tag, [_kill_op(cmd)], listener_port=0)
    asyncio.run(recorder.run("bash", {"cmd": cmd, "timeout": 30}, lambda t: _run_tagged(cmd, t)))
    [record] = recorder.records
    assert record["killed_from_outside"] >= 1, record
    assert "SURVIVED" not in record["stdout"] and record["seconds"] < 20
    assert tagged_processes(tag) == []


def test_no_kill_counted_for_a_command_that_returns_before_it_is_seen() -> None:
    tag = f"as-test-{uuid.uuid4().hex[:8]}"
    recorder = solver._Recorder(tag, [_kill_op("true")], listener_port=0)

    async def returns_at_once(op_tag: str) -> tuple[int, str, str, dict[str, Any]]:
        return 0, "", "", {}

    asyncio.run(recorder.run("bash", {"cmd": "true", "timeout": 30}, returns_at_once))
    [record] = recorder.records
    assert record["killed_from_outside"] == 0 and record["outcome"] == "ok"
