import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from methods.dispat import (
    PYOD_DETECTORS,
    AnomalyDetector,
    NonFiniteScoresError,
    PyODDetector,
    apply_nonfinite_policy,
)


def test_fail_policy_raises_with_counts():
    with pytest.raises(NonFiniteScoresError, match=r"2 non-finite score\(s\) of 4.*first at row 1"):
        apply_nonfinite_policy(np.array([0.0, np.inf, 1.0, -np.inf]), "fail", "PCA")


def test_max_finite_policy_ranks_infinities_at_the_ends():
    out, n = apply_nonfinite_policy(np.array([0.0, np.inf, 1.0, -np.inf]), "max_finite", "PCA")
    assert n == 2
    np.testing.assert_array_equal(out, [0.0, 2.0, 1.0, -1.0])
    allinf, n = apply_nonfinite_policy(np.full(3, np.inf), "max_finite", "PCA")
    assert n == 3 and np.all(allinf == allinf[0]) and np.isfinite(allinf).all()
    finite, n = apply_nonfinite_policy(np.array([1.0, 2.0]), "max_finite", "PCA")
    assert n == 0 and finite.tolist() == [1.0, 2.0]


def test_nan_fails_under_every_policy():
    for policy in ("fail", "max_finite"):
        with pytest.raises(NonFiniteScoresError, match="1 NaN"):
            apply_nonfinite_policy(np.array([np.nan, 1.0]), policy, "X")
    with pytest.raises(ValueError, match="policy"):
        apply_nonfinite_policy(np.array([1.0]), "drop", "X")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(PYOD_DETECTORS))
def test_pyod_detectors_rank_outliers_higher(name):
    rng = np.random.default_rng(0)
    X_train = rng.normal(size=(200, 4))
    X_test = np.vstack([rng.normal(size=(50, 4)), rng.normal(loc=6.0, size=(10, 4))])
    y = np.r_[np.zeros(50), np.ones(10)]
    det = PyODDetector(name, seed=0)
    assert isinstance(det, AnomalyDetector)
    scores = det.fit(X_train).decision_function(X_test)
    assert scores.shape == (60,)
    assert roc_auc_score(y, scores) > 0.95


def test_iforest_uses_the_seed():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    a = PyODDetector("IForest", seed=0).fit(X).decision_function(X)
    b = PyODDetector("IForest", seed=0).fit(X).decision_function(X)
    c = PyODDetector("IForest", seed=1).fit(X).decision_function(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# The zero-variance component is the point of the test: PyOD's weighted PCA divides by it
# (divide by zero) and numpy then subtracts inf from inf (invalid value).
@pytest.mark.filterwarnings("ignore:divide by zero encountered in divide:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered in subtract:RuntimeWarning")
def test_pca_on_a_constant_column_gives_inf_which_is_reported_not_hidden():
    # Like 6_cardio seed 4: a training column is constant, so a PCA component has zero variance
    # and PyOD's weighted PCA divides by it.
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=(60, 3)), np.ones(60)]
    raw = PyODDetector("PCA", nonfinite="max_finite").fit(X)
    scores = raw.decision_function(X[:10])
    if raw.n_nonfinite_ == 0:
        pytest.skip("this PyOD/BLAS build gave finite PCA scores on a constant column")
    assert np.isfinite(scores).all()
    with pytest.raises(NonFiniteScoresError, match="PCA returned"):
        PyODDetector("PCA").fit(X).decision_function(X[:10])


def test_unknown_or_unfitted_detector():
    with pytest.raises(ValueError, match="unknown PyOD detector"):
        PyODDetector("DeepSVDD")
    with pytest.raises(RuntimeError, match="not fitted"):
        PyODDetector("KNN").decision_function(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="at least 2 rows"):
        PyODDetector("KNN").fit(np.zeros((1, 2)))
