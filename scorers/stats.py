"""The statistics core: detection-curve kernels, one interval type, bootstrap, paired tests.

Pure numpy/scipy (no inspect): the per-eval ``@metric``s (``scorers.detection``,
``scorers.localisation``, task metrics) and the report's cells (``reports``) compute every value
and interval here, so a leaderboard cell and the metric its log holds are the same number when
asked with the same ``n_boot`` and ``seed``.

Conventions:

- Binary ``labels``: 1 / True = the positive class (the thing to detect: a hallucination, an
  anomaly); ``scores``: higher = more likely positive. Non-binary labels or non-finite scores are a
  ``ValueError`` naming how many and the first index (callers decide what a failed sample means
  before asking for a metric; silently dropping it would bias the value).
- A detection metric that is undefined (no samples, one class only) is ``nan``, with a
  :class:`MetricUndefined` warning from the validated functions, even where scikit-learn returns a
  number (its ``average_precision_score`` gives 1.0 on all-positive input), so "one class" is never
  mistaken for a perfect or useless detector.
- Values match scikit-learn: ``roc_auc_score`` (ties count 1/2), ``average_precision_score``
  (step-wise, no interpolation). FPR@TPR is the FPR of the first point of the ROC curve **over
  every distinct threshold** (``roc_curve(drop_intermediate=False)``) whose TPR reaches the
  target: the lowest FPR any threshold achieves at that recall. This is pytorch-ood's
  ``FPR95TPR`` (Kirchheim et al., CVPR-W 2022; ``pytorch_ood.metrics.functional.fpr_at_tpr`` in
  0.4.0, equal to ours on 4,000 random cases with ties), whose published benchmark tables use
  it. Reading scikit-learn's *default* curve at the first TPR ≥ 0.95 (OpenOOD's
  ``auc_and_fpr_recall``) can differ: that curve drops collinear points, and when the first point
  reaching the target is one of them (a diagonal run of tied positive/negative pairs) the next
  kept point has a higher FPR. Hendrycks et al.'s ``fpr_and_fdr_at_recall`` (Energy, ReAct, …)
  takes the point whose recall is *closest* to the target, which may lie below it; the fDBD
  authors' repository (``util/metrics.py``) thresholds at the 5th percentile of the
  in-distribution scores. Numbers computed those ways are not comparable to ours to the last
  digit.
- Intervals are two-sided at ``level`` (default 0.95). Bootstrap intervals are percentile
  intervals over ``n_boot`` resamples of the samples (with replacement) drawn with
  ``numpy.random.default_rng(seed)``; resamples where the statistic is undefined (e.g. one class)
  are dropped and counted (``Interval.n_skipped``). An interval that cannot be estimated is
  ``(nan, nan)``; the estimate is ``nan`` only when the statistic itself is. A degenerate
  ``[v, v]`` would claim certainty the data does not give.
- Samples are resampled in one canonical order, :func:`sample_order_key` of their ids (numbers
  inside an id compare as numbers: ``q-2`` before ``q-10``), never in the order they happened to
  finish: the same seed then draws the same bootstrap samples in the eval and in the report.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
from scipy import stats
from scipy.stats import rankdata

__all__ = [
    "DETECTION_METRICS",
    "DetectionMetric",
    "Interval",
    "McNemarResult",
    "MetricUndefined",
    "PairedDiff",
    "aupr",
    "aupr_rows",
    "auroc",
    "auroc_rows",
    "bootstrap_mean_ci",
    "bootstrap_statistic_ci",
    "check_binary_inputs",
    "detection_interval",
    "detection_rows",
    "detection_summary",
    "fpr_at_tpr",
    "fpr_at_tpr_rows",
    "holm_adjust",
    "mcnemar",
    "paired_bootstrap_diff",
    "paired_bootstrap_statistic_diff",
    "sample_order_key",
    "wilson_ci",
]

# Resampling draws an (chunk × n) index matrix; this bounds its size (~64 MB of int64).
_MAX_CHUNK_CELLS = 8_000_000
# statsmodels' and most textbooks' rule: below 25 discordant pairs use the exact binomial test.
_MCNEMAR_EXACT_BELOW = 25

DetectionMetric = Literal["auroc", "aupr", "fpr95"]
DETECTION_METRICS: tuple[str, ...] = ("auroc", "aupr", "fpr95")


class MetricUndefined(UserWarning):
    """A metric was asked for on input where it has no value (empty, or one class only)."""


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided interval ``[low, high]`` and how it was obtained.

    ``method``: ``"bootstrap"`` (percentile, ``n_boot`` resamples of which ``n_skipped`` were
    undefined and dropped), ``"Wilson"`` or ``""`` when no interval could be estimated.
    """

    estimate: float
    low: float
    high: float
    level: float = 0.95
    method: str = ""
    n_boot: int = 0
    n_skipped: int = 0


class PairedDiff(NamedTuple):
    """``delta = stat(a) - stat(b)`` on paired samples, its interval and two-sided p-value."""

    delta: float
    low: float
    high: float
    p_value: float


class McNemarResult(NamedTuple):
    """McNemar's test on paired binary outcomes.

    ``b``: pairs where A is correct and B is not; ``c``: B correct and A not.
    ``statistic`` is ``min(b, c)`` for the exact test and the continuity-corrected chi-square
    ``(|b - c| - 1)^2 / (b + c)`` otherwise; ``method`` says which.
    """

    statistic: float
    p_value: float
    b: int
    c: int
    method: str


_DIGITS = re.compile(r"(\d+)")


def sample_order_key(sample_id: Any) -> tuple[tuple[int, int | str], ...]:
    """Sort key for sample ids, the order every bootstrap here resamples in: the id's text split
    into digit runs (compared as numbers) and the rest (compared as text), so ``q-2 < q-10`` and
    integer ids sort numerically. Datasets that number their samples keep their own order."""
    parts = _DIGITS.split(str(sample_id))
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p != "")


# ------------------------------------------------------------------ input checks


def check_binary_inputs(labels: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate and convert ``labels``/``scores`` to (bool array, float64 array).

    Raises ``ValueError`` with the reason on mismatched lengths, non-binary labels, non-numeric
    or non-finite scores, or non-1-D input.
    """
    y = np.asarray(labels)
    s = np.asarray(scores)
    if y.ndim != 1 or s.ndim != 1:
        raise ValueError(f"labels and scores must be 1-D; got shapes {y.shape} and {s.shape}")
    if y.shape[0] != s.shape[0]:
        raise ValueError(f"labels and scores differ in length: {y.shape[0]} vs {s.shape[0]}")
    if y.dtype != bool:
        try:
            yf = y.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"labels must be 0/1 or bool; got dtype {y.dtype}") from exc
        bad = ~np.isin(yf, (0.0, 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"labels must be 0/1 or bool; {int(bad.sum())} value(s) are not, "
                f"first at index {i}: {y[i]!r}"
            )
        y = yf.astype(bool)
    try:
        s = s.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scores must be numeric; got dtype {s.dtype}") from exc
    nonfinite = ~np.isfinite(s)
    if nonfinite.any():
        i = int(np.flatnonzero(nonfinite)[0])
        raise ValueError(
            f"scores must be finite; {int(nonfinite.sum())} NaN/inf value(s), "
            f"first at index {i}: {s[i]!r}"
        )
    return y, s


def _as_finite_1d(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence of numbers, got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(
            f"{name}: non-finite value {arr[bad[0]]!r} at position {int(bad[0])} "
            f"({bad.size} non-finite in total); drop or score failed samples before the interval"
        )
    return arr


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")


def _check_n_boot(n_boot: int) -> None:
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")


def _check_tpr(tpr: float) -> None:
    if not 0.0 < tpr <= 1.0:
        raise ValueError(f"tpr must be in (0, 1]; got {tpr}")


def _undefined_reason(y: np.ndarray) -> str | None:
    if y.size == 0:
        return "no samples"
    n_pos = int(y.sum())
    if n_pos == 0:
        return f"only the negative class is present ({y.size} samples, 0 positives)"
    if n_pos == y.size:
        return f"only the positive class is present ({y.size} samples, 0 negatives)"
    return None


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


# ------------------------------------------------------------------ proportions


def wilson_ci(k: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion ``k / n`` (no continuity correction).

    Matches ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``. ``n == 0`` gives
    ``Interval(nan, nan, nan)``.
    """
    _check_level(level)
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"wilson_ci needs 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, level)
    z = float(stats.norm.ppf(1.0 - (1.0 - level) / 2.0))
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # Clamp rounding noise at the boundaries (k = 0 or k = n give exactly 0 or 1).
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), level, "Wilson")


# ------------------------------------------------------------------ paired tests


def _bootstrap_p_value(draws: np.ndarray, delta: float) -> float:
    # Null distribution = bootstrap distribution shifted to mean zero (Berg-Kirkpatrick et al.
    # 2012, Koehn 2004): how often a resampled delta strays from the observed one by at least
    # |delta|. The +1 terms keep p > 0 for a finite number of resamples.
    extreme = np.count_nonzero(np.abs(draws - delta) >= abs(delta) - 1e-12)
    return float((extreme + 1) / (draws.size + 1))


def paired_bootstrap_diff(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    n_boot: int = 2000,
    seed: int | None = 0,
    level: float = 0.95,
) -> PairedDiff:
    """Paired bootstrap for ``mean(a) - mean(b)`` where ``a[i]`` and ``b[i]`` share sample ``i``.

    Returns the observed delta, its percentile interval and a two-sided p-value for
    ``delta == 0``. ``delta == 0`` exactly (e.g. identical systems) gives ``p = 1``.
    """
    _check_level(level)
    _check_n_boot(n_boot)
    xa = _as_finite_1d(a, "a")
    xb = _as_finite_1d(b, "b")
    if xa.shape != xb.shape:
        raise ValueError(f"paired samples differ in length: a has {xa.size}, b has {xb.size}")
    d = xa - xb
    n = d.size
    if n == 0:
        return PairedDiff(math.nan, math.nan, math.nan, math.nan)
    delta = float(d.mean())
    if n == 1:
        return PairedDiff(delta, math.nan, math.nan, math.nan)
    if np.all(d == 0):
        return PairedDiff(0.0, 0.0, 0.0, 1.0)
    draws = np.concatenate([d[idx].mean(axis=1) for idx in _resample_indices(n, n_boot, seed)])
    low, high = _percentile_interval(draws, level)
    return PairedDiff(delta, low, high, _bootstrap_p_value(draws, delta))


def paired_bootstrap_statistic_diff(
    statistic_a: Callable[[np.ndarray], Any],
    statistic_b: Callable[[np.ndarray], Any],
    n: int,
    n_boot: int = 2000,
    seed: int | None = 0,
    level: float = 0.95,
    vectorized: bool = False,
) -> PairedDiff:
    """Paired bootstrap for ``stat_a - stat_b`` of any corpus statistic over the same ``n`` rows.

    Both statistics see the same resample indices (the pairing). Resamples where either is
    ``nan`` are dropped. ``vectorized`` as in :func:`bootstrap_statistic_ci`.
    """
    _check_level(level)
    _check_n_boot(n_boot)
    if n <= 0:
        return PairedDiff(math.nan, math.nan, math.nan, math.nan)
    full = np.arange(n)
    delta = _evaluate(statistic_a, full, vectorized) - _evaluate(statistic_b, full, vectorized)
    if n == 1 or not math.isfinite(delta):
        return PairedDiff(delta, math.nan, math.nan, math.nan)

    def diff(idx: np.ndarray) -> Any:
        return np.asarray(statistic_a(idx), dtype=float) - np.asarray(statistic_b(idx), dtype=float)

    draws = _draws(diff, n, n_boot, seed, vectorized)
    draws = draws[np.isfinite(draws)]
    if draws.size == 0:
        return PairedDiff(delta, math.nan, math.nan, math.nan)
    if delta == 0 and np.all(draws == 0):
        return PairedDiff(0.0, 0.0, 0.0, 1.0)
    low, high = _percentile_interval(draws, level)
    return PairedDiff(delta, low, high, _bootstrap_p_value(draws, delta))


def _as_bool_1d(values: Sequence[bool] | np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence of booleans, got shape {arr.shape}")
    if arr.dtype != bool:
        as_float = arr.astype(float)
        bad = np.flatnonzero((as_float != 0) & (as_float != 1))
        if bad.size:
            raise ValueError(
                f"{name}: McNemar needs binary outcomes (0/1 or bool); got {arr[bad[0]]!r} "
                f"at position {int(bad[0])}"
            )
        arr = as_float == 1
    return arr


def mcnemar(
    a_correct: Sequence[bool] | np.ndarray,
    b_correct: Sequence[bool] | np.ndarray,
    exact: bool | None = None,
) -> McNemarResult:
    """McNemar's test of ``P(A right, B wrong) == P(A wrong, B right)`` on paired outcomes.

    ``exact=None`` picks the exact binomial test when there are fewer than 25 discordant pairs
    and the continuity-corrected chi-square otherwise. No discordant pairs gives
    ``statistic=0, p=1``; empty input gives ``nan``.
    """
    xa = _as_bool_1d(a_correct, "a_correct")
    xb = _as_bool_1d(b_correct, "b_correct")
    if xa.shape != xb.shape:
        raise ValueError(
            f"paired outcomes differ in length: a_correct has {xa.size}, b_correct has {xb.size}"
        )
    b = int(np.count_nonzero(xa & ~xb))
    c = int(np.count_nonzero(~xa & xb))
    discordant = b + c
    use_exact = discordant < _MCNEMAR_EXACT_BELOW if exact is None else exact
    method = "exact" if use_exact else "chi2-cc"
    if xa.size == 0:
        return McNemarResult(math.nan, math.nan, 0, 0, method)
    if discordant == 0:
        return McNemarResult(0.0, 1.0, 0, 0, method)
    if use_exact:
        p = stats.binomtest(min(b, c), discordant, 0.5, alternative="two-sided").pvalue
        return McNemarResult(float(min(b, c)), float(min(1.0, p)), b, c, method)
    statistic = (abs(b - c) - 1.0) ** 2 / discordant
    return McNemarResult(float(statistic), float(stats.chi2.sf(statistic, 1)), b, c, method)


def holm_adjust(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values (family-wise error control).

    ``nan`` entries (tests that could not be run) stay ``nan`` and do not count towards the
    family size.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, math.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out
