"""`harness eval` on a grid: plan and check every cell, run them, one outcome for the summary."""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console

from harness.cli.discovery import discover_tasks
from harness.cli.eval import EvalOutcome, TaskSummary
from harness.cli.executors._cell import CellResult
from harness.cli.executors._grid import GridCell, GridPlan, plan_grid


def run_grid(args: list[str], console: Console) -> EvalOutcome:
    """Every cell of the grid `args` describes, on the executor it names."""
    return run_plan(grid_plan(args), console)


def grid_plan(args: list[str]) -> GridPlan:
    """The grid `args` describe, every cell checked (`ConfigError` naming what is wrong)."""
    registry = discover_tasks()
    return plan_grid(args, registry.tasks, all_tasks=sorted(registry.tasks))


def run_plan(plan: GridPlan, console: Console) -> EvalOutcome:
    """Every cell of `plan`; a Ctrl-C stops the grid (`KeyboardInterrupt`), not just its cell."""
    results = _execute(plan, console)
    summaries = []
    for cell, result in zip(plan.cells, results, strict=True):
        # The swept values beside the task name: the cells of a grid differ only in them.
        swept = "".join(f" {k}={v}" for k, v in cell.swept)
        if not result.summaries:  # the cell never produced a log: its error is the summary
            summaries.append(_failed_summary(cell, result, swept))
        summaries.extend(replace(s, task=f"{s.task}{swept}") for s in result.summaries)
    return EvalOutcome(
        success=all(r.success for r in results), summaries=summaries, log_dir=plan.log_dir
    )


def _execute(plan: GridPlan, console: Console) -> list[CellResult]:
    if plan.executor == "ray":
        from harness.cli.executors._ray import run_ray

        return run_ray(plan, console)
    from harness.cli.executors._local import run_local

    return run_local(plan, console)


def _failed_summary(cell: GridCell, result: CellResult, swept: str) -> TaskSummary:
    return TaskSummary(
        task=f"{cell.task_name}{swept}",
        model=cell.model,
        status="error",
        samples="—",
        metrics={},
        log="",
        error=f"{result.error} (re-run the same command to resume)",
    )
