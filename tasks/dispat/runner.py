"""Fit each detector once per (dataset, seed, method) and cache its test-row scores.

inspect scores one sample (one test row) at a time; the detectors need the whole split. The first
sample of a split fits the detector (in a worker thread, under a per-key lock) and scores every
test row at once; later samples read the cache. A failure (non-finite scores, a crash in a
detector) is cached too and becomes a scored failure with its reason, never a traceback.

Public API: :class:`DetectorRunner` (``await runner.result(...)`` in the task, cached;
``runner.run(...)`` to fit and score one cell directly, as ``measure.py`` and the bench do),
:class:`LLMSettings`, :class:`MethodResult`, :func:`lm_factory_for`.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from methods.dispat import (
    AnoLLMDetector,
    DiSPaTConfig,
    DiSPaTDetector,
    LMDetectorConfig,
    LMFactory,
    NonFinitePolicy,
    NonFiniteScoresError,
    PyODDetector,
    TabularSerializer,
)
from tasks.dispat.dataset import Split

__all__ = ["DetectorRunner", "LLMSettings", "MethodResult", "lm_factory_for"]


@dataclass
class MethodResult:
    """One (dataset, seed, method) cell: test-row scores or the failure's reason, and timing."""

    scores: np.ndarray | None  # one per test row, higher = more anomalous
    error: str | None
    fit_seconds: float
    score_seconds: float
    n_nonfinite_replaced: int = 0
    diagnostics: dict | None = None


@dataclass(frozen=True)
class LLMSettings:
    """What the LLM detectors (AnoLLM, DiSPaT) are built from."""

    lm: str
    config: LMDetectorConfig
    dispat: DiSPaTConfig
    binning: str
    column_names: str  # "dataset" (names when the source has them) or "letters"


def lm_factory_for(lm: str, model_name: Callable[[], str]) -> LMFactory:
    """A factory returning a *fresh* (model, tokenizer) per fit (fine-tuning mutates weights)."""

    def factory():
        from harness.models import WhiteBoxLM, whitebox_for_model

        if lm == "model_under_test":
            handle = whitebox_for_model(model_name())
            # float32 for training: the shared handle may run in bf16, where updates vanish.
            return copy.deepcopy(handle.model).float(), handle.tokenizer
        handle = WhiteBoxLM.load(lm)
        return handle.model, handle.tokenizer

    return factory


class DetectorRunner:
    """Fits each (dataset, seed, method) once and hands every test row its cached score."""

    def __init__(
        self,
        splits: dict[tuple[str, int], Split],
        *,
        nonfinite: NonFinitePolicy,
        llm: LLMSettings,
        model_name: Callable[[], str],
        share_warm_start: bool = False,
    ) -> None:
        """``share_warm_start``: when both AnoLLM and DiSPaT run on a split, DiSPaT starts from
        AnoLLM's fine-tune instead of repeating it (identical by construction; saves one
        fine-tune per split). Only set it when DiSPaT will run, or the copies wait unused."""
        self.splits = splits
        self.share_warm_start = share_warm_start
        self._warm: dict[tuple[str, int], Any] = {}
        self._dispat_started: set[tuple[str, int]] = set()
        self.nonfinite = nonfinite
        self.llm = llm
        self.model_name = model_name
        self._cache: dict[tuple[str, int, str], MethodResult] = {}
        self._locks: dict[tuple[str, int, str], asyncio.Lock] = {}

    async def result(self, dataset: str, seed: int, method: str) -> MethodResult:
        key = (dataset, seed, method)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            if key not in self._cache:
                self._cache[key] = await asyncio.to_thread(self.run, dataset, seed, method)
            return self._cache[key]

    def _make(self, method: str, split: Split):
        if method in ("AnoLLM", "DiSPaT"):
            names = split.column_names if self.llm.column_names == "dataset" else None
            serializer = TabularSerializer(names, binning=self.llm.binning)  # type: ignore[arg-type]
            factory = lm_factory_for(self.llm.lm, self.model_name)
            cfg = _reseed(self.llm.config, split.seed)
            if method == "AnoLLM":
                return AnoLLMDetector(factory, serializer, cfg)
            return DiSPaTDetector(factory, serializer, _replace(self.llm.dispat, lm=cfg))
        return PyODDetector(method, seed=split.seed, nonfinite=self.nonfinite)

    def run(self, dataset: str, seed: int, method: str) -> MethodResult:
        """Fit ``method`` on the split's training rows and score its test rows (no cache: the
        task goes through :meth:`result`). A failure is returned with its reason, not raised."""
        import torch

        split = self.splits[(dataset, seed)]
        t0 = time.perf_counter()
        fit_s = 0.0
        try:
            det = self._make(method, split)
            with torch.inference_mode(False):
                if (
                    method == "AnoLLM"
                    and self.share_warm_start
                    and (dataset, seed) not in self._dispat_started
                ):
                    det.fit(split.X_train, keep_warm_start=True)
                    self._warm[(dataset, seed)] = det.warm_start_
                elif method == "DiSPaT":
                    self._dispat_started.add((dataset, seed))
                    shared = self._warm.pop((dataset, seed), None)
                    det.fit(split.X_train, warm_start=shared)
                    # The shared fine-tune is part of DiSPaT's cost: count it in its fit time.
                    t0 -= shared.seconds if shared is not None else 0.0
                else:
                    det.fit(split.X_train)
            fit_s = time.perf_counter() - t0
            t1 = time.perf_counter()
            scores = np.asarray(det.decision_function(split.X_test), dtype=float)
            score_s = time.perf_counter() - t1
        except NonFiniteScoresError as exc:
            return MethodResult(None, str(exc), fit_s, time.perf_counter() - t0 - fit_s)
        except Exception as exc:  # a detector crash is this method's failure, not the eval's  # noqa: BLE001
            return MethodResult(
                None, f"{type(exc).__name__}: {exc}", fit_s, time.perf_counter() - t0 - fit_s
            )
        diag = None
        n_replaced = getattr(det, "n_nonfinite_", 0)
        if hasattr(det, "report_"):
            rep = det.report_
            diag = {
                "n_train_rows": rep.n_train_rows,
                "n_train_rows_used": rep.n_train_rows_used,
                "first_loss": rep.train_losses[0] if rep.train_losses else None,
                "last_loss": rep.train_losses[-1] if rep.train_losses else None,
                **rep.extra,
            }
        # Free the fine-tuned LM now (peft/torch reference cycles otherwise keep ~2 GB alive
        # until the next full collection, while the next LLM fit allocates its own).
        del det
        gc.collect()
        return MethodResult(scores, None, fit_s, score_s, n_replaced, diag)


def _reseed(cfg: LMDetectorConfig, seed: int) -> LMDetectorConfig:
    return _replace(cfg, seed=seed)


def _replace(obj, **changes):
    import dataclasses

    return dataclasses.replace(obj, **changes)
