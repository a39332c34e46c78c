"""Two Ctrl-Cs during a `harness eval ... sandbox=docker` run: the process ends with 130 and one
line (no exception group traceback), and none of its sample containers is left behind (issue 31
item 6). A real harness subprocess, real SIGINTs, real containers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[3]


def _own_containers(pid: int) -> list[dict]:
    """The sandbox containers whose owner label names process `pid`."""
    from sandboxes.docker import LABEL_OWNER, docker_client

    found = docker_client().api.containers(
        all=True, filters={"label": ["org.icml26-harness.kind=sandbox"]}
    )
    return [c for c in found if f":{pid}:" in (c.get("Labels") or {}).get(LABEL_OWNER, "")]


def test_second_ctrl_c_removes_the_containers_in_one_line(tmp_path, docker_ok: None) -> None:
    command = [sys.executable, "-m", "harness.cli", "eval", "task=agent_stress"]
    command += ["sandbox=docker", "concurrency=4", f"log_dir={tmp_path}", "display=plain"]
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["PYTHONPATH"] = str(PROJECT) + os.pathsep + env.get("PYTHONPATH", "")
    process = subprocess.Popen(
        command, cwd=PROJECT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 240
    while not _own_containers(process.pid) and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)
    assert _own_containers(process.pid), "the run started no sample container"
    time.sleep(1.0)
    interrupted = time.monotonic()
    process.send_signal(signal.SIGINT)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"no stop within 60 s of two Ctrl-Cs:\n{out[-2000:]}\n{err[-2000:]}")
    stopped_in = time.monotonic() - interrupted
    assert process.returncode == 130, (out[-2000:], err[-3000:])
    assert "Traceback" not in err and "ExceptionGroup" not in err, err[-3000:]
    assert "Traceback" not in out and "ExceptionGroup" not in out, out[-3000:]
    [line] = [x for x in err.splitlines() if x.startswith("interrupted")]
    assert "re-run the same command to resume" in line
    assert stopped_in < 20, stopped_in
    left = _own_containers(process.pid)
    assert left == [], f"{len(left)} sample container(s) left behind: {[c['Names'] for c in left]}"
