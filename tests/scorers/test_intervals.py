"""scorers.intervals against scipy and hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from scorers.intervals import (
    bootstrap_mean_ci,
    bootstrap_statistic_ci,
    holm_adjust,
    mcnemar,
    paired_bootstrap_diff,
    paired_bootstrap_statistic_diff,
    wilson_ci,
)

# ---------------------------------------------------------------- bootstrap_mean_ci


def test_bootstrap_mean_matches_scipy_percentile_bootstrap():
    rng = np.random.default_rng(1)
    x = rng.normal(0.3, 1.0, size=80)
    ours = bootstrap_mean_ci(x, n_boot=20000, seed=3)
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=20000, method="percentile", random_state=4
    ).confidence_interval
    assert ours.estimate == pytest.approx(x.mean())
    # Different random draws: endpoints agree to Monte-Carlo error (~1% of the width).
    width = ref.high - ref.low
    assert ours.low == pytest.approx(ref.low, abs=0.05 * width)
    assert ours.high == pytest.approx(ref.high, abs=0.05 * width)


def test_bootstrap_mean_close_to_normal_theory_for_binary():
    x = np.array([1] * 60 + [0] * 40, dtype=float)
    ci = bootstrap_mean_ci(x, n_boot=20000, seed=0)
    se = math.sqrt(0.6 * 0.4 / 100)
    assert ci.low == pytest.approx(0.6 - 1.96 * se, abs=0.015)
    assert ci.high == pytest.approx(0.6 + 1.96 * se, abs=0.015)


def test_bootstrap_mean_reproducible_and_seed_sensitive():
    x = np.arange(30, dtype=float)
    assert bootstrap_mean_ci(x, seed=7) == bootstrap_mean_ci(x, seed=7)
    assert bootstrap_mean_ci(x, seed=7) != bootstrap_mean_ci(x, seed=8)


def test_bootstrap_mean_level_widens_interval():
    x = np.random.default_rng(0).normal(size=50)
    narrow = bootstrap_mean_ci(x, level=0.5)
    wide = bootstrap_mean_ci(x, level=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_bootstrap_mean_edge_cases():
    empty = bootstrap_mean_ci([])
    assert all(math.isnan(v) for v in empty)
    one = bootstrap_mean_ci([0.7])
    assert one.estimate == 0.7 and math.isnan(one.low) and math.isnan(one.high)
    same = bootstrap_mean_ci([2.0] * 10)
    assert same == (2.0, 2.0, 2.0)


def test_bootstrap_mean_rejects_nonfinite_and_bad_level():
    with pytest.raises(ValueError, match="position 2"):
        bootstrap_mean_ci([1.0, 2.0, float("nan")])
    with pytest.raises(ValueError, match="level"):
        bootstrap_mean_ci([1.0, 2.0], level=1.0)
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_mean_ci([1.0, 2.0], n_boot=0)
    with pytest.raises(ValueError, match="1-D"):
        bootstrap_mean_ci([[1.0, 2.0]])


def test_bootstrap_mean_large_input_chunks_consistently():
    # n large enough that resampling runs in several chunks; result must still be sane.
    x = np.random.default_rng(2).binomial(1, 0.25, size=20000).astype(float)
    ci = bootstrap_mean_ci(x, n_boot=500, seed=1)
    assert ci.low < x.mean() < ci.high
    assert ci.high - ci.low == pytest.approx(2 * 1.96 * math.sqrt(0.25 * 0.75 / 20000), rel=0.2)


# ---------------------------------------------------------------- bootstrap_statistic_ci


def _auroc(y, s):
    from sklearn.metrics import roc_auc_score

    return roc_auc_score(y, s)


def test_bootstrap_statistic_mean_equals_bootstrap_mean():
    x = np.random.default_rng(5).normal(size=40)
    a = bootstrap_statistic_ci(lambda idx: x[idx].mean(), len(x), n_boot=300, seed=9)
    b = bootstrap_mean_ci(x, n_boot=300, seed=9)
    # Same seed, same index draws: identical intervals.
    assert a.estimate == pytest.approx(b.estimate)
    assert a.low == pytest.approx(b.low)
    assert a.high == pytest.approx(b.high)


def test_bootstrap_statistic_auroc_drops_one_class_resamples():
    y = np.array([0, 0, 0, 1])
    s = np.array([0.1, 0.2, 0.3, 0.9])

    def stat(idx):
        if len(set(y[idx])) < 2:
            return float("nan")
        return _auroc(y[idx], s[idx])

    ci = bootstrap_statistic_ci(stat, 4, n_boot=400, seed=0)
    assert ci.estimate == 1.0
    # Perfect separation in every two-class resample: the interval is [1, 1].
    assert ci.low == 1.0 and ci.high == 1.0


def test_bootstrap_statistic_all_undefined_gives_nan_interval():
    ci = bootstrap_statistic_ci(lambda idx: float("nan"), 5, n_boot=10)
    assert math.isnan(ci.estimate) and math.isnan(ci.low)
    assert all(math.isnan(v) for v in bootstrap_statistic_ci(lambda idx: 1.0, 0))


# ---------------------------------------------------------------- wilson_ci


@pytest.mark.parametrize(
    "k,n", [(0, 10), (10, 10), (3, 10), (1, 1), (0, 1), (57, 200), (999, 1000)]
)
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_wilson_matches_scipy(k, n, level):
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    ours = wilson_ci(k, n, level=level)
    assert ours.estimate == pytest.approx(k / n)
    assert ours.low == pytest.approx(ref.low, abs=1e-12)
    assert ours.high == pytest.approx(ref.high, abs=1e-12)


def test_wilson_hand_computed():
    # k=5, n=10, z=1.959964: centre 0.5, half = z*sqrt(0.025 + z^2/400)/(1+z^2/10)
    z = 1.959963984540054
    half = z * math.sqrt(0.25 / 10 + z * z / 400) / (1 + z * z / 10)
    ci = wilson_ci(5, 10)
    assert ci.low == pytest.approx(0.5 - half) and ci.high == pytest.approx(0.5 + half)
    assert ci.low == pytest.approx(0.2366, abs=1e-4)


def test_wilson_edge_cases():
    assert all(math.isnan(v) for v in wilson_ci(0, 0))
    assert wilson_ci(0, 5).low == 0.0
    assert wilson_ci(5, 5).high == 1.0
    with pytest.raises(ValueError, match="k <= n"):
        wilson_ci(6, 5)
    with pytest.raises(ValueError):
        wilson_ci(-1, 5)


# ---------------------------------------------------------------- paired bootstrap


def test_paired_bootstrap_detects_consistent_small_gain():
    rng = np.random.default_rng(0)
    base = rng.normal(size=200)
    a = base + 0.1 + rng.normal(scale=0.05, size=200)
    d = paired_bootstrap_diff(a, base, n_boot=4000, seed=1)
    assert d.delta == pytest.approx(np.mean(a - base))
    assert 0 < d.low < d.delta < d.high
    assert d.p_value < 0.01
    # The same data unpaired would not separate: per-sample noise dwarfs the gain.
    unpaired = stats.ttest_ind(a, base).pvalue
    assert unpaired > 0.1


def test_paired_bootstrap_interval_matches_scipy_on_differences():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=60), rng.normal(size=60)
    ours = paired_bootstrap_diff(a, b, n_boot=20000, seed=0)
    ref = stats.bootstrap(
        (a - b,), np.mean, n_resamples=20000, method="percentile", random_state=1
    ).confidence_interval
    width = ref.high - ref.low
    assert ours.low == pytest.approx(ref.low, abs=0.05 * width)
    assert ours.high == pytest.approx(ref.high, abs=0.05 * width)
    # Null true: p-value should not be tiny; close to the paired t-test's.
    t_p = stats.ttest_rel(a, b).pvalue
    assert ours.p_value == pytest.approx(t_p, abs=0.06)


def test_paired_bootstrap_hand_computed_constant_difference():
    # Every sample improves by exactly 1: every resample's delta is 1, none is as far from 1
    # as 0 is, so p = 1 / (n_boot + 1).
    d = paired_bootstrap_diff([1, 1, 1, 1], [0, 0, 0, 0], n_boot=99)
    assert d == (1.0, 1.0, 1.0, pytest.approx(0.01))


def test_paired_bootstrap_edge_cases():
    assert paired_bootstrap_diff([0.5, 0.2], [0.5, 0.2]) == (0.0, 0.0, 0.0, 1.0)
    assert all(math.isnan(v) for v in paired_bootstrap_diff([], []))
    one = paired_bootstrap_diff([1.0], [0.0])
    assert one.delta == 1.0 and math.isnan(one.low) and math.isnan(one.p_value)
    with pytest.raises(ValueError, match="differ in length"):
        paired_bootstrap_diff([1, 2], [1])


def test_paired_statistic_diff_auroc():
    rng = np.random.default_rng(3)
    y = np.array([0, 1] * 40)
    good = y + rng.normal(scale=0.5, size=80)
    bad = rng.normal(size=80)
    d = paired_bootstrap_statistic_diff(
        lambda i: _auroc(y[i], good[i]) if len(set(y[i])) == 2 else float("nan"),
        lambda i: _auroc(y[i], bad[i]) if len(set(y[i])) == 2 else float("nan"),
        80,
        n_boot=500,
        seed=0,
    )
    assert d.delta == pytest.approx(_auroc(y, good) - _auroc(y, bad))
    assert d.low > 0 and d.p_value < 0.01
    same = paired_bootstrap_statistic_diff(lambda i: 0.5, lambda i: 0.5, 10, n_boot=20)
    assert same == (0.0, 0.0, 0.0, 1.0)


# ---------------------------------------------------------------- McNemar


def test_mcnemar_exact_hand_computed():
    # b = 1 (A right, B wrong), c = 5: p = 2 * P(X <= 1 | 6, 0.5) = 2 * 7/64
    a = [1, 0, 0, 0, 0, 0, 1, 1]
    b = [0, 1, 1, 1, 1, 1, 1, 0]
    r = mcnemar(a, b)
    assert (r.b, r.c, r.method) == (2, 5, "exact")
    assert r.p_value == pytest.approx(stats.binomtest(2, 7, 0.5).pvalue)
    r2 = mcnemar([True] + [False] * 5, [False] + [True] * 5)
    assert (r2.b, r2.c) == (1, 5)
    assert r2.statistic == 1.0
    assert r2.p_value == pytest.approx(2 * 7 / 64)


def test_mcnemar_chi_square_hand_computed():
    # b = 10, c = 30 discordant (40 >= 25 -> chi-square with continuity correction).
    a = np.array([1] * 10 + [0] * 30 + [1] * 50, dtype=bool)
    b = np.array([0] * 10 + [1] * 30 + [1] * 50, dtype=bool)
    r = mcnemar(a, b)
    assert r.method == "chi2-cc"
    assert r.statistic == pytest.approx(19**2 / 40)
    assert r.p_value == pytest.approx(stats.chi2.sf(9.025, 1))
    exact = mcnemar(a, b, exact=True)
    assert exact.p_value == pytest.approx(stats.binomtest(10, 40, 0.5).pvalue)


def test_mcnemar_edge_cases():
    r = mcnemar([1, 0, 1], [1, 0, 1])
    assert (r.statistic, r.p_value, r.b, r.c) == (0.0, 1.0, 0, 0)
    empty = mcnemar([], [])
    assert math.isnan(empty.p_value)
    # One discordant pair: exact p = 1.
    assert mcnemar([1, 1], [1, 0]).p_value == pytest.approx(1.0)
    with pytest.raises(ValueError, match="binary"):
        mcnemar([0.5, 1], [1, 1])
    with pytest.raises(ValueError, match="differ in length"):
        mcnemar([1, 0], [1])


# ---------------------------------------------------------------- Holm


def test_holm_hand_computed():
    p = [0.01, 0.04, 0.03, float("nan")]
    # m = 3 finite: sorted 0.01*3=0.03, 0.03*2=0.06, 0.04*1 -> max(0.06, 0.04)=0.06
    out = holm_adjust(p)
    assert out[0] == pytest.approx(0.03)
    assert out[2] == pytest.approx(0.06)
    assert out[1] == pytest.approx(0.06)
    assert math.isnan(out[3])
    assert holm_adjust([0.6, 0.9]).tolist() == [1.0, 1.0]
    assert holm_adjust([]).size == 0


def test_vectorized_statistic_gives_identical_interval():
    x = np.random.default_rng(8).normal(size=30)
    scalar = bootstrap_statistic_ci(lambda i: x[i].mean(), 30, n_boot=200, seed=4)
    vector = bootstrap_statistic_ci(
        lambda m: x[m].mean(axis=1), 30, n_boot=200, seed=4, vectorized=True
    )
    assert scalar == pytest.approx(vector)
    d1 = paired_bootstrap_statistic_diff(
        lambda i: x[i].mean(), lambda i: x[i].min(), 30, n_boot=100, seed=1
    )
    d2 = paired_bootstrap_statistic_diff(
        lambda m: x[m].mean(axis=1),
        lambda m: x[m].min(axis=1),
        30,
        n_boot=100,
        seed=1,
        vectorized=True,
    )
    assert d1 == pytest.approx(d2)
