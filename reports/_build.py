"""``build_report``: log directory in, leaderboards (HTML, Markdown, CSV) out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ._leaderboard import Leaderboard, build_leaderboard
from ._plots import plots_for
from ._reference import load_reference
from ._render import (
    ReportScope,
    board_view,
    render_html,
    render_markdown,
    write_csv,
    write_skipped_csv,
)
from ._runs import Run, SkippedLog, read_runs, select_runs
from ._schema import generic_schema, load_schema


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
    skipped = unreadable + superseded

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
