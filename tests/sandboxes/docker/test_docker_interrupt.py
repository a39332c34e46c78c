"""Two Ctrl-Cs during a `harness eval ... sandbox=docker` run: the process ends with 130 and one
line (no exception group traceback), and none of its sample containers is left behind (issue 31
item 6). A real harness subprocess, real SIGINTs, real containers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._ctrl_c import ctrl_c

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
    ctrl_c(process, what="the docker run", signals=2, gap_s=0.3, within_s=20)
    left = _own_containers(process.pid)
    assert left == [], f"{len(left)} sample container(s) left behind: {[c['Names'] for c in left]}"


def test_no_container_start_begins_once_the_exit_sweep_has() -> None:
    """The exit sweep waits for the starts in flight and refuses new ones: a worker thread that
    reaches the start after the sweep listed the containers would leave its container behind."""
    import threading

    from inspect_ai.util import SandboxUnavailableError

    from sandboxes.docker._sandbox import _InFlight

    starts = _InFlight()
    entered, release, swept = threading.Event(), threading.Event(), []

    def start_in_flight() -> None:
        with starts:
            entered.set()
            release.wait(5)

    worker = threading.Thread(target=start_in_flight)
    worker.start()
    entered.wait(5)
    sweeper = threading.Thread(target=lambda: swept.append(starts.close_and_wait(5.0)))
    sweeper.start()
    sweeper.join(0.3)
    assert sweeper.is_alive(), "the sweep did not wait for the start in flight"
    release.set()
    worker.join(5)
    sweeper.join(5)
    assert swept == [True]
    with pytest.raises(SandboxUnavailableError, match="process is ending"):
        with starts:
            pass
