"""Classical detectors through PyOD, under the anchor protocol (StandardScaler fit on train)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sklearn.preprocessing import StandardScaler

from methods.dispat._detector import NonFinitePolicy, apply_nonfinite_policy


def _iforest(seed: int):
    from pyod.models.iforest import IForest

    return IForest(random_state=seed)


def _simple(module: str, cls: str) -> Callable[[int], object]:
    def make(seed: int) -> object:  # noqa: ARG001 (deterministic detectors ignore the seed)
        import importlib

        return getattr(importlib.import_module(f"pyod.models.{module}"), cls)()

    return make


# PyOD defaults throughout (what the anchor table measured); only IForest takes the seed.
PYOD_DETECTORS: dict[str, Callable[[int], object]] = {
    "IForest": _iforest,
    "LOF": _simple("lof", "LOF"),
    "KNN": _simple("knn", "KNN"),
    "ECOD": _simple("ecod", "ECOD"),
    "COPOD": _simple("copod", "COPOD"),
    "OCSVM": _simple("ocsvm", "OCSVM"),
    "PCA": _simple("pca", "PCA"),
    "HBOS": _simple("hbos", "HBOS"),
}


class PyODDetector:
    """A PyOD detector behind ``fit(X_normal)`` / ``decision_function(X)`` (higher = more
    anomalous).

    Rows are standardised with a ``StandardScaler`` fit on the training rows, then scored with
    the detector's ``decision_function``. Non-finite scores follow ``nonfinite`` (see
    :func:`apply_nonfinite_policy`); ``n_nonfinite_`` counts what the last call replaced.
    """

    def __init__(
        self, name: str, *, seed: int = 0, scale: bool = True, nonfinite: NonFinitePolicy = "fail"
    ) -> None:
        if name not in PYOD_DETECTORS:
            raise ValueError(f"unknown PyOD detector {name!r}; known: {sorted(PYOD_DETECTORS)}")
        self.name = name
        self.seed = seed
        self.scale = scale
        self.nonfinite = nonfinite
        self.n_nonfinite_ = 0

    def fit(self, X_normal: np.ndarray) -> PyODDetector:
        X = np.asarray(X_normal, dtype=float)
        if X.ndim != 2 or X.shape[0] < 2:
            raise ValueError(
                f"{self.name}.fit needs at least 2 rows of 2-D data, got shape {X.shape}"
            )
        self.scaler_ = StandardScaler().fit(X) if self.scale else None
        self.model_ = PYOD_DETECTORS[self.name](self.seed)
        self.model_.fit(self._transform(X))  # type: ignore[attr-defined]
        return self

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        if not hasattr(self, "model_"):
            raise RuntimeError(f"{self.name} is not fitted; call fit(X_normal) first")
        raw = self.model_.decision_function(self._transform(np.asarray(X, dtype=float)))  # type: ignore[attr-defined]
        scores, self.n_nonfinite_ = apply_nonfinite_policy(raw, self.nonfinite, self.name)
        return scores

    def _transform(self, X: np.ndarray) -> np.ndarray:
        return self.scaler_.transform(X) if self.scaler_ is not None else X
