"""Grey-box baselines from the top-k logprobs an API or vLLM returns (no features, no W).

Input per answer: ``chosen`` (T,) = logprob of each emitted token, and ``top`` (T, k) = the top-k
logprobs at each step (pad missing entries with -inf or NaN). What survives without logits:

- ``perplexity`` (mean log p(emitted)) and ``msp`` (exp of the top-1 logprob): exact.
- ``entropy``: Σ_{top-k} p log p, a truncated estimate (the tail mass 1 − Σ_top-k p is unseen;
  ``renormalize=True`` rescales the top-k to sum to 1 instead). Exact when k = V.
- energy, NCI and fDBD need raw logits / features and are not available here: logprobs are
  normalised (their logsumexp is 0), so the energy is lost.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from methods.ood._aggregate import Aggregation, aggregate

__all__ = ["GREYBOX_DETECTORS", "greybox_scores", "greybox_token_scores"]

GREYBOX_DETECTORS: tuple[str, ...] = ("perplexity", "msp", "entropy")


def _prepare(chosen: Any, top: Any) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(chosen, dtype=np.float64).reshape(-1)
    t = np.asarray(top, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] != c.shape[0] or t.shape[1] < 1:
        raise ValueError(f"top logprobs must be (T, k≥1) with T = {c.shape[0]}; got {t.shape}")
    if not np.all(np.isfinite(c)):
        raise ValueError("chosen-token logprobs must be finite")
    t = np.where(np.isnan(t), -np.inf, t)
    if np.any(t > 1e-6):
        raise ValueError("top logprobs must be ≤ 0 (log probabilities)")
    return c, t


def greybox_token_scores(
    chosen: Any, top: Any, *, renormalize: bool = False
) -> dict[str, np.ndarray]:
    """Per-token confidences (higher = more confident) for the grey-box baselines."""
    c, t = _prepare(chosen, top)
    p = np.exp(t)
    with np.errstate(invalid="ignore"):
        plogp = np.where(p > 0, p * t, 0.0)
    if renormalize:
        mass = p.sum(axis=1, keepdims=True)
        q = p / mass
        with np.errstate(divide="ignore", invalid="ignore"):
            neg_ent = np.where(q > 0, q * np.log(q), 0.0).sum(axis=1)
    else:
        neg_ent = plogp.sum(axis=1)
    return {"perplexity": c, "msp": np.exp(t.max(axis=1)), "entropy": neg_ent}


def greybox_scores(
    chosen: Any,
    top: Any,
    *,
    aggregation: Aggregation = "mean",
    last_k: int = 8,
    renormalize: bool = False,
) -> dict[str, float]:
    """One confidence per grey-box detector for an answer (higher = less likely hallucinated)."""
    per_token = greybox_token_scores(chosen, top, renormalize=renormalize)
    return {name: aggregate(v, aggregation, last_k) for name, v in per_token.items()}
