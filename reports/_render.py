"""Write leaderboards as one self-contained HTML page, Markdown and CSV."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
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
    "per (task, model, model roles, task arguments, constrained decoding, model arguments, "
    "generation settings) the latest run with status 'success' is "
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


#: Metric columns a leaderboard shows before its "more" toggle (the schema's first ones, the
#: headline always among them); the other metrics sit behind the toggle.
MAIN_COLUMNS = 6


def _sort_value(v: float | None) -> str:
    return repr(float(v)) if finite(v) else ""


def public_path(path: str | Path | None) -> str:
    """A file the report names, without the building machine's directories.

    Schemas and paper numbers live in ``tasks/<task>/``: named from ``tasks/`` on. Anything else
    is named by its last folder and file (the report is read on other machines).
    """
    if not path:
        return ""
    parts = Path(str(path)).parts
    if "tasks" in parts:
        i = len(parts) - 1 - parts[::-1].index("tasks")
        return "/".join(parts[i:])
    return "/".join(parts[-2:]) if Path(str(path)).is_absolute() else str(path)


_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])/[^\s:;,'\"<>()\[\]]+")


def public_text(text: str) -> str:
    """``text`` with every absolute path in it shortened as :func:`public_path` does."""
    return _ABSOLUTE_PATH.sub(lambda m: public_path(m.group()), str(text))


def public_dir(path: Path) -> str:
    """The log directory as the page shows it: relative to the working directory when inside
    it, else its name (an absolute path would name the machine that built the report)."""
    if not path.is_absolute():
        return str(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return path.name


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
    share = row.format_failures / row.scored
    return f"{row.format_failures}/{row.scored} ({100 * share:.0f}%)", repr(share)


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
        "settings_text": [f"{k}={v}" for k, v in row.settings.items()],
        "cells": cells,
        "samples": row.samples,
        "scored": row.scored,
        "model_failures": row.model_failures,
        "infra_errors": row.infra_errors,
        "format_failures": format_failure_text(row)[0],
        "format_sort": format_failure_text(row)[1],
        "truncated": row.truncated,
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
            "path": public_path(lb.reference.path),
            "rows": ref_rows,
        }
    footnotes = [f"[{i}] {text}" for text, i in sorted(notes.items(), key=lambda kv: kv[1])]
    row_notes = [f"{r.label}: {n}" for r in lb.rows for n in r.notes]
    ref_notes = lb.reference.notes if lb.reference is not None else []
    # Method notes: how each metric is defined where the schema says (e.g. FPR@95's convention).
    metric_notes = [f"{m.display}: {m.description}" for m in lb.metrics if m.description]
    more = more_columns(lb)
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
        "headline_display": head.display if head else "",
        "has_comparisons": any(r.comparisons for r in lb.rows),
        "has_paper": any(r["paper"] != DASH for r in rows),
        "comparisons": comparisons,
        "reference": ref_view,
        "plots": plots,
        "notes": [
            public_text(n)
            for n in metric_notes + footnotes + row_notes + lb.notes + list(ref_notes)
        ],
    }


def summary_view(lb: Leaderboard) -> dict[str, Any]:
    """The task's line in the summary: its headline metric per model and method, the best
    marked, the paper's number beside each result it matches, format failures per model.

    Where one model and method ran under several settings (rows the task section keeps apart),
    the summary shows the run with the most scored samples (then the latest), never the best
    of them, and says how many settings there are.
    """
    head = lb.headline
    rows = [r for r in lb.rows if not r.is_slice]
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.model, r.method), []).append(r)
    entries: list[dict[str, Any]] = []
    for (model, method), group in groups.items():
        r = max(group, key=lambda x: (x.scored, x.run.created, x.run.completed))
        cell = r.cells.get(head.id) if head is not None else None
        value = cell.value if cell is not None and cell.present else None
        ref = reference_for_row(lb, r, head) if head is not None else None
        entries.append(
            {
                "model": model,
                "label": method or DASH,
                "value": fmt_value(value, head) if head is not None else DASH,
                "ci": fmt_interval(cell, head) if cell is not None and head is not None else "",
                "raw": value,
                "n": cell.n if cell is not None and cell.n else r.scored,
                "settings": len(group),
                "paper": f"{fmt_value(ref.value, head)} ({ref.ref.model})"
                if ref is not None and head is not None
                else "",
                "best": False,
            }
        )
    scored = [e for e in entries if e["raw"] is not None]
    if head is not None and head.direction != "none" and len(scored) > 1:
        pick = max if head.direction == "higher" else min
        best = pick(e["raw"] for e in scored)
        for e in scored:
            e["best"] = e["raw"] == best
    models: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        models.setdefault(e["model"], []).append(e)
    failures: dict[str, tuple[int, int]] = {}
    for r in rows:
        k, n = failures.get(r.model, (0, 0))
        failures[r.model] = (k + r.format_failures, n + r.scored)
    return {
        "metric": head.display if head is not None else DASH,
        "direction": head.direction if head is not None else "none",
        "models": [
            {
                "model": m,
                "entries": es,
                "format_failures": _share(*failures[m]),
            }
            for m, es in models.items()
        ],
    }


def _share(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else DASH


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


def render_html(views: list[dict[str, Any]], scope: ReportScope) -> str:
    template = _env().get_template("report.html.jinja")
    return template.render(
        title="Leaderboards",
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        log_dir=public_dir(scope.log_dir),
        n_runs=len(scope.runs),
        skipped=[SkippedLog(x.path, x.task, x.model, public_text(x.reason)) for x in scope.skipped],
        baseline=scope.baseline,
        selection_rule=SELECTION_RULE,
        interval_rule=scope.interval_rule,
        paired_rule=PAIRED_RULE,
        boards=views,
        runs=[_run_view(r) for r in scope.runs],
    )


def _md_summary(views: list[dict[str, Any]]) -> list[str]:
    """The summary table: one line per task, the best result in bold."""
    rows = []
    for v in views:
        sv = v["summary"]
        results = []
        for m in sv["models"]:
            items = []
            for e in m["entries"]:
                text = f"{e['label']} {e['value']}" + (
                    f" (1 of {e['settings']} settings)" if e["settings"] > 1 else ""
                )
                text = f"**{text}**" if e["best"] else text
                if e["paper"]:
                    text += f" (paper {e['paper']})"
                items.append(text)
            results.append(f"{m['model']}: " + "; ".join(items))
        formats = "; ".join(f"{m['model']}: {m['format_failures']}" for m in sv["models"])
        rows.append([v["task"], sv["metric"], " / ".join(results), formats])
    if not rows:
        return []
    return (
        ["## Summary", ""]
        + _md_table(
            ["Task", "Headline", "Ours (best in bold; paper beside)", "Format failures"], rows
        )
        + [""]
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


def render_markdown(views: list[dict[str, Any]], scope: ReportScope) -> str:
    runs, skipped = scope.runs, scope.skipped
    out = [
        "# Leaderboards",
        "",
        f"From `{public_dir(scope.log_dir)}` · {len(runs)} run(s) used, {len(skipped)} "
        f"skipped · baseline: {scope.baseline or 'none'}",
        "",
        f"- Run selection: {SELECTION_RULE}",
        f"- Intervals: {scope.interval_rule}",
        f"- Paired tests: {PAIRED_RULE}",
        "",
    ]
    out += _md_summary(views)
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
        header += ["Samples", "Scored", "Model failures", "Format failures", "Infra errors"]
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
            row += [
                r["samples"],
                r["scored"],
                r["model_failures"],
                r["format_failures"],
                r["infra_errors"],
            ]
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
            [[s.path, s.task or "?", s.model or "?", public_text(s.reason)] for s in skipped],
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
    "format_failures",
    "truncated",
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
                            "format_failures": row.format_failures,
                            "truncated": row.truncated,
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
