"""End to end through inspect with the scripted model (the PyOD methods never call it)."""

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from sklearn.metrics import roc_auc_score

from methods.dispat import PyODDetector
from tasks.dispat.dataset import load_npz, make_split
from tasks.dispat.task import RUN_ALL_ARGS, dispat


@pytest.fixture
def rank_deficient_npz(tmp_path):
    # A constant feature makes PyOD's default PCA divide by a zero explained-variance ratio.
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=(50, 3)), np.ones(50)]
    X[-5:, :3] += 4.0
    y = np.r_[np.zeros(45), np.ones(5)].astype(int)
    path = tmp_path / "toy.npz"
    np.savez(path, X=X, y=y)
    return path


def _run(task):
    return inspect_eval(
        task, model=get_model("scripted/unused", reply="unused"), display="none", log_dir=None
    )[0]


def test_pyod_methods_end_to_end_and_pca_failure_is_reported(rank_deficient_npz):
    probe = PyODDetector("PCA", nonfinite="max_finite").fit(load_npz(rank_deficient_npz).X[:22])
    probe.score_samples(load_npz(rank_deficient_npz).X)
    if probe.n_nonfinite_ == 0:
        pytest.skip("PCA gave finite scores on a constant column with this BLAS")
    log = _run(dispat(method="KNN,PCA", dataset=str(rank_deficient_npz), seeds=[0, 1]))
    assert log.status == "success", log.error
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    ds = load_npz(rank_deficient_npz)
    expected = []
    for seed in (0, 1):
        sp = make_split(ds, seed)
        expected.append(
            roc_auc_score(sp.y_test, PyODDetector("KNN").fit(sp.X_train).score_samples(sp.X_test))
        )
    assert metrics["toy/KNN/auroc"] == pytest.approx(np.mean(expected))
    assert metrics["toy/PCA/n_failed"] == 2 and metrics["toy/PCA/n_seeds"] == 0
    assert "toy/PCA/auroc" not in metrics
    sample = log.samples[0]
    assert "PCA" in sample.scores["anomaly_scores"].metadata["errors"]
    assert "non-finite" in sample.scores["anomaly_scores"].metadata["errors"]["PCA"]
    assert set(sample.scores["anomaly_scores"].value) == {"KNN"}
    assert log.eval.metadata["score_convention"] == "higher = more anomalous"


def test_max_finite_option_scores_pca_and_records_the_deviation(rank_deficient_npz):
    log = _run(
        dispat(method="PCA", dataset=str(rank_deficient_npz), seeds=[0], nonfinite="max_finite")
    )
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert metrics["toy/PCA/n_seeds"] == 1 and 0.0 <= metrics["toy/PCA/auroc"] <= 1.0
    assert any("max_finite" in d for d in log.eval.metadata["deviations"])


def test_bad_parameters_fail_clearly():
    with pytest.raises(ValueError, match="unknown method"):
        dispat(method="DeepSVDD")
    with pytest.raises(ValueError, match="nonfinite must be one of"):
        dispat(nonfinite="drop")
    with pytest.raises(ValueError, match="f_divergence"):
        dispat(f_divergence="tv")


def test_run_all_args_are_valid_parameters():
    import inspect

    params = inspect.signature(inspect.unwrap(dispat)).parameters
    assert set(RUN_ALL_ARGS) <= set(params)
    assert RUN_ALL_ARGS["method"] == "all" and RUN_ALL_ARGS["dataset"] == "wbc"
