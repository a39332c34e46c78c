"""Write leaderboards as one self-contained HTML page, Markdown and CSV."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2

from ._format import (
    DASH,
    better,
    finite,
    fmt_cell,
    fmt_delta,
    fmt_interval,
    fmt_p,
    fmt_value,
)
from ._leaderboard import Leaderboard, Row
from ._plots import Plot
from ._reference import reference_for_row
from ._runs import Run, SkippedLog

SELECTION_RULE = (
    "per (task, model, model roles, task arguments) the latest run with status 'success' is "
    "used; unfinished, cancelled, failed, unreadable and superseded logs are listed under "
    "Skipped logs and never mixed in."
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


def _sort_value(v: float | None) -> str:
    return repr(float(v)) if finite(v) else ""


def _row_view(lb: Leaderboard, row: Row, notes: dict[str, int]) -> dict[str, Any]:
    cells = []
    for m in lb.metrics:
        c = row.cells.get(m.id)
        view = {
            "present": bool(c and c.present),
            "value": fmt_value(c.value, m) if c else DASH,
            "ci": fmt_interval(c, m) if c else "",
            "sort": _sort_value(c.value if c else None),
            "note": c.note if c else "",
            "note_id": "",
        }
        if view["note"]:
            view["note_id"] = notes.setdefault(view["note"], len(notes) + 1)
        cells.append(view)
    head = lb.headline
    out: dict[str, Any] = {
        "model": row.model,
        "method": row.method,
        "part": row.part if row.part is not None else DASH,
        "settings": list(row.settings.values()),
        "cells": cells,
        "samples": row.samples,
        "scored": row.scored,
        "model_failures": row.model_failures,
        "infra_errors": row.infra_errors,
        "delta": "",
        "delta_p": "",
        "delta_sort": "",
        "delta_class": "",
        "paper": DASH,
        "paper_sort": "",
    }
    if head is not None:
        comp = row.comparisons.get(head.id)
        if comp is not None:
            out["delta"] = fmt_delta(comp, head) if finite(comp.delta) else f"{DASH} ({comp.note})"
            out["delta_p"] = fmt_p(comp.p_value) if finite(comp.p_value) else ""
            out["delta_sort"] = _sort_value(comp.delta)
            out["delta_class"] = better(comp, head)
        ref = reference_for_row(lb, row, head)
        if ref is not None:
            out["paper"] = f"{fmt_value(ref.value, head)} ({ref.ref.model})"
            out["paper_sort"] = _sort_value(ref.value)
    return out


def board_view(lb: Leaderboard, plots: list[Plot]) -> dict[str, Any]:
    notes: dict[str, int] = {}
    rows = [_row_view(lb, r, notes) for r in lb.rows]
    head = lb.headline
    by_id = {m.id: m for m in lb.metrics}
    comparisons = []
    for r in lb.rows:
        for mid, c in r.comparisons.items():
            m = by_id[mid]
            comparisons.append(
                {
                    "row": r.label,
                    "baseline": c.baseline,
                    "metric": m.display,
                    "delta": fmt_delta(c, m),
                    "sort": _sort_value(c.delta),
                    "cls": better(c, m),
                    "p": fmt_p(c.p_value),
                    "p_sort": _sort_value(c.p_value),
                    "p_holm": fmt_p(c.p_holm),
                    "p_holm_sort": _sort_value(c.p_holm),
                    "test": c.test or DASH,
                    "n": c.n_paired,
                    "note": c.note,
                }
            )
    ref_view = None
    if lb.reference is not None:
        ref_rows = []
        for match in lb.reference_matches:
            m = by_id.get(match.metric_id) if match.metric_id else None
            ours = [f"{label}: {fmt_cell(cell, m)}" for label, cell in match.ours] if m else []
            ref_rows.append(
                {
                    "model": match.ref.model,
                    "method": match.ref.method or DASH,
                    "dataset": match.ref.dataset or DASH,
                    "metric": match.ref.metric,
                    "value": fmt_value(match.value, m) if m else f"{match.value:g}",
                    "sort": _sort_value(match.value),
                    "ours": ours,
                    "note": "; ".join(x for x in (match.note, match.ref.note) if x),
                }
            )
        ref_view = {
            "paper": lb.reference.paper,
            "source": lb.reference.source,
            "path": lb.reference.path,
            "rows": ref_rows,
        }
    footnotes = [f"[{i}] {text}" for text, i in sorted(notes.items(), key=lambda kv: kv[1])]
    row_notes = [f"{r.label}: {n}" for r in lb.rows for n in r.notes]
    ref_notes = lb.reference.notes if lb.reference is not None else []
    # Method notes: how each metric is defined where the schema says (e.g. FPR@95's convention).
    metric_notes = [f"{m.display}: {m.description}" for m in lb.metrics if m.description]
    return {
        "task": lb.task,
        "title": lb.schema.title,
        "description": lb.schema.description,
        "schema_source": lb.schema.source,
        "baseline": lb.baseline,
        "metrics": lb.metrics,
        "setting_names": list(lb.rows[0].settings) if lb.rows else [],
        "part_name": _part_header(lb),
        "rows": rows,
        "headline_display": head.display if head else "",
        "has_comparisons": any(r.comparisons for r in lb.rows),
        "has_paper": any(r["paper"] != DASH for r in rows),
        "comparisons": comparisons,
        "reference": ref_view,
        "plots": plots,
        "notes": metric_notes + footnotes + row_notes + lb.notes + list(ref_notes),
    }


def _part_header(lb: Leaderboard) -> str:
    """Header of the part column ("" when no row is split), named after the split field."""
    if lb.schema.split_rows_by is None or all(r.part is None for r in lb.rows):
        return ""
    return f"Part ({lb.schema.split_rows_by.rsplit('.', 1)[-1]})"


def _run_view(run: Run) -> dict[str, Any]:
    return {
        "path": run.path,
        "task": run.task,
        "model": run.model,
        "roles": ", ".join(f"{k}={v}" for k, v in run.model_roles.items()) or DASH,
        "args": json.dumps(run.task_args, sort_keys=True, default=str),
        "created": run.created,
        "samples": run.completed_samples,
        "deviations": "; ".join(run.deviations) or DASH,
    }


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent)),
        autoescape=jinja2.select_autoescape(["html", "jinja"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
    )


def render_html(
    views: list[dict[str, Any]],
    runs: list[Run],
    skipped: list[SkippedLog],
    *,
    log_dir: Path,
    baseline: str | None,
    n_boot: int,
    seed: int,
) -> str:
    template = _env().get_template("report.html.jinja")
    return template.render(
        title="Leaderboards",
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        log_dir=str(log_dir),
        n_runs=len(runs),
        skipped=skipped,
        baseline=baseline,
        selection_rule=SELECTION_RULE,
        interval_rule=INTERVAL_RULE.format(n_boot=n_boot, seed=seed),
        paired_rule=PAIRED_RULE,
        boards=views,
        runs=[_run_view(r) for r in runs],
    )


def _md_escape(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = [
        "| " + " | ".join(_md_escape(h) for h in header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
    return lines


def render_markdown(
    views: list[dict[str, Any]],
    runs: list[Run],
    skipped: list[SkippedLog],
    *,
    log_dir: Path,
    baseline: str | None,
    n_boot: int,
    seed: int,
) -> str:
    out = [
        "# Leaderboards",
        "",
        f"From `{log_dir}` · {len(runs)} run(s) used, {len(skipped)} skipped · "
        f"baseline: {baseline or 'none'}",
        "",
        f"- Run selection: {SELECTION_RULE}",
        f"- Intervals: {INTERVAL_RULE.format(n_boot=n_boot, seed=seed)}",
        f"- Paired tests: {PAIRED_RULE}",
        "",
    ]
    for v in views:
        out += [f"## {v['title']} (`{v['task']}`)", ""]
        if v["description"]:
            out += [v["description"], ""]
        header = ["Model", "Method", *v["setting_names"]]
        if v["part_name"]:
            header.append(v["part_name"])
        header += [m.display for m in v["metrics"]]
        if v["has_comparisons"]:
            header.append(f"Δ {v['headline_display']} vs baseline")
        if v["has_paper"]:
            header.append(f"Paper {v['headline_display']}")
        header += ["Samples", "Scored", "Model failures", "Infra errors"]
        rows = []
        for r in v["rows"]:
            cells = [
                (f"{c['value']} {c['ci']}".strip() if c["present"] else DASH)
                + (f" [{c['note_id']}]" if c["note"] else "")
                for c in r["cells"]
            ]
            row = [r["model"], r["method"] or DASH, *r["settings"]]
            if v["part_name"]:
                row.append(r["part"])
            row += cells
            if v["has_comparisons"]:
                row.append(r["delta"] + (f" p={r['delta_p']}" if r["delta_p"] else ""))
            if v["has_paper"]:
                row.append(r["paper"])
            row += [r["samples"], r["scored"], r["model_failures"], r["infra_errors"]]
            rows.append(row)
        out += _md_table(header, rows) + [""]
        if v["comparisons"]:
            out += [f"### Paired comparisons against {v['baseline']}", ""]
            out += _md_table(
                ["Row", "Baseline row", "Metric", "Δ [95% CI]", "p", "p (Holm)", "Test", "n"],
                [
                    [
                        c["row"],
                        c["baseline"],
                        c["metric"],
                        c["delta"],
                        c["p"],
                        c["p_holm"],
                        c["test"] + (f" ({c['note']})" if c["note"] else ""),
                        c["n"],
                    ]
                    for c in v["comparisons"]
                ],
            ) + [""]
        ref = v["reference"]
        if ref:
            out += [
                "### Paper reference numbers",
                "",
                f"{ref['paper']} · {ref['source']} · `{ref['path']}`",
                "",
            ]
            if ref["rows"]:
                out += _md_table(
                    ["Paper model", "Method", "Dataset", "Metric", "Paper", "Ours", "Note"],
                    [
                        [
                            x["model"],
                            x["method"],
                            x["dataset"],
                            x["metric"],
                            x["value"],
                            "; ".join(x["ours"]) or DASH,
                            x["note"],
                        ]
                        for x in ref["rows"]
                    ],
                ) + [""]
        if v["plots"]:
            out += [f"Plots: {', '.join(p.title for p in v['plots'])} (in the HTML report)", ""]
        if v["notes"]:
            out += ["Notes:", ""] + [f"- {n}" for n in v["notes"]] + [""]
    out += ["## Skipped logs", ""]
    if skipped:
        out += _md_table(
            ["Log", "Task", "Model", "Reason"],
            [[s.path, s.task or "?", s.model or "?", s.reason] for s in skipped],
        )
    else:
        out.append("None.")
    out += ["", "## Runs used", ""]
    out += _md_table(
        ["Log", "Task", "Model", "Task arguments", "Created", "Samples"],
        [
            [
                r.path,
                r.task,
                r.model,
                json.dumps(r.task_args, sort_keys=True, default=str),
                r.created,
                r.completed_samples,
            ]
            for r in runs
        ],
    )
    return "\n".join(out) + "\n"


CSV_COLUMNS = [
    "task",
    "model",
    "method",
    "settings",
    "part",
    "metric_id",
    "metric",
    "direction",
    "value",
    "ci_low",
    "ci_high",
    "interval",
    "n",
    "samples",
    "scored",
    "model_failures",
    "infra_errors",
    "baseline_row",
    "delta",
    "delta_low",
    "delta_high",
    "p_value",
    "p_holm",
    "paired_test",
    "n_paired",
    "paper_value",
    "paper_model",
    "note",
    "log",
]


def _num(v: float | None) -> str:
    return f"{v:.6g}" if finite(v) else ""


def write_csv(path: Path, boards: list[Leaderboard]) -> None:
    """Tidy CSV: one line per (task, row, metric)."""
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for lb in boards:
            for row in lb.rows:
                for m in lb.metrics:
                    cell = row.cells.get(m.id)
                    comp = row.comparisons.get(m.id)
                    ref = reference_for_row(lb, row, m)
                    writer.writerow(
                        {
                            "task": lb.task,
                            "model": row.model,
                            "method": row.method,
                            "settings": json.dumps(row.settings, sort_keys=True),
                            "part": row.part if row.part is not None else "",
                            "metric_id": m.id,
                            "metric": m.display,
                            "direction": m.direction,
                            "value": _num(cell.value if cell else None),
                            "ci_low": _num(cell.low if cell else None),
                            "ci_high": _num(cell.high if cell else None),
                            "interval": cell.interval if cell else "",
                            "n": cell.n if cell else 0,
                            "samples": row.samples,
                            "scored": row.scored,
                            "model_failures": row.model_failures,
                            "infra_errors": row.infra_errors,
                            "baseline_row": comp.baseline if comp else "",
                            "delta": _num(comp.delta if comp else None),
                            "delta_low": _num(comp.low if comp else None),
                            "delta_high": _num(comp.high if comp else None),
                            "p_value": _num(comp.p_value if comp else None),
                            "p_holm": _num(comp.p_holm if comp else None),
                            "paired_test": comp.test if comp else "",
                            "n_paired": comp.n_paired if comp else "",
                            "paper_value": _num(ref.value if ref else None),
                            "paper_model": ref.ref.model if ref else "",
                            "note": cell.note if cell else "",
                            "log": row.run.path,
                        }
                    )


def write_skipped_csv(path: Path, skipped: list[SkippedLog]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["log", "task", "model", "reason"])
        for s in skipped:
            writer.writerow([s.path, s.task or "", s.model or "", s.reason])
