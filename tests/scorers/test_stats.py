"""scorers.stats (the statistics core) against scikit-learn, scipy, pytorch-ood's convention and
hand-computed cases: detection kernels, intervals, paired tests, Holm."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

from scorers.stats import (
    Interval,
    MetricUndefined,
    aupr,
    aupr_rows,
    auroc,
    auroc_rows,
    bootstrap_mean_ci,
    bootstrap_statistic_ci,
    detection_interval,
    detection_summary,
    fpr_at_tpr,
    fpr_at_tpr_rows,
    holm_adjust,
    mcnemar,
    paired_bootstrap_diff,
    paired_bootstrap_statistic_diff,
    wilson_ci,
)


def _ci(iv: Interval) -> tuple[float, float, float]:
    return (iv.estimate, iv.low, iv.high)


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
    assert all(math.isnan(v) for v in _ci(empty)) and empty.method == ""
    one = bootstrap_mean_ci([0.7])
    assert one.estimate == 0.7 and math.isnan(one.low) and math.isnan(one.high)
    same = bootstrap_mean_ci([2.0] * 10, n_boot=50)
    assert _ci(same) == (2.0, 2.0, 2.0) and (same.method, same.n_boot) == ("bootstrap", 50)


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
    # (3/4)^4 + (1/4)^4 of resamples are one-class: ~32 % dropped and counted.
    assert 100 < ci.n_skipped < 160 and ci.n_boot == 400


def test_bootstrap_statistic_all_undefined_gives_nan_interval():
    ci = bootstrap_statistic_ci(lambda idx: float("nan"), 5, n_boot=10)
    assert math.isnan(ci.estimate) and math.isnan(ci.low)
    assert all(math.isnan(v) for v in _ci(bootstrap_statistic_ci(lambda idx: 1.0, 0)))
    assert ci.n_skipped == 0  # the estimate itself is undefined: no resampling at all


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
    assert all(math.isnan(v) for v in _ci(wilson_ci(0, 0)))
    assert wilson_ci(3, 10).method == "Wilson"
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
    assert _ci(scalar) == pytest.approx(_ci(vector))
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


# ---------------------------------------------------------------- detection kernels


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


def test_fpr95_convention_all_thresholds_not_the_thinned_curve() -> None:
    """Tied (positive, negative) pairs make a diagonal run of ROC points; scikit-learn's default
    curve drops its middle points, so reading it at the first TPR ≥ 0.95 (OpenOOD's reading)
    lands later than the first threshold that reaches 0.95 (ours and pytorch-ood's)."""
    # 18 positives on top, then 4 tie blocks of one positive + one negative, then 20 negatives:
    # ROC points (fp, tp) = (0, 18), (1, 19), (2, 20), (3, 21), (4, 22), (5, 22), ...
    y = np.r_[np.ones(18), np.tile([1, 0], 4), np.zeros(20)].astype(int)
    s = np.r_[
        np.arange(100.0, 82.0, -1.0), np.repeat([50.0, 49.0, 48.0, 47.0], 2), -np.arange(20.0)
    ]
    n_neg = int((1 - y).sum())  # 24; 22 positives: TPR ≥ 0.95 first at tp = 21, fp = 3
    assert fpr_at_tpr(y, s) == pytest.approx(3 / n_neg)
    fpr_all, tpr_all, _ = roc_curve(y, s, drop_intermediate=False)
    assert fpr_at_tpr(y, s) == fpr_all[np.argmax(tpr_all >= 0.95)]
    fpr_thin, tpr_thin, _ = roc_curve(y, s)  # default: drop_intermediate=True
    assert fpr_thin[np.argmax(tpr_thin >= 0.95)] == pytest.approx(4 / n_neg)  # overstated


def test_fpr95_matches_pytorch_ood_reading_on_random_cases() -> None:
    """pytorch-ood's ``fpr_at_tpr``: ROC over all distinct thresholds (torchmetrics' binary_roc),
    ``searchsorted(tpr, 0.95)``; written out here in numpy."""
    rng = np.random.default_rng(11)
    for _ in range(300):
        y, s = _random_case(rng, int(rng.integers(2, 120)), bool(rng.integers(0, 2)))
        order = np.argsort(-s, kind="mergesort")
        ys, ss = y[order], s[order]
        ends = np.r_[np.flatnonzero(np.diff(ss)), ys.size - 1]
        tpr = np.r_[0.0, np.cumsum(ys)[ends] / ys.sum()]
        fpr = np.r_[0.0, np.cumsum(1 - ys)[ends] / (1 - ys).sum()]
        i = min(int(np.searchsorted(tpr, 0.95)), fpr.size - 1)
        assert fpr_at_tpr(y, s) == pytest.approx(fpr[i], abs=1e-12)


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
    with pytest.raises(ValueError, match="unknown detection metric"):
        detection_interval("f1", [0, 1], [0, 1])  # type: ignore[arg-type]


def test_bool_labels_accepted() -> None:
    assert auroc(np.array([False, True]), [0.0, 1.0]) == 1.0


def test_row_kernels_match_sklearn_per_row_with_ties() -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, (60, 15))
    s = rng.integers(0, 4, (60, 15)).astype(float)
    got = {"auroc": auroc_rows(y, s), "aupr": aupr_rows(y, s), "fpr": fpr_at_tpr_rows(y, s)}
    for row, (a, b) in enumerate(zip(y, s, strict=True)):
        if a.min() == a.max():
            assert all(np.isnan(v[row]) for v in got.values())
            continue
        assert got["auroc"][row] == pytest.approx(roc_auc_score(a, b))
        assert got["aupr"][row] == pytest.approx(average_precision_score(a, b))
        assert got["fpr"][row] == pytest.approx(_sk_fpr_at_tpr(a, b))


# ---------------------------------------------------------------- detection intervals


def test_detection_interval_brackets_and_is_a_percentile_bootstrap() -> None:
    rng = np.random.default_rng(1)
    y, s = _random_case(rng, 200, tied=False)
    ci = detection_interval("auroc", y, s, n_boot=300, seed=3)
    assert ci.low < auroc(y, s) == ci.estimate < ci.high and 0.0 <= ci.low and ci.high <= 1.0
    assert detection_interval("auroc", y, s, n_boot=300, seed=3) == ci
    assert detection_interval("auroc", y, s, n_boot=300, seed=4) != ci
    # Against a direct re-implementation of the resampling with scikit-learn.
    r = np.random.default_rng(3)
    vals = [roc_auc_score(y[idx], s[idx]) for idx in r.integers(0, y.size, (300, y.size))]
    assert (ci.low, ci.high) == pytest.approx(tuple(np.quantile(vals, [0.025, 0.975])))
    assert (ci.n_skipped, ci.n_boot, ci.method) == (0, 300, "bootstrap")


def test_detection_interval_counts_skipped_one_class_resamples() -> None:
    # one positive in 10: P(resample has no positive) = 0.9**10 ≈ 0.35
    y = np.array([1] + [0] * 9)
    s = np.arange(10.0)
    ci = detection_interval("auroc", y, s, n_boot=400, seed=0)
    assert 80 < ci.n_skipped < 200
    strat = detection_interval("auroc", y, s, n_boot=400, seed=0, stratified=True)
    assert strat.n_skipped == 0


def test_detection_interval_one_class_input() -> None:
    with pytest.warns(MetricUndefined, match="only the positive class"):
        ci = detection_interval("aupr", [1, 1], [0.2, 0.3], n_boot=10)
    assert all(np.isnan(v) for v in _ci(ci)) and ci.n_skipped == 10


def test_detection_summary_keys_and_values() -> None:
    y, s = [0, 1, 0, 1, 1], [0.1, 0.9, 0.3, 0.2, 0.8]
    out = detection_summary(y, s, n_boot=50)
    assert out["auroc"] == pytest.approx(roc_auc_score(y, s))
    assert {"aupr_lo", "aupr_hi", "fpr95", "fpr95_lo", "n", "n_pos", "boot_skipped"} <= set(out)
    assert out["n"] == 5 and out["n_pos"] == 3
    for m in ("auroc", "aupr", "fpr95"):
        ci = detection_interval(m, y, s, n_boot=50)  # type: ignore[arg-type]
        assert (out[m], out[f"{m}_lo"], out[f"{m}_hi"]) == _ci(ci)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        detection_summary([1, 1], [0.1, 0.2], n_boot=5)
    assert sum(issubclass(w.category, MetricUndefined) for w in caught) == 1


def test_intervals_import_path_is_the_core() -> None:
    import scorers.intervals as old_path
    import scorers.stats as core

    for name in old_path.__all__:
        assert getattr(old_path, name) is getattr(core, name)


def test_sample_order_key_is_natural_and_total() -> None:
    from scorers.stats import sample_order_key

    ids = ["gen-0-10", "gen-0-2", "gen-0-1", 12, 3, "b", "a-2", "a-10", None]
    ordered = sorted(ids, key=sample_order_key)
    assert ordered[:2] == [3, 12]
    assert ordered.index("gen-0-1") < ordered.index("gen-0-2") < ordered.index("gen-0-10")
    assert ordered.index("a-2") < ordered.index("a-10") < ordered.index("b")
