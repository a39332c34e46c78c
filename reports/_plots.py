"""Plots for the report, as base64 PNG (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ._leaderboard import Leaderboard  # noqa: E402
from ._samples import column, raw_column  # noqa: E402
from ._schema import MetricSpec, PlotSpec  # noqa: E402


@dataclass
class Plot:
    kind: str
    title: str
    png_base64: str
    alt: str


def _to_png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _short(label: str, width: int = 48) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def bars(lb: Leaderboard, metric: MetricSpec, title: str = "") -> Plot | None:
    rows = [r for r in lb.rows if r.cells.get(metric.id) and r.cells[metric.id].present]
    if not rows:
        return None
    scale = 100.0 if metric.format == "percent" else 1.0
    values = np.array([r.cells[metric.id].value for r in rows]) * scale
    lows = np.array([r.cells[metric.id].low for r in rows]) * scale
    highs = np.array([r.cells[metric.id].high for r in rows]) * scale
    # A percentile interval need not contain the logged value (skewed resamples, or a task
    # metric computed differently); clip so the bar still shows the interval's side that exists.
    err = np.clip(
        np.vstack(
            [
                np.where(np.isfinite(lows), values - lows, 0.0),
                np.where(np.isfinite(highs), highs - values, 0.0),
            ]
        ),
        0.0,
        None,
    )
    fig, ax = plt.subplots(figsize=(7.5, 0.5 + 0.42 * len(rows)))
    y = np.arange(len(rows))
    ax.barh(y, values, color="#4c78a8")
    # The intervals drawn apart, from the (2, n) array: `barh(xerr=...)` turns a single bar's
    # interval into a list of 1-element arrays, which matplotlib then converts to a scalar
    # (numpy's "array with ndim > 0 to a scalar" DeprecationWarning). Same picture.
    ax.errorbar(values, y, xerr=err, fmt="none", ecolor="#222", capsize=3)
    ax.set_yticks(y, [_short(r.label) for r in rows], fontsize=8)
    ax.invert_yaxis()
    unit = " (%)" if metric.format == "percent" else ""
    ax.set_xlabel(f"{metric.display}{unit}; bars: 95% interval")
    ax.grid(axis="x", alpha=0.3)
    title = title or f"{lb.task}: {metric.display}"
    ax.set_title(title, fontsize=10)
    return Plot("bars", title, _to_png(fig), f"bar chart of {metric.display} per row")


def roc(lb: Leaderboard, metric: MetricSpec, title: str = "") -> Plot | None:
    rows = [r for r in lb.rows if metric.id in r.roc]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(5.2, 5.0))
    for r in rows:
        fpr, tpr = r.roc[metric.id]
        auc = r.cells[metric.id].value
        ax.plot(fpr, tpr, lw=1.5, label=f"{_short(r.label, 40)} ({auc:.3f})")
    ax.plot([0, 1], [0, 1], ls="--", color="#999", lw=1)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.legend(fontsize=7, loc="lower right")
    title = title or f"{lb.task}: ROC ({metric.display})"
    ax.set_title(title, fontsize=10)
    return Plot("roc", title, _to_png(fig), f"ROC curves for {metric.display}")


def _drop_pairs(lb: Leaderboard, spec: PlotSpec) -> list[tuple[str, float, float]]:
    """(label, before, after) triples: per row for metric ids, per group for sample paths."""
    ids = {m.id for m in lb.metrics}
    out: list[tuple[str, float, float]] = []
    if spec.before in ids and spec.after in ids:
        for r in lb.rows:
            b, a = r.cells[spec.before], r.cells[spec.after]
            if b.present and a.present:
                out.append((r.label, b.value, a.value))
        return out
    # Parts are slices of a pooled row already drawn here (its groups come from the samples).
    for r in (r for r in lb.rows if not r.is_slice):
        before, _ = column(r.sample_rows, spec.before or "", r.scorer)
        after, _ = column(r.sample_rows, spec.after or "", r.scorer)
        groups = raw_column(r.sample_rows, spec.group, r.scorer) if spec.group else {}
        acc: dict[str, list[tuple[float, float]]] = {}
        for key in before.keys() & after.keys():
            name = str(groups.get(key, r.label)) if spec.group else r.label
            acc.setdefault(name, []).append((before[key], after[key]))
        prefix = f"{r.model} · " if spec.group and len(lb.rows) > 1 else ""
        for name, pairs in sorted(acc.items()):
            arr = np.array(pairs)
            out.append((prefix + name, float(arr[:, 0].mean()), float(arr[:, 1].mean())))
    return out


def score_drop(lb: Leaderboard, spec: PlotSpec) -> Plot | None:
    pairs = _drop_pairs(lb, spec)
    if not pairs:
        return None
    pairs.sort(key=lambda t: t[1], reverse=True)
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.38 * len(pairs)))
    y = np.arange(len(pairs))
    before = np.array([p[1] for p in pairs])
    after = np.array([p[2] for p in pairs])
    ax.hlines(y, after, before, color="#bbb", lw=2)
    ax.scatter(before, y, color="#4c78a8", label=spec.before, zorder=3)
    ax.scatter(after, y, color="#e45756", label=spec.after, zorder=3)
    ax.set_yticks(y, [_short(p[0]) for p in pairs], fontsize=8)
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8)
    drops = before - after
    title = spec.title or f"{lb.task}: score drop (mean {np.mean(drops):.3g})"
    ax.set_title(title, fontsize=10)
    return Plot("score_drop", title, _to_png(fig), "dumbbell plot of scores before and after")


def plots_for(lb: Leaderboard) -> list[Plot]:
    """Every plot the schema asks for; a plot that fails becomes a note, never an exception."""
    try:
        return _plots_for(lb)
    except Exception as exc:  # noqa: BLE001 - a broken picture must not lose the tables
        lb.notes.append(f"plots could not be drawn ({type(exc).__name__}: {exc})")
        plt.close("all")
        return []


def _plots_for(lb: Leaderboard) -> list[Plot]:
    """The schema's plots, else bars for the headline (and ROC for AUROC metrics)."""
    by_id = {m.id: m for m in lb.metrics}
    specs = list(lb.schema.plots)
    if not specs and lb.headline is not None:
        specs.append(PlotSpec(kind="bars", metric=lb.headline.id))
        specs.extend(
            PlotSpec(kind="roc", metric=m.id) for m in lb.metrics if m.interval.kind == "auroc"
        )
    plots: list[Plot] = []
    for spec in specs:
        if spec.kind == "bars" and spec.metric in by_id:
            p = bars(lb, by_id[spec.metric], spec.title)
        elif spec.kind == "roc" and spec.metric in by_id:
            p = roc(lb, by_id[spec.metric], spec.title)
        elif spec.kind == "score_drop":
            p = score_drop(lb, spec)
        else:
            p = None
        if p is not None:
            plots.append(p)
    return plots
