"""A task's headline in one line, from its logged results: the schema's headline metric by its
display name; where the task logs it per method, the methods ranked by their mean over datasets
(as ADBench ranks detectors) and counted as methods, never the largest dataset×method cell; an
all-NaN headline said to be undefined, and why.

`harness eval`'s terminal summary and the report's summary say the same thing through
:func:`headline_text` / :func:`rank_methods`. Imports the schema reader only (no SciPy, no
matplotlib): cheap enough for the end of every run.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ._schema import MetricSpec, headline_of, key_regex, load_schema


@dataclass(frozen=True)
class MethodRanking:
    """The headline per method, best first; undefined methods (NaN) counted apart."""

    ranked: tuple[tuple[str, float], ...]
    undefined: tuple[str, ...]
    over_datasets: bool  # each method's value is its mean over datasets

    @property
    def n_methods(self) -> int:
        return len(self.ranked) + len(self.undefined)


def bare_task(task: str) -> str:
    """``pkg/omniverifier temperature=0.7`` (a namespaced task, a grid cell) -> ``omniverifier``."""
    first = task.strip().split()[0] if task.strip() else task
    return first.rsplit("/", 1)[-1]


def undefined_why(metric: MetricSpec, n_methods: int = 0) -> str:
    """Why a headline is NaN, from what the metric needs."""
    kind = metric.interval.kind
    if kind in ("auroc", "aupr") or any(x in metric.id for x in ("auroc", "aupr")):
        need = f"{metric.display} needs both classes among the scored samples"
    else:
        need = "no scored sample gave it a value"
    return f"no value for any of the {n_methods} methods; {need}" if n_methods > 1 else need


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def rank_methods(
    metric: MetricSpec, metrics: dict[str, float]
) -> tuple[MethodRanking | None, float | None]:
    """(ranking per method, None) for a ``{method}`` headline, (None, value) for a single one;
    (None, None) when no key of ``metric`` is in ``metrics`` (keys: "<score name>/<metric>")."""
    sign = -1.0 if metric.direction == "lower" else 1.0
    for template in metric.keys:
        if "{method}" not in template:
            rx = key_regex(template)
            found = [v for k, v in metrics.items() if rx.fullmatch(k)]
            if found:
                return None, float(found[0])
            continue
        means = _per_method(key_regex(template), metrics)
        per_dataset = _per_method_over_datasets(template, metrics)
        if not means:
            means = per_dataset
        if not means:
            continue
        ranked = sorted(
            ((m, v) for m, v in means.items() if _finite(v)), key=lambda mv: (-sign * mv[1], mv[0])
        )
        undefined = tuple(sorted(m for m, v in means.items() if not _finite(v)))
        return MethodRanking(tuple(ranked), undefined, bool(per_dataset)), None
    return None, None


def _per_method(rx: re.Pattern[str], metrics: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in metrics.items():
        match = rx.fullmatch(key)
        if match:
            out.setdefault(match.group("method"), float(value))
    return out


def _per_method_over_datasets(template: str, metrics: dict[str, float]) -> dict[str, float]:
    """``<scorer>/<dataset>/<method>/<metric>`` cells averaged per method over the datasets with
    a value (NaN when none has one): the mean ADBench ranks by."""
    rx = key_regex(template.replace("{method}", "{scorer}/{method}", 1))
    cells: dict[str, list[float]] = {}
    for key, value in metrics.items():
        match = rx.fullmatch(key)
        if match:
            cells.setdefault(match.group("method"), []).append(float(value))
    out: dict[str, float] = {}
    for method, values in cells.items():
        finite = [v for v in values if math.isfinite(v)]
        out[method] = sum(finite) / len(finite) if finite else math.nan
    return out


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def headline_text(task: str, metrics: dict[str, float]) -> str:
    """The task's headline, e.g. ``AUROC 0.85 (KNN, best of 10 methods by mean over datasets)``.

    ``metrics``: the log's results as "<score name>/<metric name>" keys. Without a schema, or
    when no headline key is logged, the first metric as it is named in the log.
    """
    if not metrics:
        return "—"
    try:
        schema = load_schema(bare_task(task))
    except Exception:  # noqa: BLE001 - a summary line never fails a finished run
        schema = None
    head = headline_of(schema.metrics) if schema is not None else None
    if head is not None:
        ranking, single = rank_methods(head, metrics)
        if single is not None:
            if _finite(single):
                return f"{head.display} {_fmt(single)}"
            return f"{head.display} undefined ({undefined_why(head)})"
        if ranking is not None:
            return _ranking_text(head, ranking)
    key = next(iter(metrics))
    return f"{key} {_fmt(metrics[key])}"


def _ranking_text(head: MetricSpec, ranking: MethodRanking) -> str:
    n = ranking.n_methods
    if not ranking.ranked:
        return f"{head.display} undefined ({undefined_why(head, n)})"
    method, value = ranking.ranked[0]
    if n == 1:
        return f"{head.display} {_fmt(value)} ({method})"
    how = " by mean over datasets" if ranking.over_datasets else ""
    undefined = f"; {len(ranking.undefined)} undefined" if ranking.undefined else ""
    ties = sum(1 for _, v in ranking.ranked[1:] if v == value)
    who = f"{method} and {ties} more tied" if ties else method
    return f"{head.display} {_fmt(value)} ({who}, best of {n} methods{how}{undefined})"


def headline_of_log(log: Any) -> str:
    """:func:`headline_text` of an inspect ``EvalLog`` (its header is enough): the results keyed
    "<score name>/<metric>" whatever the number of scorers, so that a dataset in a key is never
    read as a scorer."""
    metrics: dict[str, float] = {}
    results = getattr(log, "results", None)
    for score in getattr(results, "scores", None) or []:
        for name, metric in score.metrics.items():
            try:
                metrics[f"{score.name}/{name}"] = float(metric.value)
            except (TypeError, ValueError):
                continue
    return headline_text(str(log.eval.task), metrics)
