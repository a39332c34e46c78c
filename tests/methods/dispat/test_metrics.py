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


def test_f1_ties_flag_every_tied_row():
    # k = 1 but all four tie at the top: all flagged -> P = 1/4, R = 1 -> F1 = 0.4.
    assert f1_at_contamination([0, 0, 0, 1], [1.0, 1.0, 1.0, 1.0]) == pytest.approx(0.4)


def test_f1_explicit_contamination_matches_sklearn():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    s = rng.normal(size=50)
    k = round(0.3 * 50)
    pred = s >= np.sort(s)[::-1][k - 1]
    assert f1_at_contamination(y, s, 0.3) == pytest.approx(f1_score(y, pred))


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
