"""The LM head as a linear classifier, and its decision-neutral point z*.

The paper replaces the training-feature mean μ_G of vision OOD scores (no training data here)
with the feature that makes all logits as equal as possible: the minimiser of the variance of
``W z + b`` across the vocabulary,

    z* = −(Wᵀ P W)† Wᵀ P b,     P = I − 11ᵀ/|V|.

P centres over the vocabulary, so with ``W̃ = W − mean_v(w_v)`` and ``b̃ = b − mean(b)`` this is the
minimum-norm least-squares solution of ``W̃ z = −b̃``; that form never builds the |V|×|V| matrix P.
For a bias-free head (or a constant bias) z* = 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["LMHead", "decision_neutral_point"]


def _as_numpy(x: Any) -> np.ndarray:
    # Accept torch tensors without importing torch here.
    if hasattr(x, "detach"):
        x = x.detach().cpu().float().numpy()
    return np.asarray(x)


def decision_neutral_point(weight: Any, bias: Any | None = None) -> np.ndarray:
    """z* = −(WᵀPW)† WᵀP b for a head with weight ``(V, d)`` and bias ``(V,)`` (or None)."""
    w = _as_numpy(weight)
    if w.ndim != 2:
        raise ValueError(f"LM head weight must be (V, d); got shape {w.shape}")
    if bias is None:
        return np.zeros(w.shape[1], dtype=w.dtype)
    b = _as_numpy(bias)
    if b.shape != (w.shape[0],):
        raise ValueError(f"LM head bias must have shape ({w.shape[0]},); got {b.shape}")
    w64 = w.astype(np.float64)
    b64 = b.astype(np.float64)
    centred_w = w64 - w64.mean(axis=0, keepdims=True)
    centred_b = b64 - b64.mean()
    # lstsq returns the minimum-norm solution, i.e. the pseudo-inverse one.
    z, *_ = np.linalg.lstsq(centred_w, -centred_b, rcond=None)
    return z.astype(w.dtype)


@dataclass
class LMHead:
    """Weight ``(V, d)``, optional bias ``(V,)`` and the neutral point (computed if not given)."""

    weight: np.ndarray
    bias: np.ndarray | None = None
    neutral_point: np.ndarray | None = None
    _row_norms: np.ndarray | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.weight = _as_numpy(self.weight)
        if self.weight.ndim != 2:
            raise ValueError(f"LM head weight must be (V, d); got shape {self.weight.shape}")
        if self.bias is not None:
            self.bias = _as_numpy(self.bias)
            if self.bias.shape != (self.weight.shape[0],):
                raise ValueError(
                    f"LM head bias must have shape ({self.weight.shape[0]},); got {self.bias.shape}"
                )
        if self.neutral_point is None:
            self.neutral_point = decision_neutral_point(self.weight, self.bias)
        else:
            self.neutral_point = _as_numpy(self.neutral_point)
            if self.neutral_point.shape != (self.dim,):
                raise ValueError(
                    f"neutral_point must have shape ({self.dim},); got {self.neutral_point.shape}"
                )

    @classmethod
    def from_whitebox(cls, lm: Any) -> LMHead:
        """Head of a ``harness.models.WhiteBoxLM`` (or anything with lm_head_weight/bias)."""
        return cls(weight=lm.lm_head_weight, bias=lm.lm_head_bias)

    @property
    def vocab_size(self) -> int:
        return int(self.weight.shape[0])

    @property
    def dim(self) -> int:
        return int(self.weight.shape[1])

    @property
    def row_sq_norms(self) -> np.ndarray:
        """(V,) float64 ‖w_v‖², computed once (fDBD's boundary distances need them)."""
        if self._row_norms is None:
            w64 = self.weight.astype(np.float64)
            self._row_norms = np.einsum("vd,vd->v", w64, w64)
        return self._row_norms
