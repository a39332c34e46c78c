import asyncio

import numpy as np

from methods.dispat import DiSPaTConfig, LMDetectorConfig
from tasks.dispat.dataset import load_wbc, make_split
from tasks.dispat.runner import DetectorRunner, LLMSettings


def _runner():
    cfg = LMDetectorConfig()
    splits = {("wbc", 0): make_split(load_wbc(), 0)}
    return DetectorRunner(
        splits,
        nonfinite="fail",
        llm=LLMSettings("default", cfg, DiSPaTConfig(lm=cfg), "standard", "letters"),
        model_name=lambda: "default",
    )


def test_each_split_and_method_is_fit_once_under_concurrency(monkeypatch):
    runner = _runner()
    calls = []
    real_run = runner.run

    def counting(dataset, seed, method):
        calls.append((dataset, seed, method))
        return real_run(dataset, seed, method)

    monkeypatch.setattr(runner, "run", counting)

    async def many():
        return await asyncio.gather(*[runner.result("wbc", 0, "KNN") for _ in range(20)])

    results = asyncio.run(many())
    assert calls == [("wbc", 0, "KNN")]
    assert all(r is results[0] for r in results)
    assert results[0].scores.shape == (200,) and results[0].fit_seconds >= 0


def test_a_crashing_detector_is_a_reported_failure(monkeypatch):
    runner = _runner()

    def boom(method, split):
        raise MemoryError("no room")

    monkeypatch.setattr(runner, "_make", boom)
    res = runner.run("wbc", 0, "KNN")
    assert res.scores is None and res.error == "MemoryError: no room"
    assert np.isfinite(res.fit_seconds)


def test_dispat_reuses_the_anollm_fine_tune_of_its_split(monkeypatch):
    import torch

    from tasks.dispat import runner as runner_mod
    from tests.methods.dispat._tiny_lm import tiny_lm_factory_for, tiny_tokenizer

    torch.set_num_threads(1)
    factory = tiny_lm_factory_for(tiny_tokenizer())
    monkeypatch.setattr(runner_mod, "lm_factory_for", lambda lm, model_name: factory)
    cfg = LMDetectorConfig(
        train_steps=2, batch_size=4, max_train_rows=16, n_permutations=1, lr=1e-3
    )
    llm = LLMSettings(
        "default",
        cfg,
        DiSPaTConfig(lm=cfg, iterations=1, samples_per_iteration=2, steps_per_iteration=1),
        "standard",
        "letters",
    )
    split = make_split(load_wbc(), 0, max_test_rows=12)
    results = {}
    for share in (True, False):
        runner = DetectorRunner(
            {("wbc", 0): split},
            nonfinite="fail",
            llm=llm,
            model_name=lambda: "default",
            share_warm_start=share,
        )
        results[share] = {m: runner.run("wbc", 0, m) for m in ("AnoLLM", "DiSPaT")}
        assert runner._warm == {}  # the copy is handed over, not kept
    assert results[True]["DiSPaT"].diagnostics["warm_start"] == "shared AnoLLM fit"
    assert results[False]["DiSPaT"].diagnostics["warm_start"] == "own"
    np.testing.assert_array_equal(results[True]["DiSPaT"].scores, results[False]["DiSPaT"].scores)
    np.testing.assert_array_equal(results[True]["AnoLLM"].scores, results[False]["AnoLLM"].scores)
    # DiSPaT's fit time includes the fine-tune it borrowed.
    assert results[True]["DiSPaT"].fit_seconds > results[True]["AnoLLM"].fit_seconds
