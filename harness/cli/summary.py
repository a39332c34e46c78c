"""The table a run ends with: one line per task that fits 80 columns, or everything (`--wide`).

The compact table shows, per task, the headline metric its leaderboard schema names
(`tasks/<task>/leaderboard.yaml`, read through `reports`), the samples, the status and a short log
name (the log's id; the folder is in the title). Where a task logs the headline per method
(`dispat`: `KNN/auroc`, `IForest/auroc`, ...) the best one is shown with the number of methods.
`--wide` prints every metric and the full log name, as before.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

_AUXILIARY = ("stderr", "wilson", "_low", "_high", "/n_", "boot", "ci_", "_lo", "_hi")


def is_auxiliary(metric: str) -> bool:
    """Interval bounds and counts: in the log and the report, too much for a summary line."""
    return any(marker in metric for marker in _AUXILIARY)


def fmt_metric(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def headline(task: str, metrics: dict[str, float]) -> str:
    """The task's headline metric and value, e.g. `AUROC 0.963 (KNN, best of 10)`."""
    if not metrics:
        return "—"
    matches, direction, display = _schema_matches(task, metrics)
    if matches:
        pick = min if direction == "lower" else max
        label, value = pick(matches.items(), key=lambda kv: kv[1])
        if len(matches) == 1:
            return f"{display} {fmt_metric(value)}"
        method = label.rsplit("/", 2)[-2] if label.count("/") else label
        return f"{display} {fmt_metric(value)} ({method}, best of {len(matches)})"
    key = next((k for k in metrics if not is_auxiliary(k)), next(iter(metrics)))
    return f"{key} {fmt_metric(metrics[key])}"


def _schema_matches(task: str, metrics: dict[str, float]) -> tuple[dict[str, float], str, str]:
    """Metrics matching the schema's headline keys (first key with a match wins), the metric's
    direction and display name."""
    try:
        from reports import load_schema

        schema = load_schema(task)
    except Exception:  # noqa: BLE001 - a summary line never fails a finished run
        return {}, "higher", ""
    if schema is None:
        return {}, "higher", ""
    head = next((m for m in schema.metrics if m.headline), None)
    if head is None:
        return {}, "higher", ""
    for template in head.keys:
        rx = _template_regex(template)
        found = {k: v for k, v in metrics.items() if rx.fullmatch(k) and isinstance(v, int | float)}
        found = {k: v for k, v in found.items() if not is_auxiliary(k)}
        if found:
            return found, head.direction, head.display
    return {}, head.direction, head.display


def _template_regex(template: str) -> re.Pattern[str]:
    """`<scorer>/<metric>` with `*` and `{method}`; the summary drops the scorer of one-scorer
    logs, so the scorer part is optional."""
    scorer, _, name = template.partition("/") if "/" in template else ("*", "", template)
    parts = re.split(r"(\{method\}|\{scorer\})", name)
    name_re = "".join(
        "[^/]+" if p in ("{method}", "{scorer}") else re.escape(p) for p in parts if p
    )
    scorer_re = "[^/]+" if scorer in ("*", "{scorer}") else re.escape(scorer)
    return re.compile(f"(?:{scorer_re}/)?{name_re}")


def short_log(path: str) -> str:
    """`<created>_<task>_<id>.eval` -> the id's first 8 characters (unique in practice)."""
    stem = Path(path).stem
    return stem.rsplit("_", 1)[-1][:8] if "_" in stem else stem[:20]


def print_summary(console: Console, outcome: Any, elapsed: float, *, wide: bool = False) -> None:
    """One line per task; `wide`: every metric and the full log name."""
    title = f"harness eval — {elapsed:.0f} s — logs in {outcome.log_dir}"
    if wide:
        table = Table(title=title)
        for column in ("task", "model", "status", "samples", "metrics", "log"):
            table.add_column(column, overflow="fold")
        for s in outcome.summaries:
            metrics = ", ".join(f"{k}={fmt_metric(v)}" for k, v in s.metrics.items()) or "—"
            status = s.status if s.status == "success" else f"[red]{s.status}[/red]"
            if s.error:
                metrics = f"{metrics}\n[red]{s.error}[/red]"
            table.add_row(s.task, s.model, status, s.samples, metrics, Path(s.log).name)
        console.print(table)
        return
    table = Table(title=title, caption="--wide: every metric and the full log names")
    table.add_column("task", no_wrap=True, max_width=18, overflow="ellipsis")
    table.add_column("samples", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("headline", overflow="ellipsis", no_wrap=True, max_width=34)
    table.add_column("log", no_wrap=True)
    models = {s.model for s in outcome.summaries}
    for s in outcome.summaries:
        status = s.status if s.status == "success" else f"[red]{s.status}[/red]"
        task = s.task if len(models) == 1 else f"{s.task} ({s.model.rsplit('/', 1)[-1]})"
        table.add_row(task, s.samples, status, headline(s.task, s.metrics), short_log(s.log))
    console.print(table)
    if len(models) == 1 and models:
        console.print(f"model: {next(iter(models))}")
    for s in outcome.summaries:
        if s.error:
            console.print(f"[red]{s.task}: {s.error}[/red]", soft_wrap=True)
