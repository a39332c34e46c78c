"""The report's first section: one line per task with its headline metric per model and method,
methods ranked best first and counted as methods, the reference number beside each result it
matches (never beside a smoke run), format failures per model."""

from __future__ import annotations

from typing import Any

from ._format import DASH, fmt_count_share, fmt_interval, fmt_reference, fmt_value
from ._headline import undefined_why
from ._reference import reference_for_row
from ._runs import recency
from ._schema import key_regex
from ._types import PAPER, Leaderboard, Row


def _over_datasets(lb: Leaderboard) -> bool:
    """Whether the headline per method is a mean over per-dataset cells the logs also hold."""
    head = lb.headline
    if head is None:
        return False
    for template in head.keys:
        if "{method}" in template:
            rx = key_regex(template.replace("{method}", "{scorer}/{method}", 1))
            if any(rx.fullmatch(k) for r in lb.rows for k in r.run.metrics):
                return True
    return False


_SPLIT_RANK = {"test": 2, "all": 1, "": 1, "dev": 0}


def _label(row: Row) -> str:
    """The method, with the data split said when the row is not a test-split run (a run that
    records no split is left unlabelled here; its header row says it)."""
    if row.run.data_split not in ("dev", "all"):
        return row.method or DASH
    split = f"split={row.run.data_split}"
    return f"{row.method} ({split})" if row.method else split


def _entry(lb: Leaderboard, group: list[Row]) -> dict[str, Any]:
    head = lb.headline
    # The headline is the test split's: a test run first, then one on all the data (or one
    # that does not record its split), a dev run only when there is nothing else; then the
    # most scored, then the latest as the runs' selection orders it (start and end stamps
    # tie inside one second: the log file's write time decides, never the file name)
    r = max(group, key=lambda x: (_SPLIT_RANK.get(x.run.data_split, 1), x.scored, recency(x.run)))
    cell = r.cells.get(head.id) if head is not None else None
    value = cell.value if cell is not None and cell.present else None
    ref = reference_for_row(lb, r, head) if head is not None else None
    numbers = lb.reference.numbers if lb.reference is not None else PAPER
    return {
        "model": r.model,
        "label": _label(r),
        "value": fmt_value(value, head) if head is not None else DASH,
        "ci": fmt_interval(cell, head) if cell is not None and head is not None else "",
        "raw": value,
        "undefined": cell.undefined if cell is not None and value is None else "",
        "n": cell.n if cell is not None and cell.n else r.scored,
        "settings": len(group),
        "paper": fmt_reference(ref, head, numbers) if ref is not None and head is not None else "",
        "smoke": r.smoke,
        "scored": r.scored,
        "best": False,
    }


def summary_view(lb: Leaderboard) -> dict[str, Any]:
    """The task's summary line (see the module docstring).

    Where one model and method ran under several settings (rows the task section keeps apart),
    the summary shows the run with the most scored samples (then the latest), never the best
    of them, and says how many settings there are.
    """
    head = lb.headline
    rows = [r for r in lb.rows if not r.is_slice]
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.model, r.method), []).append(r)
    entries = [_entry(lb, group) for group in groups.values()]
    sign = -1.0 if head is not None and head.direction == "lower" else 1.0
    scored = [e for e in entries if e["raw"] is not None]
    if head is not None and head.direction != "none" and len(scored) > 1:
        best = max(sign * e["raw"] for e in scored)
        for e in scored:
            e["best"] = sign * e["raw"] == best
    models: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        models.setdefault(e["model"], []).append(e)
    failures: dict[str, tuple[int, int]] = {}
    for r in rows:
        k, n = failures.get(r.model, (0, 0))
        failures[r.model] = (k + r.format_failures, n + r.scored)
    over = _over_datasets(lb)
    min_n = lb.reference.min_samples if lb.reference is not None else None
    return {
        "metric": head.display if head is not None else DASH,
        "direction": head.direction if head is not None else "none",
        "models": [
            _model_view(model, es, head, over, fmt_count_share(*failures[model]), sign, min_n)
            for model, es in models.items()
        ],
    }


def _model_view(
    model: str,
    entries: list[dict[str, Any]],
    head: Any,
    over: bool,
    failures: str,
    sign: float,
    min_n: int | None,
) -> dict[str, Any]:
    """One model's results, ranked best first; all undefined said once, with the reason."""
    defined = sorted(
        (e for e in entries if e["raw"] is not None), key=lambda e: (-sign * e["raw"], e["label"])
    )
    undefined = [e for e in entries if e["raw"] is None]
    methods = len([e for e in entries if e["label"] != DASH])
    rank = ""
    if methods > 1 and defined:
        rank = f"best of {methods} methods" + (" by mean over datasets" if over else "")
    why = ""
    if not defined and undefined and head is not None:
        reason = next((e["undefined"] for e in undefined if e["undefined"]), "")
        why = reason or undefined_why(head, methods)
        if methods > 1:
            why += f"; all {methods} methods"
    smoke = [e for e in entries if e["smoke"]]
    return {
        "model": model,
        "entries": defined + ([] if why else undefined),
        "undefined": why,
        "rank": rank,
        "smoke": (
            f"smoke run ({min(e['scored'] for e in smoke)} scored, fewer than {min_n})"
            if smoke
            else ""
        ),
        "format_failures": failures,
    }
