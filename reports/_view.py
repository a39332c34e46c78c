"""What the writers show of a leaderboard, as plain data: rows grouped by run (a run's settings
said once), the comparisons summarised, reference numbers labelled by what they are; the HTML
and Markdown writers (``_html``, ``_markdown``) render these views."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._format import (
    DASH,
    better,
    finite,
    fmt_cell,
    fmt_count_share,
    fmt_delta,
    fmt_interval,
    fmt_p,
    fmt_reference,
    fmt_value,
)
from ._plots import Plot
from ._public import public_path, public_text
from ._reference import reference_for_row
from ._runs import DAMAGED, Run, SkippedLog
from ._summary import summary_view
from ._types import PAPER, Leaderboard, Row

SELECTION_RULE = (
    "per (task, model, model roles, task arguments, constrained decoding, model arguments, "
    "generation settings, data split) the latest run with status 'success' is "
    "used; unfinished, cancelled, failed, damaged, unreadable and superseded logs are listed "
    "under Skipped logs and never mixed in; a harness eval and an inspect eval run of one "
    "configuration with the same results are one row. Runs on different data splits (dev, "
    "test, all) are separate rows, never paired or averaged; a dev run is never set against "
    "reference numbers."
)
INTERVAL_RULE = (
    "95%; percentile bootstrap over samples ({n_boot} resamples, seed {seed}) for means and corpus "
    "metrics (AUROC, AUPR, macro means), Wilson score interval for 0/1 outcomes. Samples "
    "with an infrastructure error are excluded and counted apart."
)
PAIRED_RULE = (
    "on the samples both runs scored: paired bootstrap of the difference (interval and p), "
    "McNemar (exact below 25 discordant pairs) for 0/1 outcomes; p (Holm) adjusts over every "
    "comparison of the task."
)

#: Metric columns a leaderboard shows before its "more" toggle (the schema's first ones, the
#: headline always among them); the other metrics sit behind the toggle.
MAIN_COLUMNS = 6
#: Rows a leaderboard shows before its fold: whole runs, the first run always.
VISIBLE_ROWS = 12
#: Comparisons listed in view (the most significant); all of them sit behind a fold.
TOP_COMPARISONS = 3


def sort_value(v: float | None) -> str:
    return repr(float(v)) if v is not None and finite(v) else ""


def more_columns(lb: Leaderboard) -> list[bool]:
    """Per metric: True when it goes behind the "more" toggle."""
    shown = [m for m in lb.metrics if m.from_schema] or list(lb.metrics)[:4]
    head = lb.headline
    main = shown[:MAIN_COLUMNS]
    if head is not None and head not in main:
        main = [head, *main[: MAIN_COLUMNS - 1]]
    return [m not in main for m in lb.metrics]


def format_failure_text(row: Row) -> tuple[str, str]:
    """("k/n (p%)", sort key): scored samples whose reply did not parse."""
    if row.scored == 0:
        return DASH, ""
    return fmt_count_share(row.format_failures, row.scored), repr(row.format_failures / row.scored)


def numbers_of(lb: Leaderboard) -> str:
    """What the task's reference numbers are ("paper", "PyOD run", ...)."""
    return lb.reference.numbers if lb.reference is not None else PAPER


def _cell_views(lb: Leaderboard, row: Row, notes: dict[str, int]) -> list[dict[str, Any]]:
    cells = []
    for m in lb.metrics:
        c = row.cells.get(m.id)
        view: dict[str, Any] = {
            "present": bool(c and c.present),
            "value": fmt_value(c.value, m) if c else DASH,
            "ci": fmt_interval(c, m) if c else "",
            "sort": sort_value(c.value if c else None),
            "undefined": bool(c and c.undefined),
            "note": c.note if c else "",
            "note_id": "",
        }
        if view["note"]:
            view["note_id"] = notes.setdefault(view["note"], len(notes) + 1)
        cells.append(view)
    return cells


def _row_view(lb: Leaderboard, row: Row, notes: dict[str, int]) -> dict[str, Any]:
    head = lb.headline
    out: dict[str, Any] = {
        "model": row.model,
        "method": row.method,
        "part": row.part if row.part is not None else DASH,
        "settings": list(row.settings.values()),
        "cells": _cell_views(lb, row, notes),
        "samples": row.samples,
        "scored": row.scored,
        "model_failures": row.model_failures,
        "infra_errors": row.infra_errors,
        "format_failures": format_failure_text(row)[0],
        "format_sort": format_failure_text(row)[1],
        "truncated": row.truncated,
        "smoke": row.smoke,
        "delta": "",
        "delta_why": "",
        "delta_p": "",
        "delta_sort": "",
        "delta_class": "",
        "paper": DASH,
        "paper_model": "",
        "paper_sort": "",
    }
    if head is not None:
        comp = row.comparisons.get(head.id)
        if comp is not None:
            out["delta"] = fmt_delta(comp, head) if finite(comp.delta) else DASH
            out["delta_why"] = "" if finite(comp.delta) else comp.note or "undefined"
            out["delta_p"] = fmt_p(comp.p_value) if finite(comp.p_value) else ""
            out["delta_sort"] = sort_value(comp.delta)
            out["delta_class"] = better(comp, head)
        ref = reference_for_row(lb, row, head)
        if ref is not None:
            out["paper"] = fmt_value(ref.value, head)
            out["paper_model"] = fmt_reference(ref, head, numbers_of(lb))
            out["paper_sort"] = sort_value(ref.value)
    return out


def _groups(lb: Leaderboard, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows by run, each run's settings said once in its header; runs after the first
    ``VISIBLE_ROWS`` rows (the first run always shown) are folded. Without settings that
    differ between runs, one group and no header."""
    if not lb.rows:
        return []
    if not any(r.settings for r in lb.rows):
        return [{"header": "", "via": "", "smoke": "", "rows": rows, "folded": False}]
    out: list[dict[str, Any]] = []
    for row, view in zip(lb.rows, rows, strict=True):
        if not out or out[-1]["path"] != row.run.path:
            settings = " · ".join(f"{k}={v}" for k, v in row.settings.items())
            out.append(
                {
                    "path": row.run.path,
                    "header": f"{row.model}: {settings}" if settings else row.model,
                    "via": f"{row.run.via}, {row.scored} scored",
                    "smoke": "smoke run" if row.smoke else "",
                    "rows": [],
                    "folded": False,
                }
            )
        out[-1]["rows"].append(view)
    shown, folding = 0, False
    for i, group in enumerate(out):
        folding = folding or (i > 0 and shown + len(group["rows"]) > VISIBLE_ROWS)
        group["folded"] = folding
        shown += len(group["rows"])
    return out


def _comparisons(lb: Leaderboard) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Every comparison (for the fold), and what the page says of them in view."""
    by_id = {m.id: m for m in lb.metrics}
    comps: list[dict[str, Any]] = []
    for r in lb.rows:
        for mid, c in r.comparisons.items():
            m = by_id[mid]
            comps.append(
                {
                    "row": r.label,
                    "baseline": c.baseline,
                    "metric": m.display,
                    "delta": fmt_delta(c, m),
                    "sort": sort_value(c.delta),
                    "cls": better(c, m),
                    "p": fmt_p(c.p_value),
                    "p_sort": sort_value(c.p_value),
                    "p_holm": fmt_p(c.p_holm),
                    "p_holm_sort": sort_value(c.p_holm),
                    "holm": c.p_holm if finite(c.p_holm) else 2.0,
                    "test": c.test or DASH,
                    "n": c.n_paired,
                    "note": c.note,
                }
            )
    if not comps:
        return [], None
    n_better = sum(c["cls"] == "better" for c in comps)
    n_worse = sum(c["cls"] == "worse" for c in comps)
    n_holm = sum(c["holm"] < 0.05 for c in comps)
    n_undefined = sum(c["delta"] == DASH for c in comps)
    text = (
        f"{len(comps)} paired comparison(s) against {lb.baseline} over "
        f"{len({c['metric'] for c in comps})} metric(s): {n_better} better and {n_worse} worse "
        f"(95% interval of Δ excludes 0), {n_holm} with p (Holm) < 0.05"
        + (f", {n_undefined} undefined" if n_undefined else "")
        + "."
    )
    top = sorted((c for c in comps if c["holm"] < 0.05), key=lambda c: c["holm"])
    return comps, {"text": text, "top": top[:TOP_COMPARISONS]}


def _reference_view(lb: Leaderboard) -> dict[str, Any] | None:
    if lb.reference is None:
        return None
    by_id = {m.id: m for m in lb.metrics}
    numbers = numbers_of(lb)
    matched: list[dict[str, Any]] = []
    other: list[dict[str, Any]] = []
    for match in lb.reference_matches:
        m = by_id.get(match.metric_id) if match.metric_id else None
        ours = [f"{label}: {fmt_cell(cell, m)}" for label, cell in match.ours] if m else []
        model = match.ref.model
        view = {
            "model": DASH if model.strip().lower() in ("none", "") else model,
            "method": match.ref.method or DASH,
            "dataset": match.ref.dataset or DASH,
            "metric": match.ref.metric,
            "value": fmt_value(match.value, m) if m else f"{match.value:g}",
            "sort": sort_value(match.value),
            "ours": ours,
            "note": "; ".join(x for x in (match.note, match.ref.note) if x),
        }
        (matched if ours else other).append(view)
    title = "Paper reference numbers" if numbers == PAPER else f"Reference numbers ({numbers})"
    return {
        "title": title,
        "numbers": numbers,
        "paper": lb.reference.paper,
        "source": lb.reference.source,
        "path": public_path(lb.reference.path),
        "min_samples": lb.reference.min_samples,
        "matched": matched,
        "other": other,
        "rows": matched + other,
    }


def board_view(lb: Leaderboard, plots: list[Plot]) -> dict[str, Any]:
    notes: dict[str, int] = {}
    rows = [_row_view(lb, r, notes) for r in lb.rows]
    head = lb.headline
    comparisons, comparison_summary = _comparisons(lb)
    footnotes = [f"[{i}] {text}" for text, i in sorted(notes.items(), key=lambda kv: kv[1])]
    row_notes = [f"{r.label}: {n}" for r in lb.rows for n in r.notes]
    ref_notes = lb.reference.notes if lb.reference is not None else []
    # Method notes: how each metric is defined where the schema says (e.g. FPR@95's convention).
    metric_notes = [f"{m.display}: {m.description}" for m in lb.metrics if m.description]
    more = more_columns(lb)
    groups = _groups(lb, rows)
    return {
        "task": lb.task,
        "title": lb.schema.title,
        "description": lb.schema.description,
        "schema_source": public_path(lb.schema.source),
        "baseline": lb.baseline,
        "metrics": lb.metrics,
        "more": more,
        "n_more": sum(more),
        "summary": summary_view(lb),
        "setting_names": list(lb.rows[0].settings) if lb.rows else [],
        "part_name": _part_header(lb),
        "rows": rows,
        "groups": groups,
        "folded_rows": sum(len(g["rows"]) for g in groups if g["folded"]),
        # every run a smoke run: said once above the table, not on each row
        "all_smoke": bool(lb.rows) and all(r.smoke for r in lb.rows),
        "min_samples": lb.reference.min_samples if lb.reference is not None else None,
        "folded_runs": sum(1 for g in groups if g["folded"]),
        "headline_display": head.display if head else "",
        "has_comparisons": any(r.comparisons for r in lb.rows),
        "has_paper": any(r["paper"] != DASH for r in rows),
        "paper_header": f"{numbers_of(lb)} {head.display if head else ''}".strip(),
        "comparisons": comparisons,
        "comparison_summary": comparison_summary,
        "reference": _reference_view(lb),
        "plots": plots,
        "notes": [
            public_text(n)
            for n in metric_notes + footnotes + row_notes + lb.notes + list(ref_notes)
        ],
    }


def _part_header(lb: Leaderboard) -> str:
    """Header of the part column ("" when no row is split), named after the split field."""
    if lb.schema.split_rows_by is None or all(r.part is None for r in lb.rows):
        return ""
    return f"Part ({lb.schema.split_rows_by.rsplit('.', 1)[-1]})"


def run_view(run: Run) -> dict[str, Any]:
    return {
        "path": run.path,
        "task": run.task,
        "model": run.model,
        "roles": ", ".join(f"{k}={v}" for k, v in run.model_roles.items()) or DASH,
        "args": json.dumps(run.task_args, sort_keys=True, default=str),
        "created": run.created,
        "samples": run.completed_samples,
        "via": run.via,
        "deviations": "; ".join(run.deviations) or DASH,
    }


@dataclass(frozen=True)
class ReportScope:
    """What both renderings say of the report as a whole: the runs used and the logs skipped,
    where they were read from, the baseline, and how the intervals were drawn."""

    runs: list[Run]
    skipped: list[SkippedLog]
    log_dir: Path
    baseline: str | None
    n_boot: int
    seed: int

    @property
    def interval_rule(self) -> str:
        return INTERVAL_RULE.format(n_boot=self.n_boot, seed=self.seed)

    @property
    def damaged(self) -> list[SkippedLog]:
        """Logs that failed their integrity check: said at the top of the report."""
        return [s for s in self.skipped if s.reason.startswith(DAMAGED)]

    def skipped_summary(self) -> str:
        """How many logs were skipped, by kind of reason."""
        kinds: dict[str, int] = {}
        for s in self.skipped:
            kind = s.reason.split(" (", 1)[0].split(":", 1)[0].split(";", 1)[0]
            kind = " ".join(kind.split()[:4])
            kinds[kind] = kinds.get(kind, 0) + 1
        return ", ".join(f"{n} {k}" for k, n in kinds.items())
