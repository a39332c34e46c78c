"""The report as one self-contained HTML page (``report.html.jinja``): sortable tables, plots as
base64 PNG, details behind folds so that the answer comes first."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2

from ._public import public_dir, public_text
from ._runs import SkippedLog
from ._view import PAIRED_RULE, SELECTION_RULE, ReportScope, run_view


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent)),
        autoescape=jinja2.select_autoescape(["html", "jinja"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
    )


def _public(skipped: list[SkippedLog]) -> list[SkippedLog]:
    return [SkippedLog(x.path, x.task, x.model, public_text(x.reason)) for x in skipped]


def render_html(views: list[dict[str, Any]], scope: ReportScope) -> str:
    template = _env().get_template("report.html.jinja")
    return template.render(
        title="Leaderboards",
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        log_dir=public_dir(scope.log_dir),
        n_runs=len(scope.runs),
        skipped=_public(scope.skipped),
        skipped_summary=scope.skipped_summary(),
        damaged=_public(scope.damaged),
        baseline=scope.baseline,
        selection_rule=SELECTION_RULE,
        interval_rule=scope.interval_rule,
        paired_rule=PAIRED_RULE,
        boards=views,
        runs=[run_view(r) for r in scope.runs],
    )
