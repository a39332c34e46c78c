"""Per-token confidence scores over (features z_t, logits l_t, head W, b). Higher = more confident.

- ``nci``:  cos(w_ĉ, z − z*) · ‖w_ĉ‖ = w_ĉ·(z − z*) / ‖z − z*‖, ĉ = argmax logit (paper's NCI with
  μ_G replaced by the decision-neutral point z*).
- ``fdbd``: (1/k) Σ_{c ∈ top-k logits, c ≠ ĉ} |(w_ĉ − w_c)·z + (b_ĉ − b_c)| / ‖w_ĉ − w_c‖, divided by
  ‖z − z*‖ (feature distance to the decision boundary between ĉ and c, normalised).
- ``log_prob``: log p(emitted token) (its sequence mean is −log perplexity).
- ``max_prob``: max softmax probability (MSP / Max-P).
- ``neg_entropy``: Σ_v p_v log p_v (minus the predictive entropy).
- ``neg_energy``: T·logsumexp(l/T) (minus the energy score of Liu et al. 2020; T = 1).

Each function maps a :class:`TokenTrace` and an :class:`LMHead` to a (T,) float64 array.
"""

from __future__ import annotations

import numpy as np

from methods.ood._head import LMHead
from methods.ood._trace import TokenTrace

__all__ = [
    "fdbd_boundary_distances",
    "fdbd_token_scores",
    "log_prob_token_scores",
    "logsumexp_rows",
    "max_prob_token_scores",
    "nci_token_scores",
    "neg_energy_token_scores",
    "neg_entropy_token_scores",
]

_EPS = 1e-12


def logsumexp_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise log Σ exp, stable, float64."""
    lg = np.asarray(logits, dtype=np.float64)
    m = lg.max(axis=1)
    return m + np.log(np.exp(lg - m[:, None]).sum(axis=1))


def _centred(trace: TokenTrace, head: LMHead) -> tuple[np.ndarray, np.ndarray]:
    z = np.asarray(trace.features, dtype=np.float64)
    zc = z - np.asarray(head.neutral_point, dtype=np.float64)[None, :]
    return zc, np.maximum(np.linalg.norm(zc, axis=1), _EPS)


def nci_token_scores(trace: TokenTrace, head: LMHead) -> np.ndarray:
    """NCI per token: w_ĉ·(z − z*) / ‖z − z*‖."""
    zc, norm = _centred(trace, head)
    pred = trace.logits.argmax(axis=1)
    w_pred = head.weight[pred].astype(np.float64)
    return np.einsum("td,td->t", w_pred, zc) / norm


def fdbd_boundary_distances(trace: TokenTrace, head: LMHead, k: int) -> np.ndarray:
    """(T, k) float64 distances of each token's feature to its decision boundaries with the top-k
    competitors c (largest logit first, argmax excluded): |(w_ĉ − w_c)·z + b_ĉ − b_c| / ‖w_ĉ − w_c‖.

    The row differences w_ĉ − w_c are formed first, in float64, and the margin and the norm are
    taken of them. Expanding instead, (w_ĉ·z − w_c·z) and ‖w_ĉ‖² + ‖w_c‖² − 2 w_ĉ·w_c, cancels
    catastrophically when two rows of a float32 head are close (rows 1e-5 apart gave a score
    0.29 % off). Cached on the trace per head at the largest k asked for, so fDBD at several k (and
    ``prefetch_top``) compute each competitor's distance once; a smaller k is a slice.
    """
    v = trace.logits.shape[1]
    k = min(k, v - 1)
    return trace.cached_columns(
        "fdbd", head, k, lambda width: _boundary_distances(trace, head, width)
    )


def _boundary_distances(trace: TokenTrace, head: LMHead, k: int) -> np.ndarray:
    out = np.empty((trace.length, k))
    if trace.length == 0 or k == 0:
        return out
    pred = trace.logits.argmax(axis=1)
    others = trace.top_excluding_argmax(k)
    w = head.weight
    z = np.asarray(trace.features, dtype=np.float64)
    bias = None if head.bias is None else np.asarray(head.bias, dtype=np.float64)
    for t in range(trace.length):
        c, rows = pred[t], others[t]
        diff = w[rows].astype(np.float64)  # one k×d gather per token, then w_ĉ − w_c in place
        np.subtract(w[c].astype(np.float64), diff, out=diff)
        margin = diff @ z[t]
        if bias is not None:
            margin += bias[c] - bias[rows]
        dist = np.sqrt(np.einsum("kd,kd->k", diff, diff))
        out[t] = np.abs(margin) / np.maximum(dist, _EPS)
    return out


def fdbd_token_scores(trace: TokenTrace, head: LMHead, k: int | None = 1000) -> np.ndarray:
    """fDBD per token over the top-``k`` non-argmax logit tokens (``k=None``: all V − 1)."""
    v = trace.logits.shape[1]
    if k is None:
        k = v - 1
    if k < 1:
        raise ValueError(f"fDBD needs k ≥ 1; got {k}")
    k = min(k, v - 1)
    _, norm = _centred(trace, head)
    if trace.length == 0:
        return np.zeros(0)
    return fdbd_boundary_distances(trace, head, k).mean(axis=1) / norm


def log_prob_token_scores(trace: TokenTrace, head: LMHead | None = None) -> np.ndarray:  # noqa: ARG001
    """log p(emitted token); its mean over tokens is −log perplexity."""
    lg = trace.logits
    chosen = np.take_along_axis(lg, trace.token_ids[:, None], axis=1)[:, 0].astype(np.float64)
    return chosen - trace.log_partition()


def max_prob_token_scores(trace: TokenTrace, head: LMHead | None = None) -> np.ndarray:  # noqa: ARG001
    """Maximum softmax probability."""
    lg = trace.logits
    return np.exp(lg.max(axis=1).astype(np.float64) - trace.log_partition())


def neg_entropy_token_scores(trace: TokenTrace, head: LMHead | None = None) -> np.ndarray:  # noqa: ARG001
    """Σ p log p of the next-token distribution (higher = more peaked = more confident)."""
    lg = trace.logits
    logp = lg - trace.log_partition().astype(lg.dtype)[:, None]
    return (np.exp(logp) * logp).sum(axis=1, dtype=np.float64)


def neg_energy_token_scores(
    trace: TokenTrace,
    head: LMHead | None = None,  # noqa: ARG001
    temperature: float = 1.0,
) -> np.ndarray:
    """T·logsumexp(l/T): minus the energy score (higher = more in-distribution)."""
    if temperature <= 0:
        raise ValueError(f"energy temperature must be > 0; got {temperature}")
    if temperature == 1.0:
        return trace.log_partition().copy()
    return temperature * logsumexp_rows(np.asarray(trace.logits, np.float64) / temperature)
