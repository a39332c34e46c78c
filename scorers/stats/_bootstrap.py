"""Bootstrap percentile intervals: of a mean, of any statistic, and of the detection metrics."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from scorers.stats._common import (
    Interval,
    MetricUndefined,
    _as_finite_1d,
    _check_level,
    _check_n_boot,
    _undefined_reason,
    check_binary_inputs,
)
from scorers.stats._kernels import DETECTION_METRICS, DetectionMetric, _kernel

# Resampling draws an (chunk × n) index matrix; this bounds its size (~64 MB of int64).
_MAX_CHUNK_CELLS = 8_000_000


# ------------------------------------------------------------------ bootstrap


def _resample_indices(
    n: int, n_boot: int, seed: int | None, strata: np.ndarray | None = None
) -> Iterator[np.ndarray]:
    """Chunks of bootstrap index rows (each: n indices drawn with replacement; with ``strata``,
    drawn within each stratum so every stratum keeps its size)."""
    rng = np.random.default_rng(seed)
    chunk = max(1, _MAX_CHUNK_CELLS // max(n, 1))
    groups = None if strata is None else [np.flatnonzero(strata == g) for g in np.unique(strata)]
    done = 0
    while done < n_boot:
        m = min(chunk, n_boot - done)
        if groups is None:
            yield rng.integers(0, n, size=(m, n))
        else:
            yield np.concatenate([g[rng.integers(0, g.size, size=(m, g.size))] for g in groups], 1)
        done += m


def _percentile_interval(draws: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(draws, [alpha, 1.0 - alpha])
    return float(low), float(high)


def _evaluate(statistic: Callable[[np.ndarray], Any], idx: np.ndarray, vectorized: bool) -> float:
    if vectorized:
        return float(np.asarray(statistic(idx[None, :]), dtype=float)[0])
    return float(statistic(idx))


def _draws(
    statistic: Callable[[np.ndarray], Any],
    n: int,
    n_boot: int,
    seed: int | None,
    vectorized: bool,
    strata: np.ndarray | None = None,
) -> np.ndarray:
    chunks = _resample_indices(n, n_boot, seed, strata)
    if vectorized:
        return np.concatenate([np.asarray(statistic(idx), dtype=float) for idx in chunks])
    return np.array([statistic(row) for idx in chunks for row in idx], dtype=float)


def bootstrap_mean_ci(
    values: Sequence[float] | np.ndarray,
    n_boot: int = 2000,
    seed: int | None = 0,
    level: float = 0.95,
) -> Interval:
    """Percentile bootstrap interval for the mean of ``values``.

    Empty input gives ``Interval(nan, nan, nan)``; one value gives ``(v, nan, nan)``.
    """
    _check_level(level)
    _check_n_boot(n_boot)
    arr = _as_finite_1d(values, "values")
    n = arr.size
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, level)
    estimate = float(arr.mean())
    if n == 1:
        return Interval(estimate, math.nan, math.nan, level)
    draws = np.concatenate([arr[idx].mean(axis=1) for idx in _resample_indices(n, n_boot, seed)])
    low, high = _percentile_interval(draws, level)
    return Interval(estimate, low, high, level, "bootstrap", n_boot, 0)


def bootstrap_statistic_ci(
    statistic: Callable[[np.ndarray], Any],
    n: int,
    n_boot: int = 2000,
    seed: int | None = 0,
    level: float = 0.95,
    vectorized: bool = False,
    strata: np.ndarray | None = None,
) -> Interval:
    """Percentile bootstrap interval for any statistic of ``n`` jointly resampled rows.

    ``statistic(idx)`` receives an index array into the caller's data (``np.arange(n)`` for the
    point estimate) and returns a float; it may return ``nan`` where the statistic is undefined
    on a resample (e.g. AUROC on a one-class resample): those resamples are dropped and counted in
    ``n_skipped``. ``vectorized=True``: ``statistic`` takes a 2-D (resamples × n) index matrix and
    returns one value per row (same draws as the scalar form for the same seed). ``strata``
    (length n): resample within each stratum, keeping its size.
    """
    _check_level(level)
    _check_n_boot(n_boot)
    if n <= 0:
        return Interval(math.nan, math.nan, math.nan, level)
    estimate = _evaluate(statistic, np.arange(n), vectorized)
    if n == 1 or not math.isfinite(estimate):
        return Interval(estimate, math.nan, math.nan, level)
    draws = _draws(statistic, n, n_boot, seed, vectorized, strata)
    finite = draws[np.isfinite(draws)]
    skipped = int(draws.size - finite.size)
    if finite.size == 0:
        return Interval(estimate, math.nan, math.nan, level, "", n_boot, skipped)
    low, high = _percentile_interval(finite, level)
    return Interval(estimate, low, high, level, "bootstrap", n_boot, skipped)


def detection_interval(
    metric: DetectionMetric,
    labels: Any,
    scores: Any,
    *,
    n_boot: int = 1000,
    seed: int | None = 0,
    level: float = 0.95,
    tpr: float = 0.95,
    stratified: bool = False,
) -> Interval:
    """``metric`` (``auroc``, ``aupr``, ``fpr95``) with its percentile bootstrap interval.

    The one function behind both the eval's detection metrics and the report's cells. Resamples
    the samples with replacement (``stratified=True``: within each class, keeping the class
    counts; otherwise the interval also carries the uncertainty of the class balance); one-class
    resamples are dropped and counted in ``n_skipped``. One-class input gives ``nan`` throughout
    with a :class:`MetricUndefined` warning.
    """
    kernel = _kernel(metric, tpr)
    y, s = check_binary_inputs(labels, scores)
    reason = _undefined_reason(y)
    if reason:
        warnings.warn(
            f"{metric} and its interval are undefined: {reason}; returning NaN",
            MetricUndefined,
            stacklevel=2,
        )
        return Interval(math.nan, math.nan, math.nan, level, "", n_boot, n_boot)
    return bootstrap_statistic_ci(
        lambda idx: kernel(y[idx], s[idx]),
        y.size,
        n_boot=n_boot,
        seed=seed,
        level=level,
        vectorized=True,
        strata=y if stratified else None,
    )


def detection_summary(
    labels: Sequence[Any],
    scores: Sequence[Any],
    *,
    n_boot: int = 1000,
    seed: int | None = 0,
    level: float = 0.95,
    tpr: float = 0.95,
    stratified: bool = False,
) -> dict[str, float]:
    """AUROC, AUPR and FPR@TPR with bootstrap bounds, as one flat dict of floats.

    Keys: ``auroc``, ``auroc_lo``, ``auroc_hi``, ``aupr``, ``aupr_lo``, ``aupr_hi``,
    ``fpr95`` (named for the default ``tpr``), ``fpr95_lo``, ``fpr95_hi``, ``n``, ``n_pos``,
    ``boot_skipped`` (one-class resamples dropped; the same draws serve all three metrics).
    """
    y, s = check_binary_inputs(labels, scores)
    out: dict[str, float] = {"n": float(y.size), "n_pos": float(y.sum())}
    skipped = float(n_boot)
    for i, name in enumerate(DETECTION_METRICS):
        with warnings.catch_warnings():
            if i:  # one warning per summary is enough; the reason is the same for all three
                warnings.simplefilter("ignore", MetricUndefined)
            ci = detection_interval(
                name,  # type: ignore[arg-type]
                y,
                s,
                n_boot=n_boot,
                seed=seed,
                level=level,
                tpr=tpr,
                stratified=stratified,
            )
        out[name], out[f"{name}_lo"], out[f"{name}_hi"] = ci.estimate, ci.low, ci.high
        skipped = float(ci.n_skipped)
    out["boot_skipped"] = skipped
    return out
