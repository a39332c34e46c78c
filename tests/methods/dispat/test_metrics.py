import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import f1_score

from methods.dispat import f1_at_contamination, seed_summary


def test_f1_hand_computed():
    y = [0, 0, 0, 1, 1]
    # k = 2: flags the two highest (0.9, 0.8): one anomaly among them -> P = R = 0.5.
    assert f1_at_contamination(y, [0.1, 0.9, 0.2, 0.8, 0.3]) == pytest.approx(0.5)
    assert f1_at_contamination(y, [0.1, 0.2, 0.3, 0.8, 0.9]) == 1.0
    assert f1_at_contamination(y, [0.9, 0.8, 0.3, 0.1, 0.2]) == 0.0


def test_f1_ties_percentile_flags_none_top_k_flags_all():
    # All four tie: the 75th percentile is 1.0 and nothing is strictly above it (PyOD's rule);
    # top-k with k = 1 flags every tied row -> P = 1/4, R = 1 -> F1 = 0.4.
    assert f1_at_contamination([0, 0, 0, 1], [1.0, 1.0, 1.0, 1.0]) == 0.0
    assert f1_at_contamination(
        [0, 0, 0, 1], [1.0, 1.0, 1.0, 1.0], threshold="top_k"
    ) == pytest.approx(0.4)
    # A tie across the cut: [.1 .2 .5 .5 .9], 2 anomalies -> percentile flags only 0.9.
    y, s = [0, 0, 1, 0, 1], [0.1, 0.2, 0.5, 0.5, 0.9]
    assert f1_at_contamination(y, s) == pytest.approx(2 * 1 * 0.5 / 1.5)
    # top-k, k = 2: the k-th score 0.5 is tied, all three flagged -> P = 2/3, R = 1 -> F1 = 0.8.
    assert f1_at_contamination(y, s, threshold="top_k") == pytest.approx(0.8)


def test_f1_default_is_pyods_rule_on_random_cases_with_ties():
    """PyOD's own labels (``get_label_n``: percentile, strict ``>``) give the same F1."""
    from pyod.utils.utility import get_label_n

    rng = np.random.default_rng(0)
    differs = 0
    for i in range(400):
        n = int(rng.integers(5, 60))
        y = rng.integers(0, 2, n)
        y[0], y[1] = 1, 0
        s = rng.integers(0, 6, n).astype(float) if i % 2 else rng.normal(size=n)
        assert f1_at_contamination(y, s) == pytest.approx(f1_score(y, get_label_n(y, s)))
        c = float(rng.uniform(0.05, 0.5))
        assert f1_at_contamination(y, s, c) == pytest.approx(
            f1_score(y, get_label_n(y, s, n=c * n))
        )
        differs += f1_at_contamination(y, s) != f1_at_contamination(y, s, threshold="top_k")
    assert differs > 50  # the two rules really differ (on ties)


def test_f1_top_k_explicit_contamination_and_rounding():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    s = rng.normal(size=50)
    k = 15  # 0.3 * 50
    pred = s >= np.sort(s)[::-1][k - 1]
    assert f1_at_contamination(y, s, 0.3, threshold="top_k") == pytest.approx(f1_score(y, pred))
    # k = floor(rate * n + 0.5): 0.25 * 10 = 2.5 -> 3 (Python's round would give 2).
    y10 = np.r_[np.zeros(7), np.ones(3)].astype(int)
    s10 = np.arange(10.0)
    assert f1_at_contamination(y10, s10, 0.25, threshold="top_k") == 1.0
    with pytest.raises(ValueError, match="threshold must be one of"):
        f1_at_contamination(y10, s10, threshold="topk")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "y, s, c, msg",
    [
        ([], [], None, "empty"),
        ([0, 0], [1.0, 2.0], None, "no anomaly"),
        ([0, 1], [1.0], None, "equal length"),
        ([0, 2], [1.0, 2.0], None, "0 .normal. or 1"),
        ([0, 1], [1.0, np.inf], None, "non-finite"),
        ([0, 1], [1.0, 2.0], 0.0, "contamination"),
    ],
)
def test_f1_undefined_cases_raise(y, s, c, msg):
    with pytest.raises(ValueError, match=msg):
        f1_at_contamination(y, s, c)


def test_seed_summary_matches_scipy_t_interval():
    v = [0.91, 0.95, 0.88, 0.93]
    s = seed_summary(v)
    lo, hi = stats.t.interval(0.95, 3, loc=np.mean(v), scale=stats.sem(v))
    assert (s.mean, s.n) == (pytest.approx(np.mean(v)), 4)
    assert s.low == pytest.approx(lo) and s.high == pytest.approx(hi)
    assert s.std == pytest.approx(np.std(v, ddof=1))


def test_seed_summary_edge_cases():
    assert math.isnan(seed_summary([]).mean)
    one = seed_summary([0.7])
    assert one.mean == 0.7 and math.isnan(one.low) and math.isnan(one.high)
    same = seed_summary([0.5, 0.5])
    assert same.low == same.high == 0.5
    with pytest.raises(ValueError, match="non-finite"):
        seed_summary([0.5, float("nan")])
