"""Number formatting shared by the HTML, Markdown and CSV writers."""

from __future__ import annotations

import math

from ._schema import MetricSpec
from ._types import Cell, Comparison, ReferenceMatch

DASH = "—"


def finite(x: float | None) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def fmt_value(v: float | None, metric: MetricSpec) -> str:
    if v is None or not finite(v):
        return DASH
    if metric.format == "percent":
        return f"{100 * v:.1f}%"
    if metric.format == "int":
        return f"{v:.0f}"
    return f"{v:.3f}" if abs(v) < 1000 else f"{v:.4g}"


def fmt_interval(cell: Cell, metric: MetricSpec) -> str:
    if not (finite(cell.low) and finite(cell.high)):
        return ""
    if metric.format == "percent":
        return f"[{100 * cell.low:.1f}, {100 * cell.high:.1f}]"
    return f"[{fmt_value(cell.low, metric)}, {fmt_value(cell.high, metric)}]"


def fmt_cell(cell: Cell | None, metric: MetricSpec) -> str:
    if cell is None or not cell.present:
        return DASH
    ci = fmt_interval(cell, metric)
    return f"{fmt_value(cell.value, metric)} {ci}".strip()


def fmt_delta(c: Comparison, metric: MetricSpec) -> str:
    if not finite(c.delta):
        return DASH
    if metric.format == "percent":
        body = f"{100 * c.delta:+.1f} pp"
        ci = f"[{100 * c.low:+.1f}, {100 * c.high:+.1f}]" if finite(c.low) else ""
    else:
        body = f"{c.delta:+.3f}"
        ci = f"[{c.low:+.3f}, {c.high:+.3f}]" if finite(c.low) else ""
    return f"{body} {ci}".strip()


def fmt_p(p: float | None) -> str:
    if p is None or not finite(p):
        return DASH
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def better(c: Comparison, metric: MetricSpec) -> str:
    """'better' / 'worse' / '' : whether the interval excludes zero in the metric's direction."""
    if not (finite(c.low) and finite(c.high)) or metric.direction == "none":
        return ""
    sign = 1 if metric.direction == "higher" else -1
    if sign * c.low > 0 and sign * c.high > 0:
        return "better"
    if sign * c.low < 0 and sign * c.high < 0:
        return "worse"
    return ""


def fmt_reference(match: ReferenceMatch, metric: MetricSpec, numbers: str) -> str:
    """A reference number as the report shows it: what it is, its value, and the model it was
    measured on where there is one (a PyOD run has none)."""
    model = match.ref.model.strip()
    who = f" ({model})" if model and model.lower() not in ("none", "-", "n/a") else ""
    return f"{numbers} {fmt_value(match.value, metric)}{who}".strip()


def fmt_count_share(k: int, n: int) -> str:
    """``k/n (p%)``, or — when nothing was counted."""
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else DASH
