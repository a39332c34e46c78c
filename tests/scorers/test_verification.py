"""Verification metrics: macro/micro accuracy, Thm 5.3, SNR, precision/recall, the @metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore, Score

from scorers.verification import (
    macro_accuracy,
    micro_accuracy,
    precision_recall,
    snr,
    thm53,
    thm53_independent,
    tts_metrics,
    verification_metrics,
)


def test_macro_is_the_unweighted_mean_of_subtask_accuracies() -> None:
    correct = [1, 1, 1, 0, 0, 1]
    groups = ["a", "a", "a", "a", "b", "b"]  # a: 3/4, b: 1/2
    macro, per = macro_accuracy(correct, groups)
    assert per == {"a": 0.75, "b": 0.5} and macro == pytest.approx(0.625)
    assert micro_accuracy(correct) == pytest.approx(4 / 6)
    assert math.isnan(macro_accuracy([], [])[0]) and math.isnan(micro_accuracy([]))
    with pytest.raises(ValueError):
        macro_accuracy([1], ["a", "b"])


def test_thm53_holds_exactly_on_the_product_distribution() -> None:
    rng = np.random.default_rng(0)
    acc = (rng.uniform(size=37) < 0.6).astype(float)
    for g in (
        rng.normal(1.0, 2.0, size=23),
        rng.normal(size=(23, 5)) + 0.3,
        (rng.uniform(size=23) < 0.4).astype(float),
    ):
        res = thm53_independent(acc, g)
        assert res.var_joint == pytest.approx(res.rhs, rel=1e-12, abs=1e-12)
        assert res.n == 37 * 23 and res.p_acc == pytest.approx(acc.mean())
        # Cor 5.4 under independence
        assert res.snr_joint <= res.p_acc * res.snr_dec + 1e-12


def test_thm53_on_paired_streams_matches_its_covariance_decomposition() -> None:
    rng = np.random.default_rng(1)
    g = (rng.uniform(size=400) < 0.5).astype(float)
    acc = np.where(rng.uniform(size=400) < 0.8, g, 1 - g)  # strongly dependent on g
    res = thm53(acc, g)
    p = acc.mean()
    cov_ag2 = np.mean(acc * g**2) - p * np.mean(g**2)
    cov_ag = np.mean(acc * g) - p * g.mean()
    # Var(AG) = p E[G²] + Cov(A, G²) − (p E G + Cov(A, G))², and rhs = p Var G + p(1−p)(E G)²
    assert res.var_joint == pytest.approx(
        p * np.mean(g**2) + cov_ag2 - (p * g.mean() + cov_ag) ** 2
    )
    assert res.rhs == pytest.approx(p * g.var() + p * (1 - p) * g.mean() ** 2)
    assert abs(res.dependence) > 1e-3  # dependence shows
    indep = thm53(acc, rng.permutation(g))
    assert abs(indep.dependence) < 0.02  # shuffled pairing: independent up to sampling noise


def test_snr_definition_and_edges() -> None:
    assert snr([1.0, 1.0, 0.0, 0.0]) == pytest.approx(0.25 / 0.25)
    assert snr([[1.0, 0.0], [1.0, 2.0]]) == pytest.approx((1 + 1) / 1.0)
    assert snr([2.0, 2.0]) == math.inf and math.isnan(snr([0.0, 0.0])) and math.isnan(snr([]))
    with pytest.raises(ValueError, match="0/1"):
        thm53([0.5], [1.0])
    with pytest.raises(ValueError, match="samples"):
        thm53([1.0, 0.0], [1.0])


def test_precision_recall() -> None:
    assert precision_recall(3, 1, 2) == (0.75, 0.6)
    p, r = precision_recall(0, 0, 0)
    assert math.isnan(p) and math.isnan(r)


def _sample(
    i: int,
    subtask: str,
    label: int,
    judgment: int,
    localised: int = 0,
    has_box: int = 1,
    fmt: int = 1,
):
    joint = fmt + judgment * (1 if label else localised)
    dec = [fmt + judgment] + ([] if label else [fmt + localised])
    value = {
        "judgment": judgment,
        "format": fmt,
        "label": label,
        "has_gold_box": has_box if not label else 0,
        "localised": localised,
        "iou": 0.7 * localised,
        "joint": joint,
        "decoupled_sum": sum(dec),
        "decoupled_n": len(dec),
    }
    return SampleScore(score=Score(value=value), sample_id=i, sample_metadata={"subtask": subtask})


def test_verification_metric_by_hand() -> None:
    scores = [
        _sample(1, "A", 1, 1),
        _sample(2, "A", 0, 1, localised=1),
        _sample(3, "B", 1, 0),
        _sample(4, "B", 0, 0, localised=1),
        _sample(5, "B", 0, 1, localised=0),
    ]
    m = verification_metrics()(scores)
    assert m["accuracy/A"] == 1.0 and m["accuracy/B"] == pytest.approx(1 / 3)
    assert m["macro_accuracy"] == pytest.approx((1 + 1 / 3) / 2)
    assert m["micro_accuracy"] == pytest.approx(3 / 5)
    assert m["localisation"] == pytest.approx(2 / 3)
    assert m["joint_reward"] == pytest.approx((2 + 2 + 1 + 1 + 1) / 5)
    assert m["decoupled_reward"] == pytest.approx((2 + 2 + 2 + 1 + 1 + 2 + 2 + 1) / 8)
    # grounding streams on y=False: acc (1, 0, 1), meta (1, 1, 0) → joint G = (1, 0, 0)
    assert m["p_acc_false"] == pytest.approx(2 / 3)
    assert m["grounding_snr_joint"] == pytest.approx((1 / 9) / (2 / 9))
    assert m["grounding_snr_decoupled"] == pytest.approx((4 / 9) / (2 / 9))
    no_box = verification_metrics()([_sample(1, "A", 0, 1, localised=0, has_box=0)])
    assert math.isnan(no_box["localisation"]) and "p_acc_false" not in no_box
    with pytest.raises(ValueError, match="dict"):
        verification_metrics()([SampleScore(score=Score(value=1.0), sample_id=1)])


def test_tts_metric_by_hand() -> None:
    def s(i, tts, bon, tp, fp, fn, tn):
        v = {
            "tts_success": tts,
            "bon_success": bon,
            "initial_success": 0,
            "tts_rounds": 2,
            "tts_calls": 2,
            "bon_calls": 3,
            "verifier_tp": tp,
            "verifier_fp": fp,
            "verifier_fn": fn,
            "verifier_tn": tn,
        }
        return SampleScore(score=Score(value=v), sample_id=i)

    m = tts_metrics()([s(1, 1, 0, 2, 1, 0, 1), s(2, 1, 1, 1, 0, 1, 3)])
    assert m["tts_success"] == 1.0 and m["bon_success"] == 0.5 and m["tts_gain"] == 0.5
    assert m["verifier_precision"] == pytest.approx(3 / 4) and m[
        "verifier_recall"
    ] == pytest.approx(3 / 4)
    assert m["verifier_accuracy"] == pytest.approx(7 / 9)
