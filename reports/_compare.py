"""Paired comparisons against a baseline row, and Holm's adjustment over a task's comparisons.

Means and 0/1 outcomes: paired bootstrap of the mean difference (McNemar's test for the p-value
of two 0/1 columns); AUROC/AUPR: paired bootstrap of the difference with both rows resampled on
the same indices. Kernels and tests are :mod:`scorers.stats`'s.
"""

from __future__ import annotations

import math

import numpy as np

from scorers.stats import (
    PairedDiff,
    holm_adjust,
    mcnemar,
    paired_bootstrap_diff,
    paired_bootstrap_statistic_diff,
)

from ._types import Comparison, Leaderboard, Row
from ._values import CURVE_KINDS, SampleValues


def paired_test(
    a: SampleValues, b: SampleValues, n_boot: int, seed: int
) -> tuple[PairedDiff | None, str, int, str]:
    """Paired comparison of two rows' values on the samples both have: (result, test, n, note)."""
    shared = [k for k in a.keys if k in set(b.keys)]
    if len(shared) < 2:
        return None, "", len(shared), f"only {len(shared)} shared sample(s)"
    a2, b2 = a.subset(shared), b.subset(shared)
    note = ""
    if a.kind in CURVE_KINDS and not np.array_equal(np.asarray(a2.y), np.asarray(b2.y)):
        return None, "", len(shared), "labels differ between the runs on shared samples"
    if a.kind in ("mean", "binary"):
        d = paired_bootstrap_diff(a2.x, b2.x, n_boot=n_boot, seed=seed)
        if a.kind == "binary" and b.kind == "binary":
            mc = mcnemar(a2.x == 1, b2.x == 1)
            return d._replace(p_value=mc.p_value), f"McNemar ({mc.method})", len(shared), note
        return d, "paired bootstrap", len(shared), note
    ba, bb = a2.batch_statistic(), b2.batch_statistic()
    if ba is not None and bb is not None:
        d = paired_bootstrap_statistic_diff(
            ba, bb, len(shared), n_boot=n_boot, seed=seed, vectorized=True
        )
    else:
        d = paired_bootstrap_statistic_diff(
            a2.statistic(), b2.statistic(), len(shared), n_boot=n_boot, seed=seed
        )
    return d, "paired bootstrap", len(shared), note


def row_matches_model(row: Row, baseline: str) -> bool:
    return (
        row.model == baseline
        or row.model.split("/", 1)[-1] == baseline
        or (row.model.rsplit("/", 1)[-1] == baseline)
    )


def compare_rows(lb: Leaderboard, baseline: str | None, n_boot: int, seed: int) -> None:
    """Each row against its baseline partner (same model or method, settings and part), per
    metric with per-sample values; then Holm over every comparison of the task."""
    mode = None
    if baseline and any(row_matches_model(r, baseline) for r in lb.rows):
        mode = "model"
    elif baseline and any(r.method == baseline for r in lb.rows):
        mode = "method"
    elif baseline:
        lb.notes.append(f"baseline '{baseline}' is neither a model nor a method of this task")
    elif lb.schema.baseline_method and any(r.method == lb.schema.baseline_method for r in lb.rows):
        baseline, mode = lb.schema.baseline_method, "method"
    if mode is None or baseline is None:
        return
    lb.baseline = f"{mode} {baseline}"
    base_name: str = baseline

    def partner(row: Row) -> Row | None:
        for other in lb.rows:
            if other is row:
                continue
            if other.part != row.part:  # a part is compared with the baseline's same part
                continue
            if mode == "model":
                if (
                    row_matches_model(other, base_name)
                    and other.method == row.method
                    and other.settings == row.settings
                ):
                    return other
            elif (
                other.method == base_name
                and other.model == row.model
                and other.settings == row.settings
            ):
                return other
        return None

    for row in lb.rows:
        is_base = row_matches_model(row, base_name) if mode == "model" else row.method == base_name
        if is_base:
            continue
        base = partner(row)
        if base is None:
            what = "settings" if row.part is None else "settings and part"
            row.notes.append(f"no baseline row ({lb.baseline}) with the same {what}")
            continue
        for metric in lb.metrics:
            a, b = row.per_sample.get(metric.id), base.per_sample.get(metric.id)
            if a is None or b is None:
                continue
            result, test, n, note = paired_test(a, b, n_boot, seed)
            if result is None:
                row.comparisons[metric.id] = Comparison(
                    metric.id, base.label, math.nan, math.nan, math.nan, math.nan, "", n, note=note
                )
                continue
            if not math.isfinite(result.delta):
                note = note or _why_undefined(row, base, metric.id, n)
            row.comparisons[metric.id] = Comparison(
                metric.id,
                base.label,
                result.delta,
                result.low,
                result.high,
                result.p_value,
                test,
                n,
                note=note,
            )
    # Holm over every comparison of the task: many rows × metrics are tested at once.
    comps = [c for r in lb.rows for c in r.comparisons.values()]
    adjusted = holm_adjust([c.p_value for c in comps])
    for c, p in zip(comps, adjusted, strict=False):
        c.p_holm = float(p)


def _why_undefined(row: Row, base: Row, metric_id: str, n: int) -> str:
    """Why a difference has no value: the metric is undefined on a side (e.g. one class)."""
    for side in (row, base):
        cell = side.cells.get(metric_id)
        if cell is not None and cell.undefined:
            return f"undefined: {cell.undefined}"
    return f"undefined on the {n} paired samples"
