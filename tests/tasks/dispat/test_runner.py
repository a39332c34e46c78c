import asyncio

import numpy as np

from methods.dispat import DiSPaTConfig, LMDetectorConfig
from tasks.dispat._runner import DetectorRunner, LLMSettings
from tasks.dispat.dataset import load_wbc, make_split


def _runner():
    cfg = LMDetectorConfig()
    splits = {("wbc", 0): make_split(load_wbc(), 0)}
    return DetectorRunner(splits, nonfinite="fail", llm=LLMSettings("default", cfg, DiSPaTConfig(lm=cfg), "standard", "letters"),
                          model_name=lambda: "default")


def test_each_split_and_method_is_fit_once_under_concurrency(monkeypatch):
    runner = _runner()
    calls = []
    real_run = runner._run

    def counting(dataset, seed, method):
        calls.append((dataset, seed, method))
        return real_run(dataset, seed, method)

    monkeypatch.setattr(runner, "_run", counting)

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
    res = runner._run("wbc", 0, "KNN")
    assert res.scores is None and res.error == "MemoryError: no room"
    assert np.isfinite(res.fit_seconds)
