"""Detection-curve kernels (AUROC, AUPR, FPR@TPR) row-wise over resample matrices, and the
validated scalar metrics built on them."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from scipy.stats import rankdata

from scorers.stats._common import (
    MetricUndefined,
    _check_tpr,
    _undefined_reason,
    check_binary_inputs,
)

DetectionMetric = Literal["auroc", "aupr", "fpr95"]
DETECTION_METRICS: tuple[str, ...] = ("auroc", "aupr", "fpr95")


# ------------------------------------------------------------------ detection kernels
# Row-wise over (resamples × n) matrices of labels (0/1 or bool) and scores; a 1-D input is one
# row. One-class rows give nan. The scalar metrics below are these kernels on one row, so a
# point value and its bootstrap draws come from the same arithmetic.


def _rows(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y2, s2 = np.atleast_2d(np.asarray(y) == 1), np.atleast_2d(np.asarray(s, dtype=np.float64))
    if y2.shape != s2.shape:
        raise ValueError(f"labels and scores differ in shape: {y2.shape} vs {s2.shape}")
    return y2, s2


def auroc_rows(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Row-wise AUROC (Mann-Whitney U with average ranks == ``roc_auc_score``, ties ½)."""
    pos, s2 = _rows(y, s)
    n1 = pos.sum(axis=1).astype(np.float64)
    n0 = pos.shape[1] - n1
    ranks = rankdata(s2, method="average", axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = ((ranks * pos).sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)
    auc[(n1 == 0) | (n0 == 0)] = np.nan
    return auc


def _sorted_blocks(pos: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores descending per row (stable, as scikit-learn); cumulative true positives, and for
    each position the index of the last member of its tie block (tied samples cross a threshold
    together)."""
    m, n = pos.shape
    order = np.argsort(-s, axis=1, kind="mergesort")
    s_sorted = np.take_along_axis(s, order, axis=1)
    tps = np.cumsum(np.take_along_axis(pos, order, axis=1), axis=1)
    is_end = np.ones((m, n), dtype=bool)
    is_end[:, :-1] = s_sorted[:, :-1] != s_sorted[:, 1:]
    end_pos = np.where(is_end, np.arange(n), n - 1)
    block_end = np.minimum.accumulate(end_pos[:, ::-1], axis=1)[:, ::-1]
    return tps, block_end, is_end


def aupr_rows(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Row-wise average precision (``average_precision_score``: step-wise, ties grouped).

    Each positive contributes the precision at the end of its tie block.
    """
    pos, s2 = _rows(y, s)
    n = pos.shape[1]
    order = np.argsort(-s2, axis=1, kind="mergesort")
    pos_sorted = np.take_along_axis(pos, order, axis=1)
    tps, block_end, _ = _sorted_blocks(pos, s2)
    precision = tps / np.arange(1, n + 1)
    prec_end = np.take_along_axis(precision, block_end, axis=1)
    n1 = pos.sum(axis=1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = (pos_sorted * prec_end).sum(axis=1) / n1
    ap[(n1 == 0) | (n1 == n)] = np.nan
    return ap


def fpr_at_tpr_rows(y: np.ndarray, s: np.ndarray, tpr: float = 0.95) -> np.ndarray:
    """Row-wise FPR at the first distinct threshold whose TPR reaches ``tpr`` (module doc)."""
    _check_tpr(tpr)
    pos, s2 = _rows(y, s)
    n = pos.shape[1]
    tps, _, is_end = _sorted_blocks(pos, s2)
    n1 = pos.sum(axis=1).astype(np.float64)
    n0 = n - n1
    fps = np.arange(1, n + 1) - tps
    # Only block ends are thresholds; a small tolerance lets 0.95 × 20 count as reached at 19/20.
    with np.errstate(invalid="ignore", divide="ignore"):
        reached = is_end & (tps / n1[:, None] >= tpr - 1e-12)
        first = np.argmax(reached, axis=1)
        out = np.take_along_axis(fps, first[:, None], axis=1)[:, 0] / n0
    out[(n1 == 0) | (n0 == 0)] = np.nan
    return out


def _kernel(metric: str, tpr: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    if metric == "auroc":
        return auroc_rows
    if metric == "aupr":
        return aupr_rows
    if metric == "fpr95":
        return lambda y, s: fpr_at_tpr_rows(y, s, tpr)
    raise ValueError(f"unknown detection metric {metric!r}; expected one of {DETECTION_METRICS}")


def detection_rows(
    metric: DetectionMetric, y: np.ndarray, s: np.ndarray, *, tpr: float = 0.95
) -> np.ndarray:
    """Row-wise ``metric`` (``auroc``, ``aupr`` or ``fpr95`` at ``tpr``) of label/score matrices."""
    return _kernel(metric, tpr)(y, s)


# ------------------------------------------------------------------ validated scalar metrics


def _nan(metric: str, reason: str, warn: bool) -> float:
    if warn:
        warnings.warn(
            f"{metric} is undefined: {reason}; returning NaN", MetricUndefined, stacklevel=3
        )
    return math.nan


def auroc(labels: Any, scores: Any, *, warn: bool = True) -> float:
    """Area under the ROC curve (== ``sklearn.metrics.roc_auc_score``); NaN if one class."""
    y, s = check_binary_inputs(labels, scores)
    reason = _undefined_reason(y)
    return _nan("AUROC", reason, warn) if reason else float(auroc_rows(y, s)[0])


def aupr(labels: Any, scores: Any, *, warn: bool = True) -> float:
    """Average precision (== ``sklearn.metrics.average_precision_score``); NaN if one class."""
    y, s = check_binary_inputs(labels, scores)
    reason = _undefined_reason(y)
    return _nan("AUPR", reason, warn) if reason else float(aupr_rows(y, s)[0])


def fpr_at_tpr(labels: Any, scores: Any, tpr: float = 0.95, *, warn: bool = True) -> float:
    """FPR at the first threshold (over all distinct ones) whose TPR is ≥ ``tpr``; NaN if one
    class. The convention and the sources it matches are in the module docstring."""
    _check_tpr(tpr)
    y, s = check_binary_inputs(labels, scores)
    reason = _undefined_reason(y)
    if reason:
        return _nan(f"FPR@{tpr:g}TPR", reason, warn)
    return float(fpr_at_tpr_rows(y, s, tpr)[0])
