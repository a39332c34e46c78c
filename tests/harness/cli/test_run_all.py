"""`harness run-all` with only tasks that never call the model: no model server is started
(issue 31 item 4), one Ctrl-C stops it with one line and 130, and the re-run finishes the
interrupted task (issue 31 item 6). A real subprocess on the real agent_stress task."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli.commands import SERVER_START_ROW
from tests._ctrl_c import ctrl_c
from tests.conftest import REPO_ROOT


def _run_all(log_dir: Path, out_dir: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "harness.cli", "run-all", "tasks=agent_stress"]
    command += [f"log_dir={log_dir}", f"out={out_dir}"]
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["COLUMNS"] = "200"
    return subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_run_all_of_a_scripted_task_starts_no_server_stops_on_ctrl_c_and_resumes(tmp_path):
    log_dir, out_dir = tmp_path / "logs", tmp_path / "report"
    process = _run_all(log_dir, out_dir)
    # the task's log appears (within seconds alone; the bound is loose for a loaded machine,
    # where CI once took over 30 s): that no model server started is read from the re-run's
    # table of times below, which has a row for a server start
    deadline = time.monotonic() + 120
    while not list(log_dir.rglob("*.eval")) and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)
    if not list(log_dir.rglob("*.eval")):
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"no task log within 120 s (a model server starting?):\n{out[-2000:]}{err}")
    time.sleep(2.0)
    out, err, _ = ctrl_c(process, what="run-all")
    assert "report written" not in out  # an interrupted run-all writes no report

    rerun = _run_all(log_dir, out_dir)
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, (out[-2000:], err[-2000:])
    assert SERVER_START_ROW not in out, out[-2000:]
    assert "report written" in out
