"""The one detector interface every method and baseline follows, and its non-finite rule.

Convention (PyOD's, used across ``methods/``): ``decision_function(X)`` returns one float per row,
**higher = more anomalous**. There is no ``score_samples`` here: scikit-learn's means the opposite
(higher = more normal), and one name with two directions is how a leaderboard gets inverted.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

import numpy as np

NonFinitePolicy = Literal["fail", "max_finite"]
NONFINITE_POLICIES: tuple[str, ...] = ("fail", "max_finite")


@runtime_checkable
class AnomalyDetector(Protocol):
    """``fit`` on normal rows only (semi-supervised); ``decision_function``: higher = more
    anomalous."""

    def fit(self, X_normal: np.ndarray) -> AnomalyDetector: ...

    def decision_function(self, X: np.ndarray) -> np.ndarray: ...


class NonFiniteScoresError(ValueError):
    """A detector returned NaN or ±inf scores; the run is reported as failed with this reason."""

    def __init__(self, detector: str, n_nonfinite: int, n_total: int, first: int, kind: str):
        self.detector = detector
        self.n_nonfinite = n_nonfinite
        self.n_total = n_total
        super().__init__(
            f"{detector} returned {n_nonfinite} non-finite score(s) of {n_total} "
            f"({kind}; first at row {first})"
        )


def apply_nonfinite_policy(
    scores: np.ndarray, policy: NonFinitePolicy, detector: str
) -> tuple[np.ndarray, int]:
    """Apply the project's rule for non-finite detector scores; returns (scores, n_replaced).

    ``fail`` (default): any NaN/±inf raises :class:`NonFiniteScoresError`.
    ``max_finite``: +inf becomes (max finite + 1) and -inf (min finite - 1), so infinities rank
    above/below every finite score and tie with each other (an all-inf run is all tied:
    AUROC 0.5). This is the rule the PyOD/ADBench anchor table used. NaN always fails, and so does
    a run with no finite score at all when some scores are infinite and others NaN.
    """
    if policy not in NONFINITE_POLICIES:
        raise ValueError(f"nonfinite policy must be one of {NONFINITE_POLICIES}, got {policy!r}")
    s = np.asarray(scores, dtype=float).ravel()
    bad = ~np.isfinite(s)
    if not bad.any():
        return s, 0
    first = int(np.flatnonzero(bad)[0])
    n_nan = int(np.isnan(s).sum())
    kinds = f"{n_nan} NaN, {int(np.isposinf(s).sum())} +inf, {int(np.isneginf(s).sum())} -inf"
    if policy == "fail" or n_nan:
        raise NonFiniteScoresError(detector, int(bad.sum()), s.size, first, kinds)
    finite = s[~bad]
    hi = float(finite.max()) + 1.0 if finite.size else 1.0
    lo = float(finite.min()) - 1.0 if finite.size else -1.0
    out = s.copy()
    out[np.isposinf(s)] = hi
    out[np.isneginf(s)] = lo
    return out, int(bad.sum())
