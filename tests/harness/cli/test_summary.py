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
            TaskSummary(
                "dispat",
                "vllm/smollm2-135m-instruct",
                "success",
                "30/30",
                dispat,
                LOG,
                scored={f"dispat_scorer/{k}": v for k, v in dispat.items()},  # one scorer
            ),
            TaskSummary(
                "correct",
                "vllm/smollm2-135m-instruct",
                "error",
                "3/8",
                correct,
                LOG,
                error="RuntimeError: the server went away",
                scored=correct,  # two scorers: the keys carry the score names already
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
    assert "AUROC 0.963 (KNN" in dispat and "kVcDMgdf" in dispat and "success" in dispat
    [correct] = [line for line in lines if "3/8" in line]
    assert " Step accuracy 0.109 " in correct and "error" in correct
    assert "RuntimeError: the server went away" in text
    assert "aupr" not in text  # only the headline


def test_wide_shows_every_metric_and_the_full_log_name():
    text = _render(wide=True, width=1000)  # --wide is for wide terminals
    assert "KNN/aupr=" in text and "localisation/step_within_19=" in text
    assert "2026-11-30T23-25-33-00-00_dispat_kVcDMgdfUovi4ectntdkrq.eval" in text


def test_headline_falls_back_to_the_first_metric_and_short_log_names():
    assert headline("no_such_task", {"m/accuracy": 0.5}) == "m/accuracy 0.5"
    assert headline("dispat", {}) == "—"
    assert short_log(LOG) == "kVcDMgdf"


def test_dispat_headline_is_the_best_method_by_mean_over_datasets_not_the_largest_cell():
    # issue 31 item 9: "AUROC 1 (IForest, best of 20)" was one dataset x method cell
    scored = {
        "dispat_scorer/wbc/IForest/auroc": 1.0,
        "dispat_scorer/wine/IForest/auroc": 0.6,
        "dispat_scorer/wbc/KNN/auroc": 0.9,
        "dispat_scorer/wine/KNN/auroc": 0.88,
        "dispat_scorer/IForest/auroc": 0.8,
        "dispat_scorer/KNN/auroc": 0.89,
    }
    metrics = {k.split("/", 1)[1]: v for k, v in scored.items()}
    text = headline("dispat", metrics, scored)
    assert text.startswith("AUROC 0.89 (KNN, best of 2 methods"), text


def test_an_all_nan_headline_says_undefined_and_why():
    nan = float("nan")
    scored = {f"detection/{m}/auroc": nan for m in ("nci", "fdbd", "perplexity")}
    text = headline("ood_hallucination", {k.split("/", 1)[1]: v for k, v in scored.items()}, scored)
    assert "undefined" in text and "both classes" in text and "nan" not in text, text


def test_a_long_headline_keeps_its_value_at_80_columns():
    # issue 31 item 8: omniverifier's "Judgment accuracy (macro over sub…" lost its value
    scored = {"verification_scorer/macro_accuracy": 0.6431, "verification_scorer/accuracy": 0.6}
    outcome = EvalOutcome(
        True,
        [
            TaskSummary(
                "omniverifier temperature=0.7",  # a grid cell's name
                "vllm/smollm2-135m-instruct",
                "success",
                "3200/3200",
                {k.split("/", 1)[1]: v for k, v in scored.items()},
                LOG,
                scored=scored,
            )
        ],
        "/somewhere/logs/run-all",
    )
    console = Console(width=80, record=True, force_terminal=False)
    print_summary(console, outcome, 12.0)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "0.6431" in text and "3200/3200" in text and "macro_accuracy" not in text
    for header in ("samples", "status", "headline"):
        assert header in text  # never "samp…"
