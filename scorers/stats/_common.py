"""The statistics core's shared types (the interval, the paired results), the canonical sample
order and the input checks every metric and interval runs first."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np


class MetricUndefined(UserWarning):
    """A metric was asked for on input where it has no value (empty, or one class only)."""


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided interval ``[low, high]`` and how it was obtained.

    ``method``: ``"bootstrap"`` (percentile, ``n_boot`` resamples of which ``n_skipped`` were
    undefined and dropped), ``"Wilson"`` or ``""`` when no interval could be estimated.
    """

    estimate: float
    low: float
    high: float
    level: float = 0.95
    method: str = ""
    n_boot: int = 0
    n_skipped: int = 0


class PairedDiff(NamedTuple):
    """``delta = stat(a) - stat(b)`` on paired samples, its interval and two-sided p-value."""

    delta: float
    low: float
    high: float
    p_value: float


class McNemarResult(NamedTuple):
    """McNemar's test on paired binary outcomes.

    ``b``: pairs where A is correct and B is not; ``c``: B correct and A not.
    ``statistic`` is ``min(b, c)`` for the exact test and the continuity-corrected chi-square
    ``(|b - c| - 1)^2 / (b + c)`` otherwise; ``method`` says which.
    """

    statistic: float
    p_value: float
    b: int
    c: int
    method: str


_DIGITS = re.compile(r"(\d+)")


def sample_order_key(sample_id: Any) -> tuple[tuple[int, int | str], ...]:
    """Sort key for sample ids, the order every bootstrap here resamples in: the id's text split
    into digit runs (compared as numbers) and the rest (compared as text), so ``q-2 < q-10`` and
    integer ids sort numerically. Datasets that number their samples keep their own order."""
    parts = _DIGITS.split(str(sample_id))
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p != "")


# ------------------------------------------------------------------ input checks


def check_binary_inputs(labels: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate and convert ``labels``/``scores`` to (bool array, float64 array).

    Raises ``ValueError`` with the reason on mismatched lengths, non-binary labels, non-numeric
    or non-finite scores, or non-1-D input.
    """
    y = np.asarray(labels)
    s = np.asarray(scores)
    if y.ndim != 1 or s.ndim != 1:
        raise ValueError(f"labels and scores must be 1-D; got shapes {y.shape} and {s.shape}")
    if y.shape[0] != s.shape[0]:
        raise ValueError(f"labels and scores differ in length: {y.shape[0]} vs {s.shape[0]}")
    if y.dtype != bool:
        try:
            yf = y.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"labels must be 0/1 or bool; got dtype {y.dtype}") from exc
        bad = ~np.isin(yf, (0.0, 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"labels must be 0/1 or bool; {int(bad.sum())} value(s) are not, "
                f"first at index {i}: {y[i]!r}"
            )
        y = yf.astype(bool)
    try:
        s = s.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scores must be numeric; got dtype {s.dtype}") from exc
    nonfinite = ~np.isfinite(s)
    if nonfinite.any():
        i = int(np.flatnonzero(nonfinite)[0])
        raise ValueError(
            f"scores must be finite; {int(nonfinite.sum())} NaN/inf value(s), "
            f"first at index {i}: {s[i]!r}"
        )
    return y, s


def _as_finite_1d(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence of numbers, got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(
            f"{name}: non-finite value {arr[bad[0]]!r} at position {int(bad[0])} "
            f"({bad.size} non-finite in total); drop or score failed samples before the interval"
        )
    return arr


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")


def _check_n_boot(n_boot: int) -> None:
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")


def _check_tpr(tpr: float) -> None:
    if not 0.0 < tpr <= 1.0:
        raise ValueError(f"tpr must be in (0, 1]; got {tpr}")


def _undefined_reason(y: np.ndarray) -> str | None:
    if y.size == 0:
        return "no samples"
    n_pos = int(y.sum())
    if n_pos == 0:
        return f"only the negative class is present ({y.size} samples, 0 positives)"
    if n_pos == y.size:
        return f"only the positive class is present ({y.size} samples, 0 negatives)"
    return None
