"""AnoLLM (Tsai et al., ICLR 2025): fine-tune a causal LM on serialised normal rows; the anomaly
score of a row is its summed token NLL over the value tokens, averaged over random column
permutations (higher = more anomalous)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from methods.dispat._lm import (
    EncodedRows,
    Finetune,
    LMFactory,
    ScoreTokens,
    encode_rows,
    lm_loss,
    make_optimizer,
    prepare_finetuning,
    score_encoded,
)
from methods.dispat._serialize import TabularSerializer


@dataclass(frozen=True)
class LMDetectorConfig:
    """Budget and fine-tuning knobs shared by AnoLLM and DiSPaT's warm start.

    AnoLLM's own settings: full fine-tuning, 2,000 steps, lr 5e-5, batch 8 (per device),
    max_grad_norm 0.7, 21 permutations (ODDS script). The defaults here are that recipe with a
    CPU budget: fewer steps and a cap on the training rows (both recorded as deviations).
    """

    train_steps: int = 200
    batch_size: int = 8
    lr: float = 5e-5
    finetune: Finetune = "full"
    lora_r: int = 8
    lora_alpha: int = 32
    lora_dropout: float = 0.1
    max_grad_norm: float = 0.7
    max_train_rows: int | None = 256  # subsample of the normal training rows (None = all)
    n_permutations: int = 21
    score_tokens: ScoreTokens = "values"
    score_batch_size: int = 8  # (B, T, 49k) logits dominate memory when scoring
    max_length: int = 1024
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("train_steps", "n_permutations"):
            if getattr(self, name) < (0 if name == "train_steps" else 1):
                raise ValueError(f"{name} out of range: {getattr(self, name)}")
        if self.batch_size < 1 or self.score_batch_size < 1:
            raise ValueError("batch sizes must be >= 1")
        if self.max_train_rows is not None and self.max_train_rows < 1:
            raise ValueError(f"max_train_rows must be >= 1 or None, got {self.max_train_rows}")


@dataclass
class FitReport:
    """What a fit did: rows used, losses, time (read by the task for its log)."""

    n_train_rows: int = 0
    n_train_rows_used: int = 0
    train_losses: list[float] = field(default_factory=list)
    fit_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class WarmStart:
    """An AnoLLM fine-tune that DiSPaT can start from instead of repeating it.

    DiSPaT's warm start *is* AnoLLM's fine-tuning with the same config, seed and rows, so the
    weights and the row-sampling RNG state right after it are all DiSPaT needs; ``key`` guards
    against reusing a fine-tune made with different settings.
    """

    key: tuple
    state: dict[str, Any]
    rng_state: dict[str, Any]
    losses: list[float]
    seconds: float


def warm_start_key(config: LMDetectorConfig, n_rows: int) -> tuple:
    """Everything the fine-tune's result depends on besides the data itself."""
    return (
        config.train_steps,
        config.batch_size,
        config.lr,
        config.finetune,
        config.lora_r,
        config.lora_alpha,
        config.lora_dropout,
        config.max_grad_norm,
        config.max_train_rows,
        config.max_length,
        config.seed,
        n_rows,
    )


@contextmanager
def seeded_torch(seed: int) -> Iterator[None]:
    """Torch's global RNG seeded with ``seed`` for one fit and restored afterwards.

    LoRA's adapter initialisation and dropout draw from torch's global generator; unseeded, a
    fit's result depended on whatever the process had drawn before (importing inspect's task
    module changed LoRA scores by ~0.1 %). Seeded, a fit is the same in any process, and a
    DiSPaT fit from scratch equals one from AnoLLM's shared warm start for LoRA as for full
    fine-tuning.
    """
    import torch

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        yield


def subsample_rows(X: np.ndarray, max_rows: int | None, rng: np.random.Generator) -> np.ndarray:
    if max_rows is None or X.shape[0] <= max_rows:
        return X
    return X[np.sort(rng.choice(X.shape[0], size=max_rows, replace=False))]


def check_train_matrix(X: Any, who: str) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{who}.fit needs a non-empty 2-D array, got shape {X.shape}")
    return X


def supervised_finetune(
    model: Any,
    tokenizer: Any,
    serializer: TabularSerializer,
    X: np.ndarray,
    config: LMDetectorConfig,
    rng: np.random.Generator,
) -> list[float]:
    """``train_steps`` AdamW steps of causal-LM loss on batches of freshly permuted rows."""
    import torch

    if config.train_steps == 0:
        return []
    opt, sched = make_optimizer(model, config.lr, config.train_steps)
    model.train()
    losses: list[float] = []
    for _ in range(config.train_steps):
        idx = rng.choice(X.shape[0], size=config.batch_size, replace=X.shape[0] < config.batch_size)
        enc = encode_rows(
            tokenizer, serializer.serialize(X[idx], rng=rng), max_length=config.max_length
        )
        loss = lm_loss(model, enc)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(
            [p for p in model.parameters() if p.requires_grad], config.max_grad_norm
        )
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


def permutation_scores(
    model: Any,
    tokenizer: Any,
    serializer: TabularSerializer,
    X: np.ndarray,
    config: LMDetectorConfig,
    seed: int,
) -> np.ndarray:
    """(n_rows, n_permutations) value-token NLL, one fresh column order per row and permutation."""
    X = np.asarray(X, dtype=float)
    rng = np.random.default_rng(seed)
    out = np.empty((X.shape[0], config.n_permutations))
    for p in range(config.n_permutations):
        enc: EncodedRows = encode_rows(
            tokenizer, serializer.serialize(X, rng=rng), max_length=config.max_length
        )
        out[:, p] = score_encoded(
            model, enc, score_tokens=config.score_tokens, batch_size=config.score_batch_size
        )
    return out


class AnoLLMDetector:
    """AnoLLM behind ``fit(X_normal)`` / ``decision_function(X)`` (higher = more anomalous).

    ``lm_factory`` returns a *fresh* ``(model, tokenizer)`` each call: the detector fine-tunes
    the weights it gets, so it must never receive a shared cached model.
    """

    name = "AnoLLM"

    def __init__(
        self,
        lm_factory: LMFactory,
        serializer: TabularSerializer,
        config: LMDetectorConfig | None = None,
    ) -> None:
        self.lm_factory = lm_factory
        self.serializer = serializer
        self.config = config or LMDetectorConfig()
        self.report_ = FitReport()

    def fit(self, X_normal: np.ndarray, *, keep_warm_start: bool = False) -> AnoLLMDetector:
        """Fine-tune on ``X_normal``; ``keep_warm_start`` also keeps a copy of the tuned weights
        and RNG state as ``warm_start_`` for a DiSPaT fit on the same rows."""
        t0 = time.perf_counter()
        X = check_train_matrix(X_normal, self.name)
        rng = np.random.default_rng(self.config.seed)
        X_used = subsample_rows(X, self.config.max_train_rows, rng)
        self.serializer.fit(X)  # binning statistics from every normal training row
        with seeded_torch(self.config.seed):
            model, self.tokenizer_ = self.lm_factory()
            self.model_ = prepare_finetuning(
                model,
                self.config.finetune,
                lora_r=self.config.lora_r,
                lora_alpha=self.config.lora_alpha,
                lora_dropout=self.config.lora_dropout,
            )
            losses = supervised_finetune(
                self.model_, self.tokenizer_, self.serializer, X_used, self.config, rng
            )
        seconds = time.perf_counter() - t0
        self.report_ = FitReport(X.shape[0], X_used.shape[0], losses, seconds)
        if keep_warm_start:
            self.warm_start_ = WarmStart(
                key=warm_start_key(self.config, X.shape[0]),
                state={k: v.detach().clone() for k, v in self.model_.state_dict().items()},
                rng_state=dict(rng.bit_generator.state),
                losses=list(losses),
                seconds=seconds,
            )
        return self

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        if not hasattr(self, "model_"):
            raise RuntimeError(f"{self.name} is not fitted; call fit(X_normal) first")
        scores = permutation_scores(
            self.model_, self.tokenizer_, self.serializer, X, self.config, self.config.seed + 1
        )
        return scores.mean(axis=1)
