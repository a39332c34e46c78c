"""Table rows as text: GReaT/AnoLLM "<column> is <value>" fields joined by ", ".

Numeric values are binned as in AnoLLM's ``normalize`` (``src/data_utils.py``), with one
difference: every statistic (mean/std, min/max, train ECDF) is fit on the *training* rows only,
whereas AnoLLM fits on the whole table (train and test together). Fitting on train keeps the
test split unseen, which is what a ``fit(X_normal)`` detector can do.

Each serialised row carries the character spans of its values, so an LM scorer can sum the NLL of
the value tokens only (the column names are predictable from the permutation and carry no
evidence of anomaly).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Binning = Literal["standard", "quantile", "equal_width", "language", "none"]
BINNINGS: tuple[str, ...] = ("standard", "quantile", "equal_width", "language", "none")

# AnoLLM's "language" binning vocabulary (ten equal-width buckets, then "Maximum").
_LANGUAGE_WORDS = (
    "Minimal",
    "Slight",
    "Moderate",
    "Noticeable",
    "Considerable",
    "Significant",
    "Substantial",
    "Major",
    "Extensive",
    "Maximum",
)


def letter_columns(n: int) -> list[str]:
    """AnoLLM's names for unnamed columns: A..Z, then AA, AB, ... (``convert_np_to_df``)."""
    letters = list(string.ascii_uppercase)
    names = letters + [a + b for a in letters for b in letters]
    if n > len(names):
        raise ValueError(f"at most {len(names)} unnamed columns are supported, got {n}")
    return names[:n]


@dataclass(frozen=True)
class SerializedRow:
    """One row as text, with the ``[start, end)`` character span of each value in ``text``."""

    text: str
    value_spans: tuple[tuple[int, int], ...]
    column_order: tuple[int, ...]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"the {n}{suffix} percentile"


class TabularSerializer:
    """Fit binning statistics on training rows, then turn rows into ``SerializedRow`` texts.

    Parameters
    ----------
    column_names:
        One name per column; ``None`` uses AnoLLM's letters (A, B, ...).
    binning:
        ``standard`` (z-score on train, rounded to ``decimals``; AnoLLM's default),
        ``quantile`` ("the Nth percentile" of the train ECDF), ``equal_width`` (train min-max
        scaled to ``n_buckets``; values outside the train range are not clipped),
        ``language`` (ten words, clipped to the ends), ``none`` (raw value, ``digits``
        significant digits).
    """

    def __init__(
        self,
        column_names: Sequence[str] | None = None,
        *,
        binning: Binning = "standard",
        decimals: int = 1,
        n_buckets: int = 10,
        digits: int = 4,
    ) -> None:
        if binning not in BINNINGS:
            raise ValueError(f"binning must be one of {BINNINGS}, got {binning!r}")
        if n_buckets < 1:
            raise ValueError(f"n_buckets must be >= 1, got {n_buckets}")
        self.column_names = list(column_names) if column_names is not None else None
        self.binning = binning
        self.decimals = decimals
        self.n_buckets = n_buckets
        self.digits = digits
        self._fitted = False

    # ------------------------------------------------------------------ fit
    def fit(self, X: np.ndarray) -> TabularSerializer:
        X = _as_2d_finite(X, "X")
        if X.shape[0] == 0:
            raise ValueError("TabularSerializer.fit: X has zero rows")
        d = X.shape[1]
        if self.column_names is None:
            self.columns_ = letter_columns(d)
        else:
            if len(self.column_names) != d:
                raise ValueError(
                    f"column_names has {len(self.column_names)} names but X has {d} columns"
                )
            self.columns_ = list(self.column_names)
        self.mean_ = X.mean(axis=0)
        std = X.std(axis=0)
        # A constant training column serialises as 0.0 (and deviations from it stay visible).
        self.scale_ = np.where(std > 0, std, 1.0)
        self.min_ = X.min(axis=0)
        span = X.max(axis=0) - self.min_
        self.span_ = np.where(span > 0, span, 1.0)
        self.sorted_ = np.sort(X, axis=0)
        self._fitted = True
        return self

    # ------------------------------------------------------------------ values
    def value_strings(self, X: np.ndarray) -> list[list[str]]:
        """The text of every cell after binning, row by row (column order as in ``X``)."""
        self._check_fitted()
        X = _as_2d_finite(X, "X")
        if X.shape[1] != len(self.columns_):
            raise ValueError(
                f"X has {X.shape[1]} columns, the serializer was fit on {len(self.columns_)}"
            )
        n = X.shape[0]
        if self.binning == "standard":
            z = np.round((X - self.mean_) / self.scale_, self.decimals) + 0.0  # + 0.0: no "-0.0"
            return [[f"{v:.{self.decimals}f}" for v in row] for row in z]
        if self.binning == "quantile":
            m = self.sorted_.shape[0]
            # rank = number of train values <= x (AnoLLM: rank(method="min") / n * 100).
            pct = np.empty_like(X)
            for j in range(X.shape[1]):
                pct[:, j] = np.searchsorted(self.sorted_[:, j], X[:, j], side="right") / m * 100
            return [[_ordinal(int(v)) for v in row] for row in pct]
        if self.binning == "equal_width":
            b = np.round((X - self.min_) / self.span_ * self.n_buckets).astype(int)
            return [[str(int(v)) for v in row] for row in b]
        if self.binning == "language":
            b = np.clip(((X - self.min_) / self.span_ * 10).astype(int), 0, 9)
            return [[_LANGUAGE_WORDS[int(v)] for v in row] for row in b]
        return [[f"{v:.{self.digits}g}" for v in row] for row in X] if n else []

    # ------------------------------------------------------------------ text
    def serialize(
        self,
        X: np.ndarray,
        *,
        rng: np.random.Generator | None = None,
        permute: bool = True,
    ) -> list[SerializedRow]:
        """Serialise each row; with ``permute`` each row gets its own random column order."""
        values = self.value_strings(X)
        d = len(self.columns_)
        if permute and rng is None:
            raise ValueError("serialize(permute=True) needs an rng (a numpy Generator)")
        rows: list[SerializedRow] = []
        for cells in values:
            order = rng.permutation(d) if permute else np.arange(d)  # type: ignore[union-attr]
            parts: list[str] = []
            spans: list[tuple[int, int]] = []
            pos = 0
            for k, j in enumerate(order):
                prefix = ("" if k == 0 else ", ") + f"{self.columns_[j]} is "
                pos += len(prefix)
                spans.append((pos, pos + len(cells[j])))
                parts.append(prefix + cells[j])
                pos += len(cells[j])
            rows.append(SerializedRow("".join(parts), tuple(spans), tuple(int(j) for j in order)))
        return rows

    def _check_fitted(self) -> None:
        if not self._fitted:
            raise RuntimeError("TabularSerializer is not fitted; call fit(X_train) first")


def _as_2d_finite(X: np.ndarray, name: str) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x columns), got shape {X.shape}")
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        r, c = bad[0]
        raise ValueError(f"{name} has {len(bad)} non-finite value(s); first at row {r}, column {c}")
    return X
