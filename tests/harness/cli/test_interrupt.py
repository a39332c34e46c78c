"""Ctrl-C stops a run within seconds, says how many samples are saved and how to resume, and
exits 130; a second Ctrl-C stops at once in one line (issue 31 item 6). Real subprocesses and
real SIGINTs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._ctrl_c import ctrl_c
from tests.conftest import REPO_ROOT

FIXTURE = REPO_ROOT / "tests" / "harness" / "fixtures" / "arith_task.py"


def _start(log_dir: Path, *task_args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "harness.cli", "eval", f"task={FIXTURE}@arith", "n=200"]
    # a text reply: `model_arg.reply=1` is read as the int 1, which the scripted model refuses,
    # so every sample failed (a traceback in the output whenever one was printed before the stop)
    command += [*task_args, "model=scripted/x", "model_arg.reply=one", "max_samples=2"]
    command += [f"log_dir={log_dir}", "display=plain"]
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_for_samples(process: subprocess.Popen[str], log_dir: Path, seconds: float) -> None:
    """Until the run is under way (its log exists) and a little longer."""
    deadline = time.monotonic() + 180
    while not list(log_dir.rglob("*.eval")) and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)
    time.sleep(seconds)


@pytest.mark.parametrize(
    "task_args, signals",
    [
        (["delay_s=0.5"], 1),  # samples that can be cancelled
        (["busy_s=2"], 1),  # work in a worker thread that cannot: the grace period ends it
        (["busy_s=2"], 2),  # the second Ctrl-C stops at once
    ],
)
def test_ctrl_c_stops_the_run_and_says_how_to_resume(tmp_path, task_args, signals):
    log_dir = tmp_path / "logs"
    process = _start(log_dir, *task_args)
    _wait_for_samples(process, log_dir, 3.0)
    out, err, line = ctrl_c(process, what="the run", signals=signals)
    assert "finished and saved in" in line
    assert "successfully" not in out + err  # never "Completed all tasks ... successfully"
    assert "(retry" not in out + err  # the interrupted attempt is cancelled, not retried


def _grid(log_dir: Path, calls: Path, n: int) -> subprocess.Popen[str]:
    """A two-cell grid (`grid.delay_s=`) whose model records every question it is asked."""
    command = [sys.executable, "-m", "harness.cli", "eval", f"task={FIXTURE}@arith", f"n={n}"]
    command += ["grid.delay_s=0.4,0.5", "model=scripted/counter", "max_samples=2"]
    command += ["model_arg.responder=tests.harness.fixtures.counting_responder:respond"]
    command += [f"log_dir={log_dir}", "display=plain"]
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["HARNESS_TEST_CALLS_FILE"] = str(calls)
    return subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _asked(calls: Path) -> list[str]:
    return calls.read_text().splitlines() if calls.exists() else []


def test_ctrl_c_stops_a_grid_and_its_rerun_resumes_exactly(tmp_path):
    # issue 31 item 6 on the grid path: before, one Ctrl-C cancelled the running cell, and the
    # grid went on to the next cell
    log_dir, calls, n = tmp_path / "logs", tmp_path / "calls.txt", 30
    process = _grid(log_dir, calls, n)
    deadline = time.monotonic() + 180
    while len(_asked(calls)) < 4 and time.monotonic() < deadline:  # the first cell under way
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)
    out, err, line = ctrl_c(process, what="the grid")
    assert "finished and saved in" in line
    assert "cell 2/2" not in out + err, out[-2000:]  # the grid does not go on to its next cell
    assert len(_asked(calls)) < n, "the first cell finished before the interrupt"

    rerun = _grid(log_dir, calls, n)
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, (out[-2000:], err[-2000:])
    asked = _asked(calls)
    # every question of both cells asked; the saved ones not again (at most the 2 in flight)
    assert len(set(asked)) == n  # the two cells ask the same n questions
    assert len(asked) <= 2 * n + 2, len(asked)


def test_an_interrupt_that_lands_in_a_callback_prints_no_traceback(monkeypatch):
    """The handler's KeyboardInterrupt can land in a callback that cannot raise (seen: the import
    system's module-lock weakref callback under load); Python then reports it as "Exception
    ignored ... Traceback". After a Ctrl-C that report is dropped (the watchdog ends the run);
    before any Ctrl-C, and for other exceptions, it goes to the previous hook as usual."""
    import gc
    import weakref

    from harness.cli.interrupt import Interrupt

    class Thing:
        pass

    def unraisable_from_a_callback(exc: type[BaseException]) -> None:
        def callback(_ref: object) -> None:
            raise exc

        thing = Thing()
        ref = weakref.ref(thing, callback)  # noqa: F841 - kept alive until `thing` dies
        del thing
        gc.collect()

    reported: list[type[BaseException]] = []

    def record(report: object) -> None:
        reported.append(report.exc_type)  # type: ignore[attr-defined]

    monkeypatch.setattr(sys, "unraisablehook", record)
    with Interrupt("/nonexistent", say=lambda line: None) as interrupt:
        unraisable_from_a_callback(KeyboardInterrupt)
        assert reported == [KeyboardInterrupt]  # no Ctrl-C yet: reported
        interrupt.count = 1  # as after the first Ctrl-C
        unraisable_from_a_callback(KeyboardInterrupt)
        assert reported == [KeyboardInterrupt]  # dropped
        unraisable_from_a_callback(ValueError)
        assert reported == [KeyboardInterrupt, ValueError]
        interrupt.count = 0  # leave as a run that ended normally: handlers restored
    assert sys.unraisablehook is record
