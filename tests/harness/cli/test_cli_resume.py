"""`harness eval` killed with SIGKILL halfway, then re-run: every sample is scored exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from inspect_ai.log import list_eval_logs, read_eval_log

from tests.conftest import REPO_ROOT

FIXTURE = REPO_ROOT / "tests" / "harness" / "fixtures" / "arith_task.py"
N = 24


def _command(log_dir: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "harness.cli",
        "eval",
        f"task={FIXTURE}@arith",
        "model=scripted/counter",
        "model_arg.responder=tests.harness.fixtures.counting_responder:respond",
        f"n={N}",
        "delay_s=0.4",
        "max_samples=2",
        f"log_dir={log_dir}",
        "display=none",
    ]


def _env(calls: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["HARNESS_TEST_CALLS_FILE"] = str(calls)
    return env


def _calls(calls: Path) -> list[str]:
    return calls.read_text().splitlines() if calls.exists() else []


def test_sigkill_then_rerun_scores_every_sample_once(tmp_path):
    log_dir, calls = tmp_path / "logs", tmp_path / "calls.txt"
    first = subprocess.Popen(
        _command(log_dir),
        env=_env(calls),
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while len(_calls(calls)) < N // 3 and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.2)
    # Let the flushed samples reach the log, then kill the whole process group hard.
    time.sleep(2.0)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    done_before = len(_calls(calls))
    assert N // 3 <= done_before < N, f"kill should land halfway, got {done_before} calls"

    second = subprocess.run(
        _command(log_dir),
        env=_env(calls),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]

    questions = _calls(calls)
    # Samples finished before the kill are reused; at most the in-flight ones are asked again.
    assert len(set(questions)) == N
    assert len(questions) - N <= 2, f"{len(questions) - N} samples were re-asked (max_samples=2)"
    logs = [read_eval_log(info.name) for info in list_eval_logs(str(log_dir))]
    finished = [log for log in logs if log.status == "success"]
    assert len(finished) == 1
    final = finished[0]
    ids = [sample.id for sample in final.samples]
    assert sorted(ids) == list(range(1, N + 1)), "each sample appears exactly once"
    assert all(sample.scores["includes"].value == "C" for sample in final.samples)
    # The run records what ran it: model spec, back-end, code revision; the task its data.
    assert final.eval.metadata["harness_model_spec"] == "scripted/counter"
    assert "commit" in final.eval.metadata["harness_git"]
    assert final.eval.task_version == 1 and final.eval.metadata is not None
