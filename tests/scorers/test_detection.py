"""scorers.detection: the per-detector inspect metric over score dicts (kernels: test_stats)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore, Score
from sklearn.metrics import average_precision_score, roc_auc_score

from scorers.detection import detection_metrics
from scorers.stats import MetricUndefined, detection_interval


def _random_case(rng: np.random.Generator, n: int):
    y = rng.integers(0, 2, n)
    y[0], y[1] = 0, 1  # both classes present
    return y, rng.normal(size=n) + 0.7 * y


def _ss(i: int, value) -> SampleScore:
    return SampleScore(score=Score(value=value), sample_id=i)


def test_detection_metric_over_score_dicts() -> None:
    rng = np.random.default_rng(0)
    y, s = _random_case(rng, 60)
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
    # The bounds are the core's detection_interval on the kept samples (what the report uses).
    ci = detection_interval("aupr", y, s, n_boot=50, seed=0)
    assert (out["det/aupr_lo"], out["det/aupr_hi"]) == (ci.low, ci.high)


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
