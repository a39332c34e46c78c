"""DiSPaT: f-divergence self-play fine-tuning of a row-serialising LM for anomaly detection.

What the paper states (ICML 2026, abstract/TL;DR only; no full text or code was available):
each iteration the current policy generates synthetic rows (pseudo-anomalies), a critic learns to
separate them from real normal rows, and that signal updates the policy; the objective is an
f-divergence with a tight variational approximation.

What is **inferred** here (see tasks/dispat/README.md):

1. Warm start: the policy is first fine-tuned on serialised normal rows (AnoLLM's objective),
   as SPIN starts from an SFT model.
2. Critic = the policy's log-likelihood ratio against the previous iterate (SPIN's "main
   player"): ``v_theta(x) = beta * (log pi_theta(x) - log pi_t(x))``, passed through the f-GAN
   activation, ``T = g_f(v)``.
3. Policy update = maximise the f-GAN bound ``E_P[g_f(v)] - E_{pi_t}[f*(g_f(v))]`` with P the
   real normal rows and pi_t's own samples as the other distribution (the critic and the policy
   share parameters, so training the critic *is* the policy update; gradients never pass through
   discrete sampling). ``f`` is a parameter (kl, reverse_kl, pearson, squared_hellinger, js, gan).
   ``gan`` is *not* SPIN's loss: its bound is E_P[log σ(v)] + E_{π_t}[log(1 − σ(v))], a
   discriminator objective on real and synthetic rows apart, whereas SPIN's loss
   log(1 + e^{−(v_r − v_s)}) depends only on the gap of a (real, synthetic) pair (at
   v_r = v_s = 1: −1.6265 vs −0.6931). SPIN itself is the f-free ``objective="spin"``.
4. Optional ``nll_weight`` adds the AnoLLM NLL of the real rows to the loss (0 = pure bound).
5. Test-time score = AnoLLM's value-token NLL under the final policy, averaged over permutations.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F

from methods.dispat._anollm import (
    FitReport,
    LMDetectorConfig,
    WarmStart,
    check_train_matrix,
    permutation_scores,
    seeded_torch,
    subsample_rows,
    supervised_finetune,
    warm_start_key,
)
from methods.dispat._fdiv import get_f_divergence
from methods.dispat._lm import (
    LMFactory,
    encode_rows,
    make_optimizer,
    prepare_finetuning,
    sample_sequences,
    sequence_logprob,
)
from methods.dispat._serialize import TabularSerializer

Objective = Literal["f_gan", "spin"]
OBJECTIVES: tuple[str, ...] = ("f_gan", "spin")


def spin_objective(v_real: torch.Tensor, v_syn: torch.Tensor) -> torch.Tensor:
    """SPIN's objective (Chen et al., ICML 2024, eq. 4.7, negated loss) over paired critic values:
    ``mean_i log σ(v_real[i] − v_syn[i])`` = −mean log(1 + e^{−(v_r − v_s)}); maximised."""
    return -F.softplus(-(v_real - v_syn)).mean()


@dataclass(frozen=True)
class DiSPaTConfig:
    """Self-play knobs; ``lm`` holds the warm start, fine-tuning and scoring settings.

    ``objective``: ``f_gan`` (the inferred DiSPaT objective: the f-GAN bound with
    ``f_divergence``) or ``spin`` (SPIN's logistic loss on the (real, synthetic) gap; ``f`` is
    then unused) — a baseline for the f-divergence choice.
    """

    lm: LMDetectorConfig = field(default_factory=LMDetectorConfig)
    iterations: int = 2
    samples_per_iteration: int = 32  # synthetic rows drawn from pi_t (and as many real rows)
    steps_per_iteration: int = 16
    pair_batch_size: int = 4
    f_divergence: str = "js"
    objective: Objective = "f_gan"
    beta: float = 0.1
    lr: float = 5e-5
    nll_weight: float = 0.0
    temperature: float = 1.0
    max_new_tokens: int | None = None  # None: 1.25 x the longest real row in the iteration

    def __post_init__(self) -> None:
        get_f_divergence(self.f_divergence)  # fail early on an unknown name
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        if self.iterations < 0 or self.steps_per_iteration < 0:
            raise ValueError("iterations and steps_per_iteration must be >= 0")
        if self.samples_per_iteration < 1 or self.pair_batch_size < 1:
            raise ValueError("samples_per_iteration and pair_batch_size must be >= 1")
        if self.beta <= 0:
            raise ValueError(f"beta must be > 0, got {self.beta}")


class DiSPaTDetector:
    """DiSPaT behind ``fit(X_normal)`` / ``decision_function(X)`` (higher = more anomalous)."""

    name = "DiSPaT"

    def __init__(
        self,
        lm_factory: LMFactory,
        serializer: TabularSerializer,
        config: DiSPaTConfig | None = None,
    ) -> None:
        self.lm_factory = lm_factory
        self.serializer = serializer
        self.config = config or DiSPaTConfig()
        self.report_ = FitReport()
        self.history_: list[dict[str, float]] = []

    def fit(self, X_normal: np.ndarray, *, warm_start: WarmStart | None = None) -> DiSPaTDetector:
        """Warm start (AnoLLM fine-tuning), then the self-play iterations.

        ``warm_start``: an ``AnoLLMDetector.warm_start_`` made on the same rows with the same
        config; the fine-tune is then loaded instead of repeated (same weights and RNG state,
        so the result is the same; its seconds are added to this fit's time). A mismatching
        one raises ``ValueError``.
        """
        t0 = time.perf_counter()
        cfg, lm_cfg = self.config, self.config.lm
        X = check_train_matrix(X_normal, self.name)
        if warm_start is not None and warm_start.key != warm_start_key(lm_cfg, X.shape[0]):
            raise ValueError("DiSPaT warm start was made with a different config or training set")
        rng = np.random.default_rng(lm_cfg.seed)
        X_used = subsample_rows(X, lm_cfg.max_train_rows, rng)
        self.serializer.fit(X)
        shared_s = 0.0
        with seeded_torch(lm_cfg.seed):  # as AnoLLM's fit: LoRA init and dropout reproducible
            model, self.tokenizer_ = self.lm_factory()
            self.model_ = prepare_finetuning(
                model,
                lm_cfg.finetune,
                lora_r=lm_cfg.lora_r,
                lora_alpha=lm_cfg.lora_alpha,
                lora_dropout=lm_cfg.lora_dropout,
            )
            if warm_start is None:
                losses = supervised_finetune(
                    self.model_, self.tokenizer_, self.serializer, X_used, lm_cfg, rng
                )
            else:
                self.model_.load_state_dict(warm_start.state)
                self.model_.eval()
                rng.bit_generator.state = warm_start.rng_state
                losses, shared_s = list(warm_start.losses), warm_start.seconds
            self.history_ = [
                self._self_play_iteration(X_used, it, rng) for it in range(cfg.iterations)
            ]
        self.report_ = FitReport(
            X.shape[0],
            X_used.shape[0],
            losses,
            time.perf_counter() - t0 + shared_s,
            extra={
                "self_play": self.history_,
                "warm_start": "shared AnoLLM fit" if warm_start else "own",
            },
        )
        return self

    def _self_play_iteration(
        self, X: np.ndarray, it: int, rng: np.random.Generator
    ) -> dict[str, float]:
        cfg, lm_cfg = self.config, self.config.lm
        fdiv = get_f_divergence(cfg.f_divergence)
        model, tok = self.model_, self.tokenizer_
        m = cfg.samples_per_iteration
        idx = rng.choice(X.shape[0], size=m, replace=X.shape[0] < m)
        real = encode_rows(
            tok, self.serializer.serialize(X[idx], rng=rng), max_length=lm_cfg.max_length
        )
        longest = int(real.attention_mask.sum(dim=1).max())
        max_new = cfg.max_new_tokens or int(np.ceil(1.25 * longest))
        # 1. pi_t generates pseudo-anomalies.
        syn_ids, syn_att = sample_sequences(
            model,
            tok,
            m,
            max_new_tokens=max_new,
            temperature=cfg.temperature,
            seed=lm_cfg.seed * 1000 + it,
            batch_size=lm_cfg.score_batch_size,
        )
        # 2. pi_t's log-probabilities: the fixed opponent of this iteration.
        model.eval()
        with torch.no_grad():
            ref_real = _batched_logprob(
                model, real.input_ids, real.attention_mask, lm_cfg.score_batch_size
            )
            ref_syn = _batched_logprob(model, syn_ids, syn_att, lm_cfg.score_batch_size)
        # 3. Maximise the f-GAN bound (or SPIN's objective) over theta (critic = beta * log-ratio
        # to pi_t).
        # eval() mode during the updates: dropout (LoRA's) would make v != 0 at theta = pi_t and
        # add noise to the log-ratio; gradients flow regardless of the mode.
        opt, sched = make_optimizer(model, cfg.lr, cfg.steps_per_iteration)
        bounds: list[float] = []
        for _ in range(cfg.steps_per_iteration):
            b = rng.choice(m, size=min(cfg.pair_batch_size, m), replace=False)
            bi = torch.as_tensor(b, dtype=torch.long)
            lp_real = sequence_logprob(model, *_trim(real.input_ids[bi], real.attention_mask[bi]))
            lp_syn = sequence_logprob(model, *_trim(syn_ids[bi], syn_att[bi]))
            v_real = cfg.beta * (lp_real - ref_real[bi])
            v_syn = cfg.beta * (lp_syn - ref_syn[bi])
            bound = (
                spin_objective(v_real, v_syn)
                if cfg.objective == "spin"
                else fdiv.bound(v_real, v_syn)
            )
            loss = -bound
            if cfg.nll_weight:
                n_tok = real.attention_mask[bi, 1:].sum(dim=1).clamp(min=1)
                loss = loss + cfg.nll_weight * (-lp_real / n_tok).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(
                [p for p in model.parameters() if p.requires_grad], lm_cfg.max_grad_norm
            )
            opt.step()
            sched.step()
            bounds.append(float(bound.detach()))
        model.eval()
        with torch.no_grad():
            new_real = _batched_logprob(
                model, real.input_ids, real.attention_mask, lm_cfg.score_batch_size
            )
            new_syn = _batched_logprob(model, syn_ids, syn_att, lm_cfg.score_batch_size)
        return {
            "iteration": float(it),
            "bound_first": bounds[0] if bounds else float("nan"),
            "bound_last": bounds[-1] if bounds else float("nan"),
            "mean_logratio_real": float((new_real - ref_real).mean()),
            "mean_logratio_synthetic": float((new_syn - ref_syn).mean()),
            "synthetic_mean_tokens": float(syn_att.sum(dim=1).float().mean()),
            "synthetic_well_formed": _well_formed_fraction(tok, syn_ids, syn_att, self.serializer),
        }

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        if not hasattr(self, "model_"):
            raise RuntimeError(f"{self.name} is not fitted; call fit(X_normal) first")
        lm_cfg = self.config.lm
        return permutation_scores(
            self.model_, self.tokenizer_, self.serializer, X, lm_cfg, lm_cfg.seed + 1
        ).mean(axis=1)


def _trim(ids: torch.Tensor, att: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    width = int(att.sum(dim=1).max())
    return ids[:, :width], att[:, :width]


def _batched_logprob(model, ids: torch.Tensor, att: torch.Tensor, batch_size: int) -> torch.Tensor:
    parts = [
        sequence_logprob(model, *_trim(ids[lo : lo + batch_size], att[lo : lo + batch_size]))
        for lo in range(0, ids.shape[0], batch_size)
    ]
    return torch.cat(parts).detach()


def _well_formed_fraction(
    tok, ids: torch.Tensor, att: torch.Tensor, serializer: TabularSerializer
) -> float:
    """Share of samples that are a full row: every column exactly once as "<col> is <value>"."""
    columns = set(serializer.columns_)
    good = 0
    for i in range(ids.shape[0]):
        text = tok.decode(ids[i, 1 : int(att[i].sum())], skip_special_tokens=True)
        names = [part.split(" is ", 1)[0].strip() for part in text.split(", ") if " is " in part]
        fields = [part for part in text.split(", ")]
        good += int(len(fields) == len(columns) and sorted(names) == sorted(columns))
    return good / max(1, ids.shape[0])
