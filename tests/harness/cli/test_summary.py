"""The run's closing table: one line per task within 80 columns; --wide shows every metric."""

from __future__ import annotations

from rich.console import Console

from harness.cli.eval import EvalOutcome, TaskSummary
from harness.cli.summary import headline, print_summary, short_log

LOG = "/somewhere/logs/run-all/2026-11-30T23-25-33-00-00_dispat_kVcDMgdfUovi4ectntdkrq.eval"


def _outcome() -> EvalOutcome:
    dispat = {
        f"{m}/{k}": v for m, v in (("KNN", 0.963), ("IForest", 0.951)) for k in ("auroc", "aupr")
    }
    dispat.update({"KNN/auroc_lo": 0.9, "KNN/n_datasets": 1.0})
    correct = {"step/mean": 0.109, "agent/mean": 0.337}
    correct.update({f"localisation/step_within_{i}": 0.1 for i in range(20)})
    return EvalOutcome(
        True,
        [
            TaskSummary("dispat", "vllm/smollm2-135m-instruct", "success", "30/30", dispat, LOG),
            TaskSummary(
                "correct",
                "vllm/smollm2-135m-instruct",
                "error",
                "3/8",
                correct,
                LOG,
                error="RuntimeError: the server went away",
            ),
        ],
        "/somewhere/logs/run-all",
    )


def _render(wide: bool, width: int = 80) -> str:
    console = Console(width=width, record=True, force_terminal=False)
    print_summary(console, _outcome(), 12.0, wide=wide)
    return console.export_text()


def test_the_summary_fits_80_columns_one_line_per_task():
    text = _render(wide=False)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    [dispat] = [line for line in lines if "dispat" in line and "30/30" in line]
    # The schema's headline (AUROC per method): the best method, and how many there were.
    assert "AUROC 0.963 (KNN, best of 2)" in dispat and "kVcDMgdf" in dispat and "success" in dispat
    [correct] = [line for line in lines if "3/8" in line]
    assert "│ Step accuracy 0.109" in correct and "error" in correct
    assert "RuntimeError: the server went away" in text
    assert "aupr" not in text  # only the headline


def test_wide_shows_every_metric_and_the_full_log_name():
    text = _render(wide=True, width=1000)  # --wide is for wide terminals
    assert "KNN/aupr=" in text and "localisation/step_within_19=" in text
    assert "2026-11-30T23-25-33-00-00_dispat_kVcDMgdfUovi4ectntdkrq.eval" in text


def test_headline_falls_back_to_the_first_metric_and_short_log_names():
    assert headline("no_such_task", {"m/stderr": 0.1, "m/accuracy": 0.5}) == "m/accuracy 0.5"
    assert headline("dispat", {}) == "—"
    assert short_log(LOG) == "kVcDMgdf"
