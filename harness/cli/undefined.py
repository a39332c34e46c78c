"""Metrics without a value (`MetricUndefined`: one class only, no sample scored) said once.

A run with a small limit can leave many metrics undefined. Each warned on its own (a warning per
computation, each naming a source line) and each shown as a `nan` row of inspect's results panel
(about a hundred for dispat) buries the run's result. During a run the warnings are collected,
the panel leaves NaN metrics out (with one row saying so), and the command ends with one line:
how many metrics are NaN, which (the first few) and why (each reason once, without the per-call
sample counts; "no samples", which only the progress display's early computations meet, is left
out when there is a real reason).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

_MESSAGE = re.compile(
    r"^(?P<metric>.+?) is undefined: (?P<reason>.+?)(?: \([^()]*\))?(?:; returning NaN)?\.?$"
)
_NO_SAMPLES = "no samples"


@contextmanager
def collect_undefined() -> Iterator[list[str]]:
    """Collect `MetricUndefined` warnings (their messages) raised inside; others pass through.

    Inspect's results panel leaves NaN metrics out meanwhile (`hide_nan_in_panel`).
    """
    from scorers import MetricUndefined

    found: list[str] = []
    with warnings.catch_warnings(record=True) as caught, hide_nan_in_panel():
        warnings.simplefilter("always", MetricUndefined)
        try:
            yield found
        finally:
            for warning in caught:
                if issubclass(warning.category, MetricUndefined):
                    found.append(str(warning.message))
                else:
                    warnings.showwarning(
                        warning.message, warning.category, warning.filename, warning.lineno
                    )


def nan_metrics(summaries: Sequence[Any]) -> list[str]:
    """`<score>/<metric>` names whose final value is NaN (prefixed `<task>: ` for several tasks)."""
    names: list[str] = []
    for summary in summaries:
        for key, value in summary.scored.items():
            if isinstance(value, float) and math.isnan(value):
                names.append(key if len(summaries) == 1 else f"{summary.task}: {key}")
    return names


def undefined_line(messages: Sequence[str], names: Sequence[str], limit: int = 3) -> str | None:
    """One line: how many metrics are NaN, the first `limit` names, and each reason once."""
    if not names:
        return None  # the warnings came from computations before the end only
    n = len(names)
    shown = ", ".join(names[:limit]) + (f", … {n - limit} more" if n > limit else "")
    line = f"undefined: {n} metric{' is' if n == 1 else 's are'} NaN ({shown})"
    reasons = _reasons(messages)
    if reasons:
        parts = [
            f"{', '.join(metrics)}: {reason}" if metrics else reason for reason, metrics in reasons
        ]
        more = f"; … {len(parts) - limit} more" if len(parts) > limit else ""
        line += ": " + "; ".join(parts[:limit]) + more
    return line


def _reasons(messages: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Each distinct reason with the metric kinds (AUROC, AUPR, …) it was given for, in order."""
    grouped: dict[str, list[str]] = {}
    for message in messages:
        text = message.strip()
        match = _MESSAGE.match(text)
        metric, reason = (match["metric"], match["reason"]) if match else ("", text.rstrip("."))
        metrics = grouped.setdefault(reason, [])
        if metric and metric not in metrics:
            metrics.append(metric)
    if len(grouped) > 1:
        grouped.pop(_NO_SAMPLES, None)
    return list(grouped.items())


@contextmanager
def hide_nan_in_panel() -> Iterator[None]:
    """Inspect's end-of-task results panel without its NaN metric rows, and one row saying how
    many were left out. Patches the panel's row builder (inspect's display module) while inside;
    where that module has no such function, the panel is left as inspect draws it."""
    try:
        import inspect_ai._display.core.results as results
    except ImportError:
        yield
        return
    original = getattr(results, "task_scores", None)
    if original is None:
        yield
        return

    def task_scores(scores: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
        kept, hidden = [], 0
        for score in scores:
            metrics = {k: m for k, m in score.metrics.items() if not _is_nan(m.value)}
            hidden += len(score.metrics) - len(metrics)
            if metrics:
                kept.append(score.model_copy(update={"metrics": metrics}))
        rows: list[Any] = original(kept, *args, **kwargs)
        if hidden:
            rows.append(
                f"{hidden} NaN metric{'' if hidden == 1 else 's'} not shown (see 'undefined:' "
                "at the end)"
            )
        return rows

    results.task_scores = task_scores
    try:
        yield
    finally:
        results.task_scores = original


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
