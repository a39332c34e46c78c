"""What a detector sees of one generated answer: per-token LM-head inputs and logits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["TokenTrace"]


def _sorted_top_excluding_argmax(logits: np.ndarray, k: int) -> np.ndarray:
    t, v = logits.shape
    pred = logits.argmax(axis=1)
    if k + 1 >= v:
        cand = np.broadcast_to(np.arange(v), (t, v))
    else:
        cand = np.argpartition(logits, v - (k + 1), axis=1)[:, v - (k + 1) :]
    vals = np.take_along_axis(logits, cand, axis=1).astype(np.float64)
    # The argmax goes last whatever ties say, then the rest by logit, largest first.
    vals[cand == pred[:, None]] = -np.inf
    order = np.argsort(-vals, axis=1, kind="stable")
    return np.ascontiguousarray(np.take_along_axis(cand, order, axis=1)[:, :k])


@dataclass(frozen=True)
class TokenTrace:
    """Per generated token t: ``features[t]`` (d,) = LM-head input, ``logits[t]`` (V,) and the
    emitted ``token_ids[t]``. T may be 0 (the model emitted nothing); detectors then refuse."""

    features: np.ndarray
    logits: np.ndarray
    token_ids: np.ndarray
    _log_z: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)
    _top: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)
    _columns: dict[str, tuple[Any, np.ndarray]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def top_excluding_argmax(self, k: int) -> np.ndarray:
        """(T, k) indices of the k largest logits other than the argmax, largest first.

        Cached: a request for k ≤ an earlier k is a slice, so fDBD at several k (and a prefetch
        at the largest k, see ``prefetch_top``) sorts each row's candidates once.
        """
        v = self.logits.shape[1]
        k = min(k, v - 1)
        if self._top is None or self._top.shape[1] < k:
            object.__setattr__(self, "_top", _sorted_top_excluding_argmax(self.logits, k))
        return self._top[:, :k]  # type: ignore[index]

    def cached_columns(
        self, name: str, owner: Any, k: int, compute: Callable[[int], np.ndarray]
    ) -> np.ndarray:
        """``compute(k)``'s (T, k) per-token, per-candidate array, cached for this ``owner``.

        For arrays whose column j does not depend on k (e.g. a quantity per top-j competitor):
        a request for k ≤ an earlier k is a slice of the cached array. ``owner`` (e.g. the LM
        head) is held by identity, so another head never reads this head's numbers.
        """
        held = self._columns.get(name)
        if held is None or held[0] is not owner or held[1].shape[1] < k:
            held = (owner, compute(k))
            self._columns[name] = held
        return held[1][:, :k]

    def log_partition(self) -> np.ndarray:
        """(T,) float64 logsumexp of each row of logits, computed once and shared by detectors."""
        if self._log_z is None:
            # exp in the logits' own precision (float32 from a model: ~2× cheaper than a float64
            # copy, and no coarser than the logits themselves), sums accumulated in float64.
            lg = self.logits
            if lg.size == 0:
                z = np.zeros(lg.shape[0])
            else:
                m = lg.max(axis=1)
                s = np.exp(lg - m[:, None]).sum(axis=1, dtype=np.float64)
                z = m.astype(np.float64) + np.log(s)
            object.__setattr__(self, "_log_z", z)
        return self._log_z  # type: ignore[return-value]

    def __post_init__(self) -> None:
        f = np.asarray(self.features)
        lg = np.asarray(self.logits)
        ids = np.asarray(self.token_ids, dtype=np.int64).reshape(-1)
        if f.ndim != 2 or lg.ndim != 2:
            raise ValueError(
                f"features and logits must be 2-D (T×d, T×V); got {f.shape}, {lg.shape}"
            )
        if not (f.shape[0] == lg.shape[0] == ids.shape[0]):
            raise ValueError(
                f"features, logits and token_ids disagree on T: {f.shape[0]}, {lg.shape[0]}, "
                f"{ids.shape[0]}"
            )
        if ids.size and (ids.min() < 0 or ids.max() >= lg.shape[1]):
            raise ValueError(f"token_ids outside the vocabulary of size {lg.shape[1]}")
        object.__setattr__(self, "features", f)
        object.__setattr__(self, "logits", lg)
        object.__setattr__(self, "token_ids", ids)

    @property
    def length(self) -> int:
        return int(self.token_ids.shape[0])

    @classmethod
    def from_generation(cls, gen: Any) -> TokenTrace:
        """From a ``harness.models.Generation`` generated with ``record=True``."""
        if gen.features is None or gen.logits is None:
            raise ValueError("generation was not recorded (generate(..., record=True) needed)")
        return cls(features=gen.features, logits=gen.logits, token_ids=np.asarray(gen.token_ids))
