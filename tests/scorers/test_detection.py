"""scorers.detection against scikit-learn on random, tied and one-class inputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore, Score
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

from scorers.detection import (
    MetricUndefined,
    aupr,
    auroc,
    bootstrap_ci,
    detection_metrics,
    detection_summary,
    fpr_at_tpr,
)


def _sk_fpr_at_tpr(y: np.ndarray, s: np.ndarray, tpr: float = 0.95) -> float:
    fpr, tprs, _ = roc_curve(y, s, drop_intermediate=False)
    return float(fpr[np.searchsorted(tprs, tpr - 1e-12, side="left")])


def _random_case(rng: np.random.Generator, n: int, tied: bool):
    y = rng.integers(0, 2, n)
    y[0], y[1] = 0, 1  # both classes present
    s = rng.integers(0, 4, n).astype(float) if tied else rng.normal(size=n) + 0.7 * y
    return y, s


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("seed", range(15))
def test_matches_sklearn(seed: int, tied: bool) -> None:
    rng = np.random.default_rng(seed)
    y, s = _random_case(rng, int(rng.integers(2, 300)), tied)
    assert auroc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert aupr(y, s) == pytest.approx(average_precision_score(y, s), abs=1e-12)
    for tpr in (0.5, 0.95, 1.0):
        assert fpr_at_tpr(y, s, tpr) == pytest.approx(_sk_fpr_at_tpr(y, s, tpr), abs=1e-12)


def test_hand_computed() -> None:
    y = [0, 0, 1, 1]
    s = [0.1, 0.4, 0.35, 0.8]
    # pairs (pos, neg): (0.35>0.1) (0.35<0.4) (0.8>0.1) (0.8>0.4) -> 3/4
    assert auroc(y, s) == 0.75
    # ranked 0.8(+) 0.4(-) 0.35(+) 0.1(-): AP = 0.5*1 + 0.5*(2/3)
    assert aupr(y, s) == pytest.approx(0.5 + 1 / 3)
    # TPR 1.0 first reached at threshold 0.35 with one negative above -> FPR 0.5
    assert fpr_at_tpr(y, s, 0.95) == 0.5
    # all tied: AUROC 0.5, AP = prevalence, FPR@95 = 1
    assert auroc([0, 1, 1], [2, 2, 2]) == 0.5
    assert aupr([0, 1, 1], [2, 2, 2]) == pytest.approx(2 / 3)
    assert fpr_at_tpr([0, 1, 1], [2, 2, 2]) == 1.0
    # perfect and inverted
    assert auroc([0, 1], [0, 1]) == 1.0 and auroc([0, 1], [1, 0]) == 0.0
    assert fpr_at_tpr([0, 0, 1, 1], [0, 1, 2, 3]) == 0.0


@pytest.mark.parametrize("fn", [auroc, aupr, fpr_at_tpr])
@pytest.mark.parametrize("labels", [[1, 1, 1], [0, 0], []])
def test_one_class_or_empty_is_nan_with_reason(fn, labels) -> None:
    with pytest.warns(MetricUndefined, match="undefined: (only the|no samples)"):
        v = fn(labels, [0.5] * len(labels))
    assert np.isnan(v)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_scores_rejected(bad) -> None:
    with pytest.raises(ValueError, match="finite.*index 1"):
        auroc([0, 1, 1], [0.1, bad, 0.3])


def test_bad_labels_and_shapes_rejected() -> None:
    with pytest.raises(ValueError, match="0/1 or bool.*index 2"):
        auroc([0, 1, 2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="differ in length"):
        auroc([0, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="numeric"):
        aupr([0, 1], ["a", "b"])
    with pytest.raises(ValueError, match="tpr"):
        fpr_at_tpr([0, 1], [0, 1], tpr=0.0)


def test_bool_labels_accepted() -> None:
    assert auroc(np.array([False, True]), [0.0, 1.0]) == 1.0


def test_bootstrap_ci_brackets_and_is_reproducible() -> None:
    rng = np.random.default_rng(1)
    y, s = _random_case(rng, 200, tied=False)
    ci = bootstrap_ci(auroc, y, s, n_boot=300, seed=3)
    lo, hi = ci
    assert lo < auroc(y, s) < hi and 0.0 <= lo and hi <= 1.0
    assert tuple(bootstrap_ci(auroc, y, s, n_boot=300, seed=3)) == (lo, hi)
    assert tuple(bootstrap_ci(auroc, y, s, n_boot=300, seed=4)) != (lo, hi)
    # percentile interval: check against a direct re-implementation of the same resampling
    r = np.random.default_rng(3)
    vals = []
    for _ in range(300):
        idx = r.integers(0, y.size, y.size)
        vals.append(roc_auc_score(y[idx], s[idx]))
    assert (lo, hi) == pytest.approx(tuple(np.quantile(vals, [0.025, 0.975])))
    assert ci.n_skipped == 0 and ci.n_boot == 300 and not ci.stratified


def test_bootstrap_ci_counts_skipped_one_class_resamples() -> None:
    # one positive in 10: P(resample has no positive) = 0.9**10 ≈ 0.35
    y = np.array([1] + [0] * 9)
    s = np.arange(10.0)
    ci = bootstrap_ci(auroc, y, s, n_boot=400, seed=0)
    assert 80 < ci.n_skipped < 200
    strat = bootstrap_ci(auroc, y, s, n_boot=400, seed=0, stratified=True)
    assert strat.n_skipped == 0 and strat.stratified


def test_bootstrap_ci_one_class_input() -> None:
    with pytest.warns(MetricUndefined, match="only the positive class"):
        ci = bootstrap_ci(auroc, [1, 1], [0.2, 0.3], n_boot=10)
    assert np.isnan(ci.lo) and np.isnan(ci.hi) and ci.n_skipped == 10


def test_detection_summary_keys() -> None:
    out = detection_summary([0, 1, 0, 1, 1], [0.1, 0.9, 0.3, 0.2, 0.8], n_boot=50)
    assert out["auroc"] == pytest.approx(roc_auc_score([0, 1, 0, 1, 1], [0.1, 0.9, 0.3, 0.2, 0.8]))
    assert {"aupr_lo", "aupr_hi", "fpr95", "fpr95_lo", "n", "n_pos", "boot_skipped"} <= set(out)
    assert out["n"] == 5 and out["n_pos"] == 3


def _ss(i: int, value) -> SampleScore:
    return SampleScore(score=Score(value=value), sample_id=i)


def test_detection_metric_over_score_dicts() -> None:
    rng = np.random.default_rng(0)
    y, s = _random_case(rng, 60, tied=False)
    scores = [
        _ss(i, {"label": int(y[i]), "det": float(s[i]), "correct": 1 - int(y[i])})
        for i in range(60)
    ]
    # a scored failure: no detector score -> left out and counted
    scores.append(_ss(60, {"label": 1, "det": None, "correct": 0}))
    out = detection_metrics(["det"], label_key="label", accuracy_key="correct", n_boot=50)(scores)
    assert out["det/auroc"] == pytest.approx(roc_auc_score(y, s))
    assert out["det/aupr"] == pytest.approx(average_precision_score(y, s))
    assert out["det/n_missing"] == 1.0
    assert out["accuracy"] == pytest.approx(np.mean([1 - v for v in y] + [0]))
    assert out["det/auroc_lo"] < out["det/auroc"] < out["det/auroc_hi"]


def test_detection_metric_one_class_is_nan_not_crash() -> None:
    scores = [_ss(i, {"label": 0, "det": float(i)}) for i in range(5)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = detection_metrics(["det"], n_boot=20)(scores)
    assert np.isnan(out["det/auroc"]) and np.isnan(out["det/auroc_lo"])
    assert any(issubclass(w.category, MetricUndefined) for w in caught)


def test_detection_metric_rejects_non_dict_values() -> None:
    with pytest.raises(ValueError, match="dict score values"):
        detection_metrics(["det"], n_boot=5)([_ss(0, 1.0)])
