"""Proportions and paired comparisons: Wilson intervals, paired bootstrap differences, McNemar,
Holm's adjustment."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import stats

from scorers.stats._bootstrap import _draws, _evaluate, _percentile_interval, _resample_indices
from scorers.stats._common import (
    Interval,
    McNemarResult,
    PairedDiff,
    _as_finite_1d,
    _check_level,
    _check_n_boot,
)

# statsmodels' and most textbooks' rule: below 25 discordant pairs use the exact binomial test.
_MCNEMAR_EXACT_BELOW = 25


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
