"""``build_report``: log directory in, leaderboards (HTML, Markdown, CSV) out."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from ._csv import write_csv, write_skipped_csv
from ._html import render_html
from ._leaderboard import build_leaderboard
from ._markdown import render_markdown
from ._plots import plots_for
from ._public import public_text
from ._reference import load_reference
from ._runs import DAMAGED, Run, SkippedLog, read_runs, select_runs
from ._schema import generic_schema, load_schema
from ._types import Leaderboard
from ._view import ReportScope, board_view

MERGED = "same configuration and results as "


@dataclass
class ReportResult:
    """What ``build_report`` wrote and what it left out."""

    html: Path
    markdown: Path
    csv: Path
    skipped_csv: Path
    skipped: list[SkippedLog] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    leaderboards: list[Leaderboard] = field(default_factory=list)

    @property
    def tasks(self) -> list[str]:
        return [lb.task for lb in self.leaderboards]


def build_report(
    log_dir: Path,
    out_dir: Path,
    baseline: str | None = None,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    schema_dir: Path | None = None,
    reference_dirs: list[Path] | None = None,
) -> ReportResult:
    """Read every inspect log under ``log_dir`` and write the leaderboards into ``out_dir``.

    ``baseline`` names a model (or, failing that, a method) that paired comparisons are made
    against. Unreadable, unfinished and superseded logs are listed in ``ReportResult.skipped``
    (and in the report) rather than raising.
    """
    log_dir, out_dir = Path(log_dir), Path(out_dir)
    runs, unreadable = read_runs(log_dir)
    selected, superseded = select_runs(runs)
    skipped = [_instead(s, selected) for s in unreadable] + superseded
    for s in skipped:
        if s.reason.startswith(DAMAGED):  # said while the report is built, not only in it
            print(f"report: skipped {s.path}: {public_text(s.reason)}", file=sys.stderr)

    boards: list[Leaderboard] = []
    views = []
    for task in sorted({r.task for r in selected}):
        task_runs = [r for r in selected if r.task == task]
        schema = load_schema(task, schema_dir) or generic_schema(task)
        reference = load_reference(task, reference_dirs)
        lb = build_leaderboard(
            task,
            task_runs,
            schema,
            log_dir,
            baseline=baseline,
            reference=reference,
            n_boot=n_boot,
            seed=seed,
        )
        merged = [x for x in superseded if x.task == task and x.reason.startswith(MERGED)]
        if merged:
            lb.notes.append(
                f"{len(merged)} configuration(s) ran by both harness eval and inspect eval with "
                "the same results: merged into one row each (the other log is listed under "
                "Skipped logs)"
            )
        boards.append(lb)
        views.append(board_view(lb, plots_for(lb)))

    out_dir.mkdir(parents=True, exist_ok=True)
    result = ReportResult(
        html=out_dir / "index.html",
        markdown=out_dir / "leaderboard.md",
        csv=out_dir / "leaderboard.csv",
        skipped_csv=out_dir / "skipped.csv",
        skipped=skipped,
        runs=selected,
        leaderboards=boards,
    )
    scope = ReportScope(selected, skipped, log_dir, baseline, n_boot, seed)
    result.html.write_text(render_html(views, scope), encoding="utf-8")
    result.markdown.write_text(render_markdown(views, scope), encoding="utf-8")
    write_csv(result.csv, boards)
    write_skipped_csv(result.skipped_csv, skipped)
    return result


def _instead(skip: SkippedLog, selected: list[Run]) -> SkippedLog:
    """A damaged log whose run has an intact log among those used says which one."""
    if not skip.reason.startswith(DAMAGED) or not skip.eval_id:
        return skip
    for run in selected:
        if run.eval_id == skip.eval_id:
            return replace(skip, reason=f"{skip.reason}; using {run.name}, an intact log of it")
    return skip
