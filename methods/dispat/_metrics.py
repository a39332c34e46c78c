"""Thresholded metric and seed aggregation for the anomaly-detection leaderboard.

AUROC and AUPR come from ``scorers.stats`` (scikit-learn-exact); this module adds F1 at the
contamination threshold and the mean/interval over seeds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np
from scipy import stats

F1Threshold = Literal["percentile", "top_k"]
F1_THRESHOLDS: tuple[str, ...] = ("percentile", "top_k")


def f1_at_contamination(
    labels: Sequence[int] | np.ndarray,
    scores: Sequence[float] | np.ndarray,
    contamination: float | None = None,
    *,
    threshold: F1Threshold = "percentile",
) -> float:
    """F1 of the anomaly class when the rows above a contamination threshold are flagged.

    ``contamination`` (rate) defaults to the true anomaly rate of ``labels``. ``threshold``:

    - ``percentile`` (default; PyOD's rule, ``BaseDetector._process_decision_scores`` and
      ``pyod.utils.utility.get_label_n``, which ADBench's and PyOD's published F1 use): flag the
      rows whose score is strictly above ``numpy.percentile(scores, 100 * (1 - rate))`` (linear
      interpolation). Ties at the threshold are not flagged, so fewer than ``rate * n`` rows may be.
    - ``top_k``: flag the ``k`` highest scores, ``k = max(1, floor(rate * n + 0.5))`` (nearest
      integer, halves rounded up; with the default rate k = the number of anomalies); rows tied
      with the k-th score are all flagged (a threshold cannot split a tie), so ties only raise k.

    With distinct scores and the true rate both flag exactly the top ``n_anomalies`` rows (the
    interpolated percentile falls strictly between the two rows around the cut); they differ when
    scores tie across the cut (``percentile`` flags none of the tied rows, ``top_k`` all of them)
    or when ``rate * n`` is not an integer. Undefined cases raise
    ``ValueError``: empty input, no anomaly in ``labels``, mismatched lengths, non-binary labels,
    non-finite scores, contamination outside (0, 1], an unknown ``threshold``.
    """
    if threshold not in F1_THRESHOLDS:
        raise ValueError(f"threshold must be one of {F1_THRESHOLDS}, got {threshold!r}")
    y = np.asarray(labels)
    s = np.asarray(scores, dtype=float)
    if y.ndim != 1 or s.ndim != 1 or y.shape != s.shape:
        raise ValueError(
            f"labels and scores must be 1-D of equal length, got {y.shape} and {s.shape}"
        )
    if y.size == 0:
        raise ValueError("f1_at_contamination: empty input")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0 (normal) or 1 (anomaly)")
    if not np.isfinite(s).all():
        raise ValueError(f"scores contain {int((~np.isfinite(s)).sum())} non-finite value(s)")
    n_pos = int(y.sum())
    if n_pos == 0:
        raise ValueError("f1_at_contamination: no anomaly among the labels; F1 is undefined")
    rate = n_pos / y.size if contamination is None else float(contamination)
    if not 0 < rate <= 1:
        raise ValueError(f"contamination must lie in (0, 1], got {rate}")
    if threshold == "percentile":
        pred = s > np.percentile(s, 100 * (1 - rate))
    else:
        k = max(1, math.floor(rate * y.size + 0.5))
        pred = s >= np.sort(s)[::-1][k - 1]
    tp = int((pred & (y == 1)).sum())
    if tp == 0:
        return 0.0
    precision, recall = tp / int(pred.sum()), tp / n_pos
    return 2 * precision * recall / (precision + recall)


class SeedSummary(NamedTuple):
    """Mean over seeds with a two-sided Student-t interval (few seeds: t, not bootstrap)."""

    mean: float
    low: float
    high: float
    std: float
    n: int


def seed_summary(values: Sequence[float], level: float = 0.95) -> SeedSummary:
    """Mean, t-interval and sample std (ddof=1) of per-seed values; NaN interval for n < 2."""
    v = np.asarray(values, dtype=float)
    if v.ndim != 1:
        raise ValueError("seed_summary expects a 1-D sequence")
    if not np.isfinite(v).all():
        raise ValueError("seed_summary: non-finite per-seed value; report failed seeds separately")
    n = int(v.size)
    if n == 0:
        return SeedSummary(math.nan, math.nan, math.nan, math.nan, 0)
    mean = float(v.mean())
    if n == 1:
        return SeedSummary(mean, math.nan, math.nan, math.nan, 1)
    std = float(v.std(ddof=1))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * std / math.sqrt(n))
    return SeedSummary(mean, mean - half, mean + half, std, n)
