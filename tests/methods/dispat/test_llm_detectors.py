import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from methods.dispat import (
    AnoLLMDetector,
    DiSPaTConfig,
    DiSPaTDetector,
    LMDetectorConfig,
    TabularSerializer,
)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X_train = rng.normal(size=(64, 3))
    X_test = np.vstack([rng.normal(size=(20, 3)), rng.normal(loc=40.0, size=(6, 3))])
    y = np.r_[np.zeros(20), np.ones(6)]
    return X_train, X_test, y


FAST = LMDetectorConfig(
    train_steps=40,
    batch_size=8,
    lr=1e-2,
    max_train_rows=48,
    n_permutations=3,
    score_batch_size=16,
    seed=0,
)


def test_anollm_learns_the_normal_rows(tiny_lm_factory):
    X_train, X_test, y = _data()
    det = AnoLLMDetector(tiny_lm_factory, TabularSerializer(binning="standard"), FAST).fit(X_train)
    rep = det.report_
    assert (rep.n_train_rows, rep.n_train_rows_used, len(rep.train_losses)) == (64, 48, 40)
    assert np.mean(rep.train_losses[-5:]) < np.mean(rep.train_losses[:5]) - 0.5
    scores = det.decision_function(X_test)
    assert scores.shape == (26,) and np.isfinite(scores).all()
    np.testing.assert_allclose(det.decision_function(X_test), scores)  # same permutations each call
    assert roc_auc_score(y, scores) > 0.9


def test_anollm_score_is_the_mean_over_permutations(tiny_lm_factory):
    from methods.dispat._anollm import permutation_scores

    X_train, X_test, _ = _data()
    det = AnoLLMDetector(tiny_lm_factory, TabularSerializer(), FAST).fit(X_train)
    per = permutation_scores(
        det.model_, det.tokenizer_, det.serializer, X_test, FAST, FAST.seed + 1
    )
    assert per.shape == (26, 3)
    assert not np.allclose(per[:, 0], per[:, 1])  # column order changes the NLL
    np.testing.assert_allclose(det.decision_function(X_test), per.mean(axis=1))


@pytest.mark.parametrize("f, objective", [("js", "f_gan"), ("kl", "f_gan"), ("js", "spin")])
def test_dispat_self_play_raises_real_over_synthetic(tiny_lm_factory, f, objective):
    X_train, X_test, y = _data(1)
    cfg = DiSPaTConfig(
        lm=FAST,
        iterations=2,
        samples_per_iteration=8,
        steps_per_iteration=8,
        pair_batch_size=4,
        f_divergence=f,
        objective=objective,
        beta=0.5,
        lr=1e-3,
    )
    det = DiSPaTDetector(tiny_lm_factory, TabularSerializer(), cfg).fit(X_train)
    assert len(det.history_) == 2
    for h in det.history_:
        # The update maximises the bound: real rows gain likelihood relative to pi_t's samples.
        assert h["mean_logratio_real"] > h["mean_logratio_synthetic"]
        assert h["bound_last"] > h["bound_first"]
        assert 0.0 <= h["synthetic_well_formed"] <= 1.0
    scores = det.decision_function(X_test)
    assert np.isfinite(scores).all() and roc_auc_score(y, scores) > 0.8


def test_fresh_model_per_fit_and_errors(tiny_lm_factory):
    calls = []

    def factory():
        calls.append(1)
        return tiny_lm_factory()

    X_train, X_test, _ = _data()
    cfg = LMDetectorConfig(train_steps=1, batch_size=2, n_permutations=1)
    a = AnoLLMDetector(factory, TabularSerializer(), cfg).fit(X_train)
    b = AnoLLMDetector(factory, TabularSerializer(), cfg).fit(X_train)
    assert len(calls) == 2 and a.model_ is not b.model_
    with pytest.raises(RuntimeError, match="not fitted"):
        AnoLLMDetector(factory, TabularSerializer(), cfg).decision_function(X_test)
    with pytest.raises(ValueError, match="non-empty 2-D"):
        AnoLLMDetector(factory, TabularSerializer(), cfg).fit(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="unknown f-divergence"):
        DiSPaTConfig(f_divergence="tv")
    with pytest.raises(ValueError, match="objective must be one of"):
        DiSPaTConfig(objective="dpo")  # type: ignore[arg-type]


def test_dispat_from_shared_anollm_warm_start_equals_its_own_fit(tiny_lm_factory):
    # Full fine-tuning has no dropout noise, so loading AnoLLM's fine-tune (weights + RNG
    # state) must give exactly the DiSPaT a from-scratch fit gives.
    X_train, X_test, _ = _data(2)
    cfg = DiSPaTConfig(
        lm=FAST, iterations=1, samples_per_iteration=4, steps_per_iteration=2, lr=1e-3
    )
    own = DiSPaTDetector(tiny_lm_factory, TabularSerializer(), cfg).fit(X_train)
    ano = AnoLLMDetector(tiny_lm_factory, TabularSerializer(), FAST).fit(
        X_train, keep_warm_start=True
    )
    shared = DiSPaTDetector(tiny_lm_factory, TabularSerializer(), cfg).fit(
        X_train, warm_start=ano.warm_start_
    )
    assert shared.report_.train_losses == own.report_.train_losses == ano.report_.train_losses
    assert shared.history_ == own.history_
    np.testing.assert_array_equal(shared.decision_function(X_test), own.decision_function(X_test))
    assert (
        shared.report_.extra["warm_start"] == "shared AnoLLM fit"
        and own.report_.extra["warm_start"] == "own"
    )
    assert shared.report_.fit_seconds >= ano.warm_start_.seconds


def test_dispat_rejects_a_warm_start_from_other_settings(tiny_lm_factory):
    X_train, _, _ = _data()
    other = LMDetectorConfig(train_steps=2, batch_size=2, n_permutations=1)
    ano = AnoLLMDetector(tiny_lm_factory, TabularSerializer(), other).fit(
        X_train, keep_warm_start=True
    )
    cfg = DiSPaTConfig(lm=FAST, iterations=1, samples_per_iteration=2, steps_per_iteration=1)
    with pytest.raises(ValueError, match="different config or training set"):
        DiSPaTDetector(tiny_lm_factory, TabularSerializer(), cfg).fit(
            X_train, warm_start=ano.warm_start_
        )
    with pytest.raises(ValueError, match="different config or training set"):
        DiSPaTDetector(tiny_lm_factory, TabularSerializer(), DiSPaTConfig(lm=other)).fit(
            X_train[:10], warm_start=ano.warm_start_
        )


@pytest.mark.parametrize("finetune", ["full", "lora"])
def test_dispat_with_zero_iterations_on_a_shared_warm_start_is_anollm(
    tiny_lm_factory, finetune, monkeypatch
):
    # No self-play: the loaded fine-tune must score exactly as the AnoLLM it came from (for LoRA
    # this checks the adapter weights survive the state-dict hand-over into a fresh peft model),
    # and DiSPaT must not fine-tune again.
    from dataclasses import replace

    import methods.dispat._dispat as dispat_mod

    X_train, X_test, _ = _data(3)
    lm = replace(FAST, finetune=finetune, train_steps=5)
    ano = AnoLLMDetector(tiny_lm_factory, TabularSerializer(), lm).fit(
        X_train, keep_warm_start=True
    )

    def no_finetune(*args, **kwargs):
        raise AssertionError("DiSPaT fine-tuned again despite the warm start")

    monkeypatch.setattr(dispat_mod, "supervised_finetune", no_finetune)
    dis = DiSPaTDetector(
        tiny_lm_factory, TabularSerializer(), DiSPaTConfig(lm=lm, iterations=0)
    ).fit(X_train, warm_start=ano.warm_start_)
    np.testing.assert_allclose(
        dis.decision_function(X_test), ano.decision_function(X_test), rtol=1e-6
    )


def test_lora_fits_are_reproducible_whatever_the_process_drew_before(tiny_lm_factory):
    """LoRA's init and dropout use torch's global RNG: each fit seeds it (and restores it), so
    what the process drew before changes nothing, and DiSPaT from AnoLLM's shared LoRA fine-tune
    equals DiSPaT's own fit."""
    from dataclasses import replace

    import torch

    X_train, X_test, _ = _data(4)
    lm = replace(FAST, finetune="lora", train_steps=6)
    scores = []
    for draws in (0, 7):
        torch.manual_seed(123)
        torch.rand(draws)  # a different history of the global generator
        before = torch.get_rng_state()
        det = AnoLLMDetector(tiny_lm_factory, TabularSerializer(), lm).fit(X_train)
        assert torch.equal(torch.get_rng_state(), before)  # the caller's generator is untouched
        scores.append(det.decision_function(X_test))
    np.testing.assert_array_equal(scores[0], scores[1])
    cfg = DiSPaTConfig(lm=lm, iterations=1, samples_per_iteration=4, steps_per_iteration=2)
    own = DiSPaTDetector(tiny_lm_factory, TabularSerializer(), cfg).fit(X_train)
    ano = AnoLLMDetector(tiny_lm_factory, TabularSerializer(), lm).fit(
        X_train, keep_warm_start=True
    )
    shared = DiSPaTDetector(tiny_lm_factory, TabularSerializer(), cfg).fit(
        X_train, warm_start=ano.warm_start_
    )
    assert own.report_.train_losses == ano.report_.train_losses
    np.testing.assert_array_equal(shared.decision_function(X_test), own.decision_function(X_test))
