"""The table a run ends with: one line per task that fits 80 columns, or everything (`--wide`).

The compact table shows, per task, the headline metric its leaderboard schema names
(`tasks/<task>/leaderboard.yaml`) as `reports.headline_text` words it for the report too: where a
task logs the headline per method (`dispat`: `KNN/auroc`, `IForest/auroc`, ...) the methods are
ranked by their mean over datasets and counted as methods; an all-NaN headline says undefined and
why. Then the samples, the status and a short log name (the log's id; the folder is in the
title). Names are shortened to fit 80 columns, numbers never. `--wide` prints every metric and the
full log name, as before.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

_AUXILIARY = ("stderr", "wilson", "_low", "_high", "/n_", "boot", "ci_", "_lo", "_hi")


def is_auxiliary(metric: str) -> bool:
    """Interval bounds and counts: in the log and the report, too much for a summary line."""
    return any(marker in metric for marker in _AUXILIARY)


def fmt_metric(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def headline(task: str, metrics: dict[str, float], scored: dict[str, float] | None = None) -> str:
    """The task's headline metric and value, e.g. `AUROC 0.963 (KNN, best of 10 methods by mean
    over datasets)`: `reports.headline_text`, the function the report's summary uses too.

    `scored`: the results keyed "<score name>/<metric>" (TaskSummary.scored); without it,
    `metrics` as the summary keys them (the score name dropped for one-scorer logs).
    """
    if not metrics and not scored:
        return "—"
    try:
        from reports import headline_text

        if scored:
            return str(headline_text(task, scored))
        text = str(headline_text(task, metrics))
        if text.startswith(f"{next(iter(metrics))} "):  # no schema key matched: one-scorer keys?
            prefixed = str(headline_text(task, {f"_/{k}": v for k, v in metrics.items()}))
            text = text if prefixed.startswith("_/") else prefixed
        return text
    except Exception:  # noqa: BLE001 - a summary line never fails a finished run
        key = next((k for k in metrics if not is_auxiliary(k)), next(iter(metrics)))
        return f"{key} {fmt_metric(metrics[key])}"


#: Wording a headline drops, in turn, to fit its column (names and words, never numbers).
_SHORTER = ((" methods by mean over datasets", " by mean"), (" methods", ""), (", best of", " of"))


def fit(text: str, width: int) -> str:
    """`text` within `width` by shorter wording and, last, shortening the metric's name; the
    numbers are never cut (what does not fit then wraps)."""
    for long, short in _SHORTER:
        if len(text) <= width:
            return text
        text = text.replace(long, short)
    if len(text) <= width:
        return text
    match = re.search(r" (undefined|[-+]?(\d|nan|inf))", text)
    if match is None:
        return text
    name, rest = text[: match.start()], text[match.start() :]
    room = width - len(rest)
    if room >= 4 and len(name) > room:
        name = name[: room - 1].rstrip() + "…"
    return name + rest


_HEADERS = ("task", "samples", "status", "headline", "log")


def _plain(text: str) -> str:
    return re.sub(r"\[/?[a-z ]+\]", "", text)


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
    models = {s.model for s in outcome.summaries}
    rows = []
    for s in outcome.summaries:
        status = s.status if s.status == "success" else f"[red]{s.status}[/red]"
        task = s.task if len(models) == 1 else f"{s.task} ({s.model.rsplit('/', 1)[-1]})"
        rows.append(
            (task, s.samples, status, headline(s.task, s.metrics, s.scored), short_log(s.log))
        )
    # Every column but the headline as wide as its widest cell (headers never cut); the headline
    # gets the rest of the line and wraps rather than lose a number.
    widths = [max([len(h), *(len(_plain(r[i])) for r in rows)]) for i, h in enumerate(_HEADERS)]
    widths[0] = min(widths[0], 18)
    room = max(20, console.width - sum(w for i, w in enumerate(widths) if i != 3) - 2 * 4)
    table = Table(
        title=title,
        caption="--wide: every metric and the full log names",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
    )
    for i, name in enumerate(_HEADERS):
        if i == 3:
            table.add_column(name, overflow="fold", max_width=room)
        else:
            table.add_column(
                name,
                no_wrap=True,
                min_width=widths[i],
                max_width=widths[i],
                overflow="ellipsis",
                justify="right" if name == "samples" else "left",
            )
    for task, samples, status, text, log in rows:
        table.add_row(task, samples, status, fit(text, room), log)
    console.print(table)
    if len(models) == 1 and models:
        console.print(f"model: {next(iter(models))}")
    for s in outcome.summaries:
        if s.error:
            console.print(f"[red]{s.task}: {s.error}[/red]", soft_wrap=True)
