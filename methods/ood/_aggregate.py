"""Pooling per-token scores into one score per answer."""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = ["Aggregation", "aggregate"]

Aggregation = Literal["mean", "min", "last_k"]


def aggregate(token_scores: np.ndarray, how: Aggregation = "mean", last_k: int = 8) -> float:
    """Pool a (T,) array: ``mean`` (the paper), ``min`` (least confident token) or ``last_k``
    (mean of the last ``last_k`` tokens, where the final answer usually sits)."""
    s = np.asarray(token_scores, dtype=np.float64).reshape(-1)
    if s.size == 0:
        raise ValueError("cannot aggregate an empty answer (the model generated no tokens)")
    if not np.all(np.isfinite(s)):
        raise ValueError(
            f"non-finite per-token score at position {int(np.flatnonzero(~np.isfinite(s))[0])}"
        )
    if how == "mean":
        return float(s.mean())
    if how == "min":
        return float(s.min())
    if how == "last_k":
        if last_k < 1:
            raise ValueError(f"last_k must be ≥ 1; got {last_k}")
        return float(s[-last_k:].mean())
    raise ValueError(f"unknown aggregation {how!r}; expected 'mean', 'min' or 'last_k'")
