"""Leaderboards from inspect logs: intervals, paired comparisons, paper numbers beside ours.

``reports`` reads logs only (headers and sample summaries); it never imports ``tasks`` or
``methods``. Entry point: :func:`build_report` (what ``harness report`` calls).
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._build import ReportResult, build_report
    from ._headline import headline_of_log, headline_text, rank_methods
    from ._leaderboard import build_leaderboard
    from ._reference import load_reference, parse_reference
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
    from ._types import Cell, Comparison, Leaderboard, ReferenceRow, ReferenceTable, Row

# Names load on first use: `harness eval`'s summary needs only the schema reader, and the
# leaderboard modules pull in SciPy and matplotlib (seconds on a loaded 2-core machine).
_SOURCES = {
    **dict.fromkeys(("ReportResult", "build_report"), "._build"),
    **dict.fromkeys(
        ("Cell", "Comparison", "Leaderboard", "ReferenceRow", "ReferenceTable", "Row"), "._types"
    ),
    **dict.fromkeys(("headline_of_log", "headline_text", "rank_methods"), "._headline"),
    "build_leaderboard": "._leaderboard",
    **dict.fromkeys(("load_reference", "parse_reference"), "._reference"),
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
    "headline_of_log",
    "headline_text",
    "load_reference",
    "load_schema",
    "parse_reference",
    "parse_schema",
    "rank_methods",
    "read_runs",
    "select_runs",
]
