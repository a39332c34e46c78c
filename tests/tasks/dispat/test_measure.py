"""The grid summary helpers (paired differences, ADBench mean ranks, CSV round trip)."""

from __future__ import annotations

import csv
import math

import pytest
from scipy import stats

from tasks.dispat.measure import main, mean_ranks, paired_difference, read_csvs

FIELDS = ["dataset", "seed", "method", "auroc", "aupr", "f1", "error"]


def _row(ds, seed, method, auroc, error=""):
    return {
        "dataset": ds,
        "seed": seed,
        "method": method,
        "auroc": auroc,
        "aupr": auroc,
        "f1": "",
        "error": error,
    }


def test_paired_difference_hand_computed():
    rows = [
        _row("a", 0, "DiSPaT", 0.9),
        _row("a", 0, "AnoLLM", 0.8),
        _row("a", 1, "DiSPaT", 0.7),
        _row("a", 1, "AnoLLM", 0.8),
        _row("b", 0, "DiSPaT", 0.6),
        _row("b", 0, "AnoLLM", 0.6),
        _row("b", 1, "DiSPaT", "", error="boom"),
        _row("b", 1, "AnoLLM", 0.5),  # unpaired: dropped
    ]
    d = paired_difference(rows, "DiSPaT", "AnoLLM")
    diffs = [0.1, -0.1, 0.0]
    half = stats.t.ppf(0.975, 2) * stats.tstd(diffs) / math.sqrt(3)
    assert d["n"] == 3 and (d["wins"], d["ties"], d["losses"]) == (1, 1, 1)
    assert d["mean"] == pytest.approx(0.0, abs=1e-12)
    assert d["lo"] == pytest.approx(-half) and d["hi"] == pytest.approx(half)


def test_paired_difference_no_common_split_is_empty():
    d = paired_difference(
        [_row("a", 0, "DiSPaT", 0.9), _row("a", 1, "AnoLLM", 0.8)], "DiSPaT", "AnoLLM"
    )
    assert d["n"] == 0 and math.isnan(d["mean"])


def test_mean_ranks_ties_averaged_and_incomplete_dataset_skipped():
    rows = [
        _row("a", 0, "X", 0.9),
        _row("a", 0, "Y", 0.8),
        _row("a", 0, "Z", 0.8),
        _row("b", 0, "X", 0.5),
        _row("b", 1, "X", 0.7),
        _row("b", 0, "Y", 0.7),
        _row("b", 0, "Z", 0.9),
        _row("c", 0, "X", 0.9),
        _row("c", 0, "Y", "", error="inf"),
        _row("c", 0, "Z", 0.1),
    ]
    # a: X 1, Y 2.5, Z 2.5; b (X mean 0.6): Z 1, Y 2, X 3; c skipped (Y failed).
    assert mean_ranks(rows, ["X", "Y", "Z"]) == {"X": 2.0, "Y": 2.25, "Z": 1.75}


def test_from_csv_merges_files_and_prints_tables(tmp_path, capsys):
    paths = []
    for seed, (dis, ano) in enumerate([(0.9, 0.8), (0.7, 0.6)]):
        path = tmp_path / f"grid_seed{seed}.csv"
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=FIELDS)
            w.writeheader()
            w.writerow(_row("a", seed, "DiSPaT", dis))
            w.writerow(_row("a", seed, "AnoLLM", ano))
        paths.append(path)
    assert len(read_csvs(paths)) == 4
    assert main(["--from-csv", *map(str, paths)]) == 0
    out = capsys.readouterr().out
    assert "| a | 0.800±0.141 | 0.700±0.141 |" in out
    assert "| DiSPaT − AnoLLM | auroc | 2 | +0.100 [+0.100, +0.100] | 2/0/0 |" in out


def test_grid_records_the_f1_rule_and_refuses_to_mix_rules(tmp_path):
    """Each CSV row names its F1 rule; resuming a grid under the other rule is refused."""
    from methods.dispat import DiSPaTConfig, LMDetectorConfig
    from tasks.dispat.dataset import load_wbc, make_split
    from tasks.dispat.measure import run_grid
    from tasks.dispat.runner import LLMSettings
    from tasks.dispat.scorer import per_split_metrics

    cfg = LMDetectorConfig()
    llm = LLMSettings("default", cfg, DiSPaTConfig(lm=cfg), "standard", "letters")
    out = tmp_path / "grid.csv"
    kw = dict(nonfinite="fail", max_test_rows=40, llm=llm, out_csv=out, log=lambda s: None)
    rows = run_grid(["wbc"], ["HBOS"], [0], f1_threshold="top_k", **kw)
    assert [r["f1_threshold"] for r in rows] == ["top_k"]
    assert read_csvs([out])[0]["f1_threshold"] == "top_k"
    with pytest.raises(ValueError, match="f1_threshold=\\['top_k'\\], not 'percentile'"):
        run_grid(["wbc"], ["HBOS"], [0], f1_threshold="percentile", **kw)
    # The value in the CSV is the metric of the named rule.
    from methods.dispat import PyODDetector

    sp = make_split(load_wbc(), 0, max_test_rows=40)
    scores = PyODDetector("HBOS").fit(sp.X_train).decision_function(sp.X_test)
    want = per_split_metrics(sp.y_test, scores, "top_k")["f1"]
    assert float(rows[0]["f1"]) == pytest.approx(want)
