"""Per-sample values for intervals and paired tests, read from sample *summaries*.

``read_eval_log_sample_summaries`` reads the log's summary table (ids, scores, scalar metadata,
errors, limits), not the transcripts. Values are addressed by paths (README):
``score.<scorer>.value``, ``score.<scorer>.value.<key>``, ``score.<scorer>.metadata.<key>``,
``score.<scorer>.answer``, ``metadata.<key>``, ``target``, ``id``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log_sample_summaries

from scorers.stats import sample_order_key

_MISSING = object()
_STRING_VALUES = {
    "c": 1.0,
    "i": 0.0,
    "p": 0.5,
    "n": 0.0,
    "yes": 1.0,
    "no": 0.0,
    "true": 1.0,
    "false": 0.0,
}


@dataclass
class SampleRow:
    """One (sample, epoch) of a run, as far as leaderboards care."""

    key: str  # "<id>#<epoch>": what pairs two runs' samples
    error: str | None
    limit: str | None
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    target: Any = None
    id: Any = None
    epoch: int = 1


def read_sample_rows(log_path: Path) -> list[SampleRow]:
    """The log's samples, ordered by id (``scorers.stats.sample_order_key``) then epoch: the
    order the eval's metrics resample in, whatever order the samples finished in."""
    rows = []
    for s in read_eval_log_sample_summaries(str(log_path)):
        scores = {}
        for name, score in (s.scores or {}).items():
            scores[name] = {
                "value": score.value,
                "answer": score.answer,
                "metadata": dict(score.metadata or {}),
            }
        err = s.error if isinstance(s.error, str) or s.error is None else str(s.error)
        rows.append(
            SampleRow(
                key=f"{s.id}#{s.epoch}",
                error=err,
                limit=str(s.limit) if s.limit else None,
                scores=scores,
                metadata=dict(s.metadata or {}),
                target=s.target,
                id=s.id,
                epoch=int(s.epoch),
            )
        )
    rows.sort(key=lambda r: (sample_order_key(r.id), r.epoch))
    return rows


def lookup(row: SampleRow, path: str, scorer: str | None = None) -> Any:
    """The value at ``path`` in ``row``; raises ``KeyError`` naming the missing part."""
    if scorer is not None:
        path = path.replace("{scorer}", scorer)
    parts = path.split(".")
    head = parts[0]
    if head == "score":
        if len(parts) < 3:
            raise KeyError(f"path '{path}': expected score.<scorer>.<field>")
        name = parts[1]
        if name not in row.scores:
            raise KeyError(f"no score '{name}' (scores present: {sorted(row.scores)})")
        node: Any = row.scores[name]
        rest = parts[2:]
    elif head in ("metadata", "target", "id"):
        node = {"metadata": row.metadata, "target": row.target, "id": row.id}[head]
        rest = parts[1:]
    else:
        raise KeyError(f"path '{path}' must start with score., metadata., target or id")
    walked = [head] + (parts[1:2] if head == "score" else [])
    for part in rest:
        walked.append(part)
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise KeyError(f"'{'.'.join(walked)}' not found")
    return node


def to_float(value: Any) -> float | None:
    """Numeric reading of a score value (C/I/P/N and yes/no as inspect does); None if not one."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, str):
        low = value.strip().lower()
        if low in _STRING_VALUES:
            return _STRING_VALUES[low]
        try:
            v = float(low)
        except ValueError:
            return None
        return v if math.isfinite(v) else None
    return None


def column(
    rows: list[SampleRow], path: str, scorer: str | None = None
) -> tuple[dict[str, float], dict[str, str]]:
    """Numeric values at ``path`` per sample key (error samples excluded), and why others lack one."""
    values: dict[str, float] = {}
    missing: dict[str, str] = {}
    for row in rows:
        if row.error is not None:
            continue
        try:
            raw = lookup(row, path, scorer)
        except KeyError as exc:
            missing[row.key] = str(exc.args[0])
            continue
        v = to_float(raw)
        if v is None:
            missing[row.key] = f"non-numeric value {raw!r} at '{path}'"
        else:
            values[row.key] = v
    return values, missing


def raw_column(rows: list[SampleRow], path: str, scorer: str | None = None) -> dict[str, Any]:
    """Raw (unconverted) values at ``path`` per sample key, skipping errors and missing ones."""
    out: dict[str, Any] = {}
    for row in rows:
        if row.error is not None:
            continue
        try:
            out[row.key] = lookup(row, path, scorer)
        except KeyError:
            continue
    return out
