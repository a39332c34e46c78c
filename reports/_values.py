"""Per-sample values behind a leaderboard cell, read from sample summaries, and their intervals.

Every number comes from :mod:`scorers.stats`, the statistics core the eval metrics use too.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from scorers.stats import (
    Interval,
    MetricUndefined,
    bootstrap_mean_ci,
    bootstrap_statistic_ci,
    detection_interval,
    detection_rows,
    wilson_ci,
)

from ._samples import SampleRow, column, lookup
from ._schema import IntervalSpec

#: Interval kinds computed from a detector score and a 0/1 label (kernels in scorers.stats).
CURVE_KINDS = ("auroc", "aupr")


@dataclass
class SampleValues:
    """Per-sample data for one (row, metric), aligned by sample key."""

    keys: list[str]
    kind: str
    x: np.ndarray  # value (mean/binary/macro) or detector score (auroc/aupr)
    y: np.ndarray | None = None  # label (auroc/aupr) or group codes (macro_mean)

    def batch_statistic(self) -> Callable[[np.ndarray], np.ndarray] | None:
        """Vectorised form over a (resamples × n) index matrix, where one exists."""
        x, y = self.x, self.y
        if self.kind in CURVE_KINDS:
            kind = self.kind
            return lambda idx: detection_rows(kind, y[idx], x[idx])  # type: ignore[arg-type,index]
        if self.kind in ("mean", "binary"):
            return lambda idx: x[idx].mean(axis=1)
        return None

    def statistic(self) -> Callable[[np.ndarray], float]:
        x, y = self.x, self.y
        if self.kind in CURVE_KINDS:
            kind = self.kind
            return lambda idx: float(detection_rows(kind, y[idx], x[idx])[0])  # type: ignore[arg-type,index]
        if self.kind == "macro_mean":

            def macro(idx: np.ndarray) -> float:
                g = y[idx]  # type: ignore[index]
                sums = np.bincount(g, weights=x[idx])
                counts = np.bincount(g)
                present = counts > 0
                return float((sums[present] / counts[present]).mean())

            return macro
        return lambda idx: float(x[idx].mean())

    def subset(self, keys: list[str]) -> SampleValues:
        pos = {k: i for i, k in enumerate(self.keys)}
        idx = np.array([pos[k] for k in keys], dtype=int)
        return SampleValues(keys, self.kind, self.x[idx], None if self.y is None else self.y[idx])


def collect_values(
    rows: list[SampleRow], spec: IntervalSpec, scorer: str | None
) -> tuple[SampleValues | None, str]:
    """Per-sample values for ``spec``; returns (values or None, note on what was missing)."""
    kind = spec.kind
    if kind == "none":
        return None, ""
    if spec.where:
        path, _, wanted = spec.where.partition("=")
        kept = []
        for row in rows:
            try:
                if str(lookup(row, path.strip(), scorer)) == wanted.strip():
                    kept.append(row)
            except KeyError:
                continue
        rows = kept
    if kind in ("auroc", "aupr"):
        xs, miss_x = column(rows, spec.score or "", scorer)
        ys, miss_y = column(rows, spec.label or "", scorer)
        keys = [k for k in xs if k in ys]
        missing = {**miss_x, **miss_y}
        bad = [k for k in keys if ys[k] not in (0.0, 1.0)]
        if bad:
            return None, f"label at '{spec.label}' is not 0/1 (sample {bad[0]}: {ys[bad[0]]})"
        vals = SampleValues(
            keys, kind, np.array([xs[k] for k in keys]), np.array([ys[k] for k in keys])
        )
    elif kind == "macro_mean":
        xs, missing = column(rows, spec.value or "", scorer)
        groups: dict[str, Any] = {}
        for row in rows:
            if row.key in xs:
                try:
                    groups[row.key] = str(lookup(row, spec.group or "", scorer))
                except KeyError as exc:
                    missing[row.key] = str(exc.args[0])
        keys = [k for k in xs if k in groups]
        names = sorted({groups[k] for k in keys})
        code = {g: i for i, g in enumerate(names)}
        vals = SampleValues(
            keys,
            kind,
            np.array([xs[k] for k in keys]),
            np.array([code[groups[k]] for k in keys], dtype=int),
        )
    else:
        xs, missing = column(rows, spec.value or "", scorer)
        keys = list(xs)
        x = np.array([xs[k] for k in keys])
        if kind == "auto":
            # 0/1 outcomes get Wilson intervals and McNemar; anything else a bootstrap mean.
            kind = "binary" if x.size and np.isin(x, (0.0, 1.0)).all() else "mean"
        vals = SampleValues(keys, kind, x)
        if kind == "binary" and not np.isin(vals.x, (0.0, 1.0)).all():
            return None, f"values at '{spec.value}' are not all 0/1; use kind 'mean'"
    note = ""
    if missing:
        first_key, why = next(iter(missing.items()))
        note = f"{len(missing)} sample(s) without a value (e.g. {first_key}: {why})"
    if not keys:
        return None, note or "no per-sample values"
    return vals, note


def cell_interval(vals: SampleValues, n_boot: int, seed: int) -> Interval:
    """The cell's estimate and interval. AUROC/AUPR go through ``detection_interval``, the
    function the eval's detection metrics use, so with the eval's ``n_boot`` and ``seed`` the
    cell equals the logged value and bounds."""
    if vals.kind == "binary":
        return wilson_ci(int(vals.x.sum()), vals.x.size)
    if vals.kind == "mean":
        return bootstrap_mean_ci(vals.x, n_boot=n_boot, seed=seed)
    if vals.kind in CURVE_KINDS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MetricUndefined)  # a one-class part is noted as —
            return detection_interval(
                vals.kind,  # type: ignore[arg-type]
                vals.y,
                vals.x,
                n_boot=n_boot,
                seed=seed,
            )
    return bootstrap_statistic_ci(vals.statistic(), len(vals.keys), n_boot=n_boot, seed=seed)
