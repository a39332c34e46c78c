"""The report as tidy CSV: one line per (task, row, metric), and the skipped logs."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ._format import finite
from ._reference import reference_for_row
from ._runs import SkippedLog
from ._types import Leaderboard

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
    "smoke",
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
    "paper_numbers",
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
            numbers = lb.reference.numbers if lb.reference is not None else ""
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
                            "smoke": "yes" if row.smoke else "no",
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
                            "paper_numbers": numbers if ref else "",
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
