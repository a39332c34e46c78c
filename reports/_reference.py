"""The papers' reference numbers: ``tasks/<name>/reference.yaml``, read as data, and matched to
leaderboard rows.

The file is found next to the task package without importing it (``importlib.util.find_spec``
locates the ``tasks`` package directory; a checkout's ``tasks/`` folder is the fallback). A paper
number sits beside a row when the method, the dataset (the row's part, else its task arguments)
and the metric agree.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from ._runs import fmt_arg
from ._schema import MetricSpec
from ._taskfiles import task_dirs
from ._types import Cell, Leaderboard, ReferenceMatch, ReferenceRow, ReferenceTable, Row

# Task-argument names that select a dataset (reference rows are matched against their values).
_DATASET_ARG_HINTS = ("dataset", "subset")


def _scale(raw: dict[str, Any], top: Any, where: str) -> float:
    value = raw.get("scale", top)
    if value is None:
        return 1.0
    try:
        scale = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: 'scale' must be a number, got {value!r}") from exc
    if scale <= 0:
        raise ValueError(f"{where}: 'scale' must be positive, got {scale}")
    return scale


def parse_reference(data: Any, task: str, path: str) -> ReferenceTable:
    """Parse a reference file; malformed rows become notes naming the row, never an exception."""
    table = ReferenceTable(task=task, paper="", source="", path=path)
    if not isinstance(data, dict):
        table.notes.append(f"{path}: expected a mapping with 'paper' and 'rows'; ignored")
        return table
    table.paper = str(data.get("paper", ""))
    table.source = str(data.get("source", ""))
    _parse_report_key(table, data.get("report"), path)
    rows = data.get("rows") or []
    if not isinstance(rows, list):
        table.notes.append(f"{path}: 'rows' must be a list; ignored")
        return table
    for i, raw in enumerate(rows):
        where = f"{path}: rows[{i}]"
        if not isinstance(raw, dict):
            table.notes.append(f"{where}: not a mapping; skipped")
            continue
        missing = [k for k in ("model", "metric", "value") if raw.get(k) in (None, "")]
        if missing:
            table.notes.append(f"{where}: missing {', '.join(missing)}; skipped")
            continue
        try:
            value = float(raw["value"]) / _scale(raw, data.get("scale"), where)
            scaled = raw.get("scale", data.get("scale")) is not None
        except (TypeError, ValueError) as exc:
            table.notes.append(f"{where}: value {raw['value']!r} is not a number ({exc}); skipped")
            continue
        if not math.isfinite(value):
            table.notes.append(f"{where}: value is not finite; skipped")
            continue
        table.rows.append(
            ReferenceRow(
                model=str(raw["model"]),
                metric=str(raw["metric"]),
                value=value,
                method=None if raw.get("method") is None else str(raw["method"]),
                dataset=None if raw.get("dataset") is None else str(raw["dataset"]),
                note=str(raw.get("note", "")),
                scaled=scaled,
            )
        )
    return table


def _parse_report_key(table: ReferenceTable, raw: Any, path: str) -> None:
    """``report: {min_samples: N, numbers: "<what the numbers are>"}``; bad fields are notes."""
    if raw is None:
        return
    if not isinstance(raw, dict):
        table.notes.append(f"{path}: 'report' must be a mapping; ignored")
        return
    unknown = sorted(set(raw) - {"min_samples", "numbers"})
    if unknown:
        table.notes.append(f"{path}: report: unknown field(s) {unknown}; ignored")
    n = raw.get("min_samples")
    if n is not None:
        if isinstance(n, int) and not isinstance(n, bool) and n >= 1:
            table.min_samples = n
        else:
            table.notes.append(f"{path}: report.min_samples must be a positive integer, got {n!r}")
    numbers = raw.get("numbers")
    if numbers is not None:
        if isinstance(numbers, str) and numbers.strip():
            table.numbers = numbers.strip()
        else:
            table.notes.append(f"{path}: report.numbers must be a non-empty text, got {numbers!r}")


def load_reference(task: str, dirs: list[Path] | None = None) -> ReferenceTable | None:
    """The reference table for ``task``; None when the task ships no reference.yaml."""
    for base in dirs if dirs is not None else task_dirs():
        path = base / task / "reference.yaml"
        if path.is_file():
            try:
                data = yaml.safe_load(path.read_text())
            except (OSError, yaml.YAMLError) as exc:
                table = ReferenceTable(task=task, paper="", source="", path=str(path))
                table.notes.append(f"{path}: unreadable ({type(exc).__name__}: {exc}); ignored")
                return table
            return parse_reference(data, task, str(path))
    return None


# ------------------------------------------------------------------ matching rows


def _norm(s: str | None) -> str:
    return (s or "").strip().lower().replace("-", "_").replace(" ", "_")


def match_reference(lb: Leaderboard) -> None:
    """Pair each paper number with the rows that measure the same method, dataset and metric."""
    ref = lb.reference
    if ref is None:
        return
    by_name: dict[str, MetricSpec] = {}
    for m in lb.metrics:
        by_name.setdefault(_norm(m.reference_metric or m.id), m)
        by_name.setdefault(_norm(m.metric_name), m)
    for r in ref.rows:
        metric = by_name.get(_norm(r.metric))
        value, note = r.value, ""
        if metric is None:
            note = f"metric '{r.metric}' not on this leaderboard"
        elif metric.format == "percent" and not r.scaled and 1.0 < value <= 100.0:
            value /= 100.0
            note = "paper value read as a percentage (no 'scale' in reference.yaml)"
        ours: list[tuple[str, Cell]] = []
        if metric is not None:
            for row in lb.rows:
                if not row.comparable or not row_matches_ref(row, r):
                    continue
                cell = row.cells.get(metric.id)
                if cell is not None and cell.present:
                    ours.append((row.label, cell))
        lb.reference_matches.append(
            ReferenceMatch(
                ref=r, metric_id=metric.id if metric else None, value=value, ours=ours, note=note
            )
        )


def _is_dataset_arg(name: str) -> bool:
    low = name.lower()
    return any(hint in low for hint in _DATASET_ARG_HINTS)


def row_has_dataset(row: Row, dataset: str) -> bool:
    """Whether ``row`` measures the paper's ``dataset`` (by its part, else its task arguments)."""
    want = _norm(dataset)
    if row.is_slice:
        return _norm(row.part) == want
    parts = {_norm(p) for p in row.run_parts}
    if len(parts) > 1 and want in parts:
        # The pooled row mixes this dataset with others; the part row carries its number.
        return False
    if len(parts) == 1 and want in parts:
        return True
    args = row.run.task_args
    values = {_norm(fmt_arg(v)) for v in args.values()}
    if want in values:
        return True
    # A run without any dataset-like argument cannot contradict the paper's dataset; one with
    # such an argument set to something else (e.g. subset=both) does.
    return not any(_is_dataset_arg(k) for k in args)


def row_matches_ref(row: Row, ref: ReferenceRow) -> bool:
    if ref.method and _norm(row.method) != _norm(ref.method):
        return False
    if ref.dataset:
        return row_has_dataset(row, ref.dataset)
    # A number for the paper's whole setting belongs beside whole runs, not beside a part.
    return not row.is_slice


def reference_for_row(lb: Leaderboard, row: Row, metric: MetricSpec) -> ReferenceMatch | None:
    """The first reference number for this row's method and ``metric`` (for the table column);
    never for a smoke run or a run off the paper's protocol."""
    if not row.comparable:
        return None
    for m in lb.reference_matches:
        if m.metric_id == metric.id and row_matches_ref(row, m.ref):
            return m
    return None
