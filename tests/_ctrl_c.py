"""Ctrl-C a harness subprocess and check how it ends (shared by the interrupt tests of the CLI,
grids, run-all and the docker sandbox): exit 130 within `within_s` seconds, no traceback or
exception group, and one `interrupted …` line that says how to resume."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest


def ctrl_c(
    process: subprocess.Popen[str],
    *,
    what: str,
    signals: int = 1,
    gap_s: float = 0.5,
    within_s: float = 12.0,
) -> tuple[str, str, str]:
    """Send `signals` SIGINTs `gap_s` apart; return (stdout, stderr, the `interrupted` line)."""
    interrupted = time.monotonic()
    for index in range(signals):
        if index:
            time.sleep(gap_s)
        process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"{what} did not stop within 30 s of Ctrl-C:\n{out[-2000:]}\n{err[-2000:]}")
    stopped_in = time.monotonic() - interrupted
    assert process.returncode == 130, (out[-2000:], err[-3000:])
    assert stopped_in < within_s, stopped_in
    both = out + err
    assert "Traceback" not in both and "ExceptionGroup" not in both, both[-3000:]
    [line] = [x for x in err.splitlines() if x.startswith("interrupted")]
    assert "re-run the same command to resume" in line, line
    return out, err, line
