"""End to end through inspect with the scripted model (the PyOD methods never call it)."""

import inspect

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from sklearn.metrics import roc_auc_score

from methods.dispat import PyODDetector
from scorers.stats import sample_order_key
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


# A constant column (rank_deficient_npz) is the point: PyOD's weighted PCA divides by a
# zero-variance component and numpy then subtracts inf from inf.
@pytest.mark.filterwarnings("ignore:divide by zero encountered in divide:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered in subtract:RuntimeWarning")
def test_pyod_methods_end_to_end_and_pca_failure_is_reported(rank_deficient_npz):
    probe = PyODDetector("PCA", nonfinite="max_finite").fit(load_npz(rank_deficient_npz).X[:22])
    probe.decision_function(load_npz(rank_deficient_npz).X)
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
            roc_auc_score(
                sp.y_test, PyODDetector("KNN").fit(sp.X_train).decision_function(sp.X_test)
            )
        )
    assert metrics["toy/KNN/auroc"] == pytest.approx(np.mean(expected))
    assert metrics["toy/PCA/n_failed"] == 2 and metrics["toy/PCA/n_seeds"] == 0
    assert "toy/PCA/auroc" not in metrics
    sample = log.samples[0]
    assert "PCA" in sample.scores["anomaly_scores"].metadata["errors"]
    assert "non-finite" in sample.scores["anomaly_scores"].metadata["errors"]["PCA"]
    assert set(sample.scores["anomaly_scores"].value) == {"KNN"}
    assert log.eval.metadata["score_convention"] == "higher = more anomalous"


# A constant column (rank_deficient_npz) is the point: PyOD's weighted PCA divides by a
# zero-variance component and numpy then subtracts inf from inf.
@pytest.mark.filterwarnings("ignore:divide by zero encountered in divide:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered in subtract:RuntimeWarning")
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
    with pytest.raises(ValueError, match="unknown f-divergence 'tv'"):
        dispat(f_divergence="tv")


def test_choice_parameters_are_literals_the_cli_checks():
    """The CLI refuses a value outside a ``Literal`` naming the choices (no hand-written checks
    in the task); the literals list exactly what ``methods.dispat`` accepts."""
    import typing

    from harness.cli.config import ConfigError, build_eval_config
    from harness.cli.discovery import TaskEntry
    from methods.dispat import (
        BINNINGS,
        F1_THRESHOLDS,
        F_DIVERGENCES,
        NONFINITE_POLICIES,
        OBJECTIVES,
    )
    from tasks.dispat import task as task_mod

    hints = typing.get_type_hints(inspect.unwrap(dispat))
    assert typing.get_args(hints["nonfinite"]) == NONFINITE_POLICIES
    assert typing.get_args(hints["binning"]) == BINNINGS
    assert typing.get_args(hints["f_divergence"]) == tuple(F_DIVERGENCES)
    assert typing.get_args(hints["dispat_objective"]) == OBJECTIVES
    assert typing.get_args(hints["f1_threshold"]) == F1_THRESHOLDS
    assert typing.get_args(hints["finetune"]) == typing.get_args(task_mod.Finetune)
    tasks = {"dispat": TaskEntry.from_function("dispat", inspect.unwrap(dispat))}
    with pytest.raises(ConfigError, match="fail|max_finite"):
        build_eval_config(["task=dispat", "nonfinite=drop"], tasks, all_tasks=["dispat"])
    _, args, _ = build_eval_config(
        ["task=dispat", "f1_threshold=top_k"], tasks, all_tasks=["dispat"]
    )
    assert args["dispat"] == {"f1_threshold": "top_k"}


def test_f1_threshold_option_is_used_and_recorded(rank_deficient_npz):
    from methods.dispat import f1_at_contamination

    ds = load_npz(rank_deficient_npz)
    sp = make_split(ds, 0)
    scores = PyODDetector("KNN").fit(sp.X_train).decision_function(sp.X_test)
    for rule in ("percentile", "top_k"):
        log = _run(
            dispat(method="KNN", dataset=str(rank_deficient_npz), seeds=[0], f1_threshold=rule)
        )
        metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
        want = f1_at_contamination(sp.y_test, scores, threshold=rule)
        assert metrics["toy/KNN/f1"] == pytest.approx(want)
        assert log.eval.metadata["f1_threshold"] == rule
        assert any("f1_threshold=top_k" in d for d in log.eval.metadata["deviations"]) == (
            rule == "top_k"
        )


def test_run_all_args_are_valid_parameters():
    params = inspect.signature(inspect.unwrap(dispat)).parameters
    assert set(RUN_ALL_ARGS) <= set(params)
    assert RUN_ALL_ARGS["method"] == "all" and RUN_ALL_ARGS["dataset"] == "wbc"


def test_report_reads_one_row_per_method_with_intervals(rank_deficient_npz, tmp_path):
    """The packaged leaderboard.yaml on a real dispat log: one row per method (not one more per
    dataset key), the logged mean as the value, and a bootstrap interval over the test rows,
    which for one dataset and seed is the logged AUROC's own."""
    from reports import build_report
    from scorers.stats import detection_interval

    log_dir = tmp_path / "logs"
    [log] = inspect_eval(
        dispat(method="KNN,IForest", dataset=str(rank_deficient_npz), seeds=[0]),
        model=get_model("scripted/unused", reply="unused"),
        display="none",
        log_dir=str(log_dir),
    )
    assert log.status == "success", log.error
    logged = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    result = build_report(log_dir, tmp_path / "out", n_boot=200)
    [board] = [lb for lb in result.leaderboards if lb.task == "dispat"]
    rows = {row.method: row for row in board.rows}
    assert set(rows) == {"KNN", "IForest"}
    labels = [s.scores["anomaly_scores"].metadata["label"] for s in log.samples]
    for method, row in rows.items():
        cell = row.cells["auroc"]
        assert cell.value == logged[f"{method}/auroc"] == logged[f"toy/{method}/auroc"]
        assert cell.interval == "bootstrap" and cell.n == len(labels) and cell.note == ""
        scores = [s.scores["anomaly_scores"].value[method] for s in log.samples]
        ids = [s.id for s in log.samples]
        order = sorted(range(len(ids)), key=lambda i: sample_order_key(ids[i]))
        ci = detection_interval(
            "auroc", [labels[i] for i in order], [scores[i] for i in order], n_boot=200
        )
        assert (cell.low, cell.high) == (ci.low, ci.high)
    assert "IForest" in rows["KNN"].comparisons["auroc"].baseline.split(" · ")
