"""Confidence intervals and paired tests for leaderboards (pure numpy/scipy).

Shared by tasks (metrics that want an interval) and ``reports`` (leaderboards). Conventions:

- Intervals are two-sided at ``level`` (default 0.95); bootstrap intervals are percentile
  intervals over ``n_boot`` resamples drawn with ``numpy.random.default_rng(seed)``, so a given
  seed reproduces the same interval.
- An interval that cannot be estimated (no data, one observation, every resample undefined) is
  ``(nan, nan)``; the estimate itself is ``nan`` only when there is no data. A degenerate
  ``[v, v]`` interval would claim certainty the data does not give.
- Non-finite inputs are an error naming the position, never silently dropped: callers decide
  what a failed sample means before asking for an interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy import stats

__all__ = [
    "Interval",
    "PairedDiff",
    "McNemarResult",
    "bootstrap_mean_ci",
    "bootstrap_statistic_ci",
    "wilson_ci",
    "paired_bootstrap_diff",
    "paired_bootstrap_statistic_diff",
    "mcnemar",
    "holm_adjust",
]

# Resampling draws an (chunk × n) index matrix; this bounds its size (~64 MB of int64).
_MAX_CHUNK_CELLS = 8_000_000
# statsmodels' and most textbooks' rule: below 25 discordant pairs use the exact binomial test.
_MCNEMAR_EXACT_BELOW = 25


class Interval(NamedTuple):
    """A point estimate with a two-sided interval ``[low, high]``."""

    estimate: float
    low: float
    high: float


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


def _resample_indices(n: int, n_boot: int, seed: int | None):
    """Yield chunks of bootstrap index rows (each row: n indices drawn with replacement)."""
    rng = np.random.default_rng(seed)
    chunk = max(1, _MAX_CHUNK_CELLS // max(n, 1))
    done = 0
    while done < n_boot:
        m = min(chunk, n_boot - done)
        yield rng.integers(0, n, size=(m, n))
        done += m


def _percentile_interval(draws: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(draws, [alpha, 1.0 - alpha])
    return float(low), float(high)


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
        return Interval(math.nan, math.nan, math.nan)
    estimate = float(arr.mean())
    if n == 1:
        return Interval(estimate, math.nan, math.nan)
    draws = np.concatenate([arr[idx].mean(axis=1) for idx in _resample_indices(n, n_boot, seed)])
    low, high = _percentile_interval(draws, level)
    return Interval(estimate, low, high)


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
) -> np.ndarray:
    if vectorized:
        return np.concatenate(
            [np.asarray(statistic(idx), dtype=float) for idx in _resample_indices(n, n_boot, seed)]
        )
    return np.array(
        [statistic(row) for idx in _resample_indices(n, n_boot, seed) for row in idx], dtype=float
    )


def bootstrap_statistic_ci(
    statistic: Callable[[np.ndarray], Any],
    n: int,
    n_boot: int = 2000,
    seed: int | None = 0,
    level: float = 0.95,
    vectorized: bool = False,
) -> Interval:
    """Percentile bootstrap interval for any statistic of ``n`` jointly resampled rows.

    ``statistic(idx)`` receives an index array into the caller's data (``np.arange(n)`` for the
    point estimate) and returns a float; it may return ``nan`` where the statistic is undefined
    on a resample (e.g. AUROC on a one-class resample), and those resamples are dropped. Used for
    corpus-level metrics such as AUROC where the per-sample mean is not the metric.
    ``vectorized=True``: ``statistic`` takes a 2-D (resamples × n) index matrix and returns one
    value per row (same draws as the scalar form for the same seed).
    """
    _check_level(level)
    _check_n_boot(n_boot)
    if n <= 0:
        return Interval(math.nan, math.nan, math.nan)
    estimate = _evaluate(statistic, np.arange(n), vectorized)
    if n == 1 or not math.isfinite(estimate):
        return Interval(estimate, math.nan, math.nan)
    draws = _draws(statistic, n, n_boot, seed, vectorized)
    draws = draws[np.isfinite(draws)]
    if draws.size == 0:
        return Interval(estimate, math.nan, math.nan)
    low, high = _percentile_interval(draws, level)
    return Interval(estimate, low, high)


def wilson_ci(k: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion ``k / n`` (no continuity correction).

    Matches ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``. ``n == 0`` gives
    ``Interval(nan, nan, nan)``.
    """
    _check_level(level)
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"wilson_ci needs 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Interval(math.nan, math.nan, math.nan)
    z = float(stats.norm.ppf(1.0 - (1.0 - level) / 2.0))
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # Clamp rounding noise at the boundaries (k = 0 or k = n give exactly 0 or 1).
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


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
