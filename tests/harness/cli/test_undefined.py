"""Undefined metrics (NaN) are said once: not as one NaN line per metric in inspect's results
panel nor one warning per computation, but in one line at the end naming how many metrics, which
and why (issue 31 item 10). A real `harness eval` subprocess with inspect's plain display."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from harness.cli.undefined import undefined_line
from tests.conftest import REPO_ROOT

FIXTURE = REPO_ROOT / "tests" / "harness" / "fixtures" / "undefined_task.py"


def test_undefined_metrics_are_one_line_at_the_end_not_nan_rows(tmp_path):
    command = [sys.executable, "-m", "harness.cli", "eval", f"task={FIXTURE}@undefined"]
    command += ["model=scripted/x", "model_arg.reply=ok", f"log_dir={tmp_path}", "display=plain"]
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["COLUMNS"] = "100"
    done = subprocess.run(
        command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    nan_rows = [x for x in done.stdout.splitlines() if re.match(r"\s*one_class_\w+\s+nan\b", x)]
    assert nan_rows == [], nan_rows  # inspect's panel: one row per undefined metric
    assert re.search(r"\bmean\s+1\.000", done.stdout), done.stdout[-2000:]  # defined ones stay
    assert "MetricUndefined" not in done.stderr and "warnings.warn" not in done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.startswith("undefined:")]
    # the two metrics (not one per computation of them during the run), which and why
    assert line.startswith("undefined: 2 metrics are NaN"), line
    assert "one_class_auroc" in line and "one_class_aupr" in line, line
    assert "only the negative class is present" in line and "no samples" not in line, line


def test_undefined_line_groups_reasons_without_per_call_counts():
    messages = [
        "AUROC is undefined: no samples; returning NaN",
        "AUROC is undefined: only the negative class is present (1 samples, 0 positives); "
        "returning NaN",
        "AUROC is undefined: only the negative class is present (3 samples, 0 positives); "
        "returning NaN",
        "AUPR is undefined: only the negative class is present (3 samples, 0 positives); "
        "returning NaN",
    ]
    names = [f"s/m{i}" for i in range(7)]
    line = undefined_line(messages, names)
    assert line == (
        "undefined: 7 metrics are NaN (s/m0, s/m1, s/m2, … 4 more): "
        "AUROC, AUPR: only the negative class is present"
    )
    assert undefined_line([], []) is None
    # a NaN without a warning (a task's own metric) is still named
    assert undefined_line([], ["s/x"]) == "undefined: 1 metric is NaN (s/x)"
