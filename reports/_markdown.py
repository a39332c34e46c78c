"""The report in Markdown: the same sections as the HTML page (``leaderboard.md``)."""

from __future__ import annotations

import json
from typing import Any

from ._format import DASH
from ._public import public_dir, public_text
from ._view import PAIRED_RULE, SELECTION_RULE, ReportScope


def _md_model(m: dict[str, Any]) -> str:
    """One model's results in the summary: ranked, the best in bold, undefined said once."""
    items = []
    for e in m["entries"]:
        value = "undefined" if e["raw"] is None else e["value"]
        text = f"{e['label']} {value}" + (
            f" (1 of {e['settings']} settings)" if e["settings"] > 1 else ""
        )
        text = f"**{text}**" if e["best"] else text
        if e["paper"]:
            text += f" ({e['paper']})"
        items.append(text)
    if m["undefined"]:
        items.append(f"undefined ({m['undefined']})")
    lead = " · ".join(x for x in (m["smoke"], m["rank"]) if x)
    return f"{m['model']}: " + (f"{lead}: " if lead else "") + "; ".join(items)


def _md_summary(views: list[dict[str, Any]]) -> list[str]:
    """The summary table: one line per task, the best result in bold."""
    rows = []
    for v in views:
        sv = v["summary"]
        results = [_md_model(m) for m in sv["models"]]
        formats = "; ".join(f"{m['model']}: {m['format_failures']}" for m in sv["models"])
        rows.append([v["task"], sv["metric"], " / ".join(results), formats])
    if not rows:
        return []
    header = [
        "Task",
        "Headline",
        "Ours (best in bold; reference numbers beside)",
        "Format failures",
    ]
    return ["## Summary", "", *_md_table(header, rows), ""]


def _md_escape(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = [
        "| " + " | ".join(_md_escape(h) for h in header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
    return lines


def _md_board(v: dict[str, Any]) -> list[str]:
    out = [f"## {v['title']} (`{v['task']}`)", ""]
    if v["description"]:
        out += [v["description"], ""]
    grouped = len(v["groups"]) > 1 or any(g["header"] for g in v["groups"])
    header = ["Model", "Method"] + (["Run"] if grouped else [])
    if v["part_name"]:
        header.append(v["part_name"])
    header += [m.display for m in v["metrics"]]
    if v["has_comparisons"]:
        header.append(f"Δ {v['headline_display']} vs baseline")
    if v["has_paper"]:
        header.append(v["paper_header"])
    header += ["Samples", "Scored", "Model failures", "Format failures", "Infra errors"]
    rows = []
    for i, group in enumerate(v["groups"], 1):
        for r in group["rows"]:
            cells = [
                (f"{c['value']} {c['ci']}".strip() if c["present"] else DASH)
                + (f" [{c['note_id']}]" if c["note"] else "")
                for c in r["cells"]
            ]
            row = [r["model"], r["method"] or DASH] + ([f"[{i}]"] if grouped else [])
            if v["part_name"]:
                row.append(r["part"])
            row += cells
            if v["has_comparisons"]:
                why = f" ({r['delta_why']})" if r["delta_why"] else ""
                row.append(r["delta"] + why + (f" p={r['delta_p']}" if r["delta_p"] else ""))
            if v["has_paper"]:
                row.append(r["paper_model"] or DASH)
            row += [
                r["samples"],
                r["scored"],
                r["model_failures"],
                r["format_failures"],
                r["infra_errors"],
            ]
            rows.append(row)
    out += _md_table(header, rows) + [""]
    if grouped:
        out += [
            f"- [{i}] {g['header']} ({g['via']})" + (f" — {g['smoke']}" if g["smoke"] else "")
            for i, g in enumerate(v["groups"], 1)
        ] + [""]
    if v["comparison_summary"]:
        out += [f"### Paired comparisons against {v['baseline']}", ""]
        out += [v["comparison_summary"]["text"], ""]
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
            f"### {ref['title']}",
            "",
            f"{ref['paper']} · {ref['source']} · `{ref['path']}`",
            "",
        ]
        if ref["rows"]:
            out += _md_table(
                ["Model", "Method", "Dataset", "Metric", ref["numbers"], "Ours", "Note"],
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
    return out


def render_markdown(views: list[dict[str, Any]], scope: ReportScope) -> str:
    runs, skipped = scope.runs, scope.skipped
    out = [
        "# Leaderboards",
        "",
        f"From `{public_dir(scope.log_dir)}` · {len(runs)} run(s) used, {len(skipped)} "
        f"skipped · baseline: {scope.baseline or 'none'}",
        "",
    ]
    for s in scope.damaged:
        out += [f"**Warning:** `{s.path}` not used: {public_text(s.reason)}", ""]
    out += [
        f"- Run selection: {SELECTION_RULE}",
        f"- Intervals: {scope.interval_rule}",
        f"- Paired tests: {PAIRED_RULE}",
        "",
    ]
    out += _md_summary(views)
    for v in views:
        out += _md_board(v)
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
        ["Log", "Task", "Model", "Via", "Task arguments", "Created", "Samples"],
        [
            [
                r.path,
                r.task,
                r.model,
                r.via,
                json.dumps(r.task_args, sort_keys=True, default=str),
                r.created,
                r.completed_samples,
            ]
            for r in runs
        ],
    )
    return "\n".join(out) + "\n"
