import math

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore, Score
from sklearn.metrics import average_precision_score, roc_auc_score

from methods.dispat import f1_at_contamination
from tasks.dispat.scorer import leaderboard_table


def _scores(labels_by_seed, values_by_seed, errors_by_seed=None, dataset="d"):
    out = []
    for seed, labels in labels_by_seed.items():
        for i, lab in enumerate(labels):
            value = {m: float(v[i]) for m, v in values_by_seed[seed].items()}
            errors = (errors_by_seed or {}).get(seed, {})
            out.append(
                SampleScore(
                    score=Score(
                        value=value,
                        metadata={
                            "dataset": dataset,
                            "seed": seed,
                            "label": int(lab),
                            "row": i,
                            "errors": errors,
                            "timing": {m: {"fit_s": 0.5, "rows_per_s": 100.0} for m in value},
                        },
                    )
                )
            )
    return out


def test_leaderboard_matches_sklearn_per_seed_and_t_interval():
    rng = np.random.default_rng(0)
    labels = {s: rng.integers(0, 2, 40) for s in (0, 1, 2)}
    vals = {s: {"A": rng.normal(size=40) + labels[s], "B": rng.normal(size=40)} for s in (0, 1, 2)}
    table = leaderboard_table(_scores(labels, vals))
    per_seed = [roc_auc_score(labels[s], vals[s]["A"]) for s in (0, 1, 2)]
    assert table["d/A/auroc"] == pytest.approx(np.mean(per_seed))
    assert table["d/A/auroc_lo"] < table["d/A/auroc"] < table["d/A/auroc_hi"]
    assert table["d/A/aupr"] == pytest.approx(
        np.mean([average_precision_score(labels[s], vals[s]["A"]) for s in (0, 1, 2)])
    )
    assert table["d/B/f1"] == pytest.approx(
        np.mean([f1_at_contamination(labels[s], vals[s]["B"]) for s in (0, 1, 2)])
    )
    assert table["A/auroc"] == table["d/A/auroc"] and table["A/n_datasets"] == 1
    assert table["d/A/n_seeds"] == 3 and table["d/A/n_failed"] == 0
    assert table["d/A/fit_s"] == 0.5 and table["d/A/rows_per_s"] == 100.0


def test_failed_seeds_are_counted_not_scored():
    labels = {0: [0, 0, 1, 1], 1: [0, 1, 0, 1]}
    vals = {0: {"A": [0, 1, 2, 3], "PCA": [0, 1, 2, 3]}, 1: {"A": [0, 1, 0, 1]}}
    table = leaderboard_table(
        _scores(labels, vals, {1: {"PCA": "PCA returned 4 non-finite score(s)"}})
    )
    assert table["d/PCA/n_seeds"] == 1 and table["d/PCA/n_failed"] == 1
    assert table["d/PCA/auroc"] == 1.0 and "d/PCA/auroc_lo" not in table  # one seed: no interval
    assert table["d/A/auroc"] == 1.0


def test_method_failing_everywhere_has_no_number():
    labels = {0: [0, 1, 0, 1]}
    vals = {0: {"A": [0, 1, 0, 1]}}
    table = leaderboard_table(_scores(labels, vals, {0: {"PCA": "boom"}}))
    assert table["d/PCA/n_seeds"] == 0 and table["d/PCA/n_failed"] == 1
    assert math.isnan(table["PCA/auroc"]) and table["PCA/n_datasets_failed"] == 1
    assert "d/PCA/auroc" not in table


def test_one_class_split_gives_nan_not_a_number():
    table = leaderboard_table(_scores({0: [0, 0, 0]}, {0: {"A": [0.1, 0.2, 0.3]}}))
    assert math.isnan(table["d/A/auroc"]) and math.isnan(table["A/auroc"])
