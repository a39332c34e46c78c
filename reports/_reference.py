"""The papers' reference numbers: ``tasks/<name>/reference.yaml``, read as data.

The file is found next to the task package without importing it (``importlib.util.find_spec``
locates the ``tasks`` package directory; a checkout's ``tasks/`` folder is the fallback).
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_REPO_TASKS = Path(__file__).resolve().parent.parent / "tasks"


@dataclass(frozen=True)
class ReferenceRow:
    model: str
    metric: str
    value: float
    method: str | None = None
    dataset: str | None = None
    note: str = ""
    scaled: bool = False  # the file gave an explicit 'scale' (so no percent guessing)


@dataclass
class ReferenceTable:
    task: str
    paper: str
    source: str
    path: str
    rows: list[ReferenceRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def task_dirs() -> list[Path]:
    """Candidate directories holding ``<task>/reference.yaml``."""
    dirs: list[Path] = []
    try:
        spec = importlib.util.find_spec("tasks")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        dirs.extend(Path(p) for p in spec.submodule_search_locations)
    if _REPO_TASKS.is_dir() and _REPO_TASKS not in dirs:
        dirs.append(_REPO_TASKS)
    return dirs


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
