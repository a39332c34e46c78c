"""Headlines that do not mislead (issue 31, item 9): methods ranked by their mean over datasets
and counted as methods, an all-NaN headline said to be undefined and why, display names always.

`reports.headline_text` is the one function the report's summary and `harness eval`'s terminal
summary share; it reads the logged results ("<score name>/<metric>" keys, as in the log).
"""

from __future__ import annotations

import math
import re

import reports

NAN = math.nan


def test_dispat_ranks_methods_by_their_mean_over_datasets_not_by_the_largest_cell():
    metrics = {
        # one dataset where IForest is perfect: the largest single cell
        "anomaly_scores/wbc/IForest/auroc": 1.0,
        "anomaly_scores/glass/IForest/auroc": 0.5,
        "anomaly_scores/wbc/KNN/auroc": 0.9,
        "anomaly_scores/glass/KNN/auroc": 0.8,
        "anomaly_scores/wbc/LOF/auroc": NAN,
        "anomaly_scores/glass/LOF/auroc": NAN,
        # the scorer's means over datasets
        "anomaly_scores/IForest/auroc": 0.75,
        "anomaly_scores/KNN/auroc": 0.85,
        "anomaly_scores/LOF/auroc": NAN,
        "anomaly_scores/KNN/auroc_lo": 0.6,
        "anomaly_scores/KNN/n_datasets": 2.0,
    }
    text = reports.headline_text("dispat", metrics)
    assert text == "AUROC 0.85 (KNN, best of 3 methods by mean over datasets; 1 undefined)"
    assert "best of 6" not in text and "IForest" not in text


def test_the_mean_over_datasets_is_computed_when_only_per_dataset_cells_are_logged():
    metrics = {
        "anomaly_scores/wbc/IForest/auroc": 1.0,
        "anomaly_scores/glass/IForest/auroc": 0.5,
        "anomaly_scores/wbc/KNN/auroc": 0.9,
        "anomaly_scores/glass/KNN/auroc": 0.8,
    }
    assert reports.headline_text("dispat", metrics) == (
        "AUROC 0.85 (KNN, best of 2 methods by mean over datasets)"
    )


def test_all_nan_says_undefined_and_why():
    metrics = {f"hallucination_detection/{d}/auroc": NAN for d in ("nci", "fdbd@5", "msp")}
    metrics["hallucination_detection/accuracy"] = 0.0
    text = reports.headline_text("ood_hallucination", metrics)
    assert "nan" not in text.lower()
    assert re.fullmatch(r"AUROC undefined \(.+\)", text), text
    assert "3 methods" in text and "both classes" in text


def test_a_grid_cell_and_a_namespaced_task_use_the_display_name():
    metrics = {"verification_scorer/macro_accuracy": 0.625, "verification_scorer/format": 1.0}
    for task in ("omniverifier", "icml26_harness/omniverifier", "omniverifier temperature=0.7"):
        assert (
            reports.headline_text(task, metrics) == "Judgment accuracy (macro over subtasks) 0.625"
        )


def test_the_report_summary_ranks_methods_and_says_undefined(fourteen_report):
    md = fourteen_report.markdown.read_text()
    summary = md[md.index("## Summary") : md.index("\n## ", md.index("## Summary") + 3)]
    [ood] = [line for line in summary.splitlines() if line.startswith("| ood_hallucination |")]
    assert "undefined (" in ood and "nan" not in ood.lower()
    [dispat] = [line for line in summary.splitlines() if line.startswith("| dispat |")]
    # the methods in rank order, best first, the count said as methods
    values = [float(v) for v in re.findall(r"\b[A-Za-z]+\*{0,2} (\d+\.\d)%", dispat)]
    assert len(values) == 10 and values == sorted(values, reverse=True), dispat
    assert "best of 10 methods" in dispat


def test_headline_of_a_log_keys_every_metric_by_its_scorer(run_all_logs):
    """The terminal summary's entry point: a log's header in, the same line out (a one-scorer
    log's `wbc/KNN/auroc` is a dataset cell, never read as scorer `wbc`)."""
    from inspect_ai.log import read_eval_log

    _, paths = run_all_logs
    text = reports.headline_of_log(read_eval_log(str(paths["dispat"]), header_only=True))
    assert text.startswith("AUROC 1 (") and "more tied, best of 10 methods" in text, text
    ood = reports.headline_of_log(read_eval_log(str(paths["ood"]), header_only=True))
    assert ood.startswith("AUROC ") and "best of 8 methods)" in ood, ood


def test_the_summary_shows_the_run_written_last_when_both_stamps_tie():
    """Two runs of one model and method started and ended inside one second (inspect stamps
    both to the second): the summary shows the one whose log was written last, as the runs'
    selection does, never the one the random log name happens to sort first (this test's
    report fixture picked either, at random, before)."""
    from types import SimpleNamespace

    from reports._leaderboard import Row
    from reports._runs import Run
    from reports._summary import _entry

    def row(path: str, modified_ns: int, smoke: bool) -> Row:
        run = Run(path=path, task="t", model="m", model_roles={}, task_args={},
                  status="success", created="2026-12-03T00:02:08+00:00", eval_id=path,
                  total_samples=2, completed_samples=2, completed="2026-12-03T00:02:08+00:00",
                  modified_ns=modified_ns)  # fmt: skip
        r = Row(run=run, model="m", method="", settings={}, scorer=None, scored=2)
        r.smoke = smoke
        return r

    board = SimpleNamespace(headline=None, reference=None)
    earlier, later = row("z_first.eval", 1, False), row("a_second.eval", 2, True)  # marked
    assert _entry(board, [earlier, later])["smoke"] is True
    assert _entry(board, [later, earlier])["smoke"] is True
