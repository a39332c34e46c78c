"""Leaderboards from inspect logs: intervals, paired comparisons, paper numbers beside ours.

``reports`` reads logs only (headers and sample summaries); it never imports ``tasks`` or
``methods``. Entry point: :func:`build_report` (what ``harness report`` calls).
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._build import ReportResult, build_report
    from ._compare import Comparison
    from ._leaderboard import Cell, Leaderboard, Row, build_leaderboard
    from ._reference import ReferenceRow, ReferenceTable, load_reference, parse_reference
    from ._runs import Run, SkippedLog, read_runs, select_runs
    from ._schema import (
        IntervalSpec,
        LeaderboardSchema,
        MetricSpec,
        PlotSpec,
        SchemaError,
        generic_schema,
        load_schema,
        parse_schema,
    )

# Names load on first use: `harness eval`'s summary needs only the schema reader, and the
# leaderboard modules pull in SciPy and matplotlib (seconds on a loaded 2-core machine).
_SOURCES = {
    **dict.fromkeys(("ReportResult", "build_report"), "._build"),
    "Comparison": "._compare",
    **dict.fromkeys(("Cell", "Leaderboard", "Row", "build_leaderboard"), "._leaderboard"),
    **dict.fromkeys(
        ("ReferenceRow", "ReferenceTable", "load_reference", "parse_reference"), "._reference"
    ),
    **dict.fromkeys(("Run", "SkippedLog", "read_runs", "select_runs"), "._runs"),
    **dict.fromkeys(
        (
            "IntervalSpec",
            "LeaderboardSchema",
            "MetricSpec",
            "PlotSpec",
            "SchemaError",
            "generic_schema",
            "load_schema",
            "parse_schema",
        ),
        "._schema",
    ),
}


def __getattr__(name: str) -> Any:
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module 'reports' has no attribute {name!r}")
    value = getattr(importlib.import_module(source, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "Cell",
    "Comparison",
    "IntervalSpec",
    "Leaderboard",
    "LeaderboardSchema",
    "MetricSpec",
    "PlotSpec",
    "ReferenceRow",
    "ReferenceTable",
    "ReportResult",
    "Row",
    "SchemaError",
    "SkippedLog",
    "Run",
    "build_leaderboard",
    "build_report",
    "generic_schema",
    "load_reference",
    "load_schema",
    "parse_reference",
    "parse_schema",
    "read_runs",
    "select_runs",
]
