"""Leaderboards from inspect logs: intervals, paired comparisons, paper numbers beside ours.

``reports`` reads logs only (headers and sample summaries); it never imports ``tasks`` or
``methods``. Entry point: :func:`build_report` (what ``harness report`` calls).
"""

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
