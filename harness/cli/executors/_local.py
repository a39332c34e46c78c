"""The grid's cells one after another in this process (the reference for the Ray fan-out)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from harness.cli.executors._cell import CellResult, run_cell
from harness.cli.executors._grid import GridPlan
from harness.models.aliases import ModelServers


def run_local(plan: GridPlan, console: Console) -> list[CellResult]:
    """Each cell in turn, sharing the model servers (one vLLM start for the whole grid).

    A cell that raises is reported as failed and the grid goes on, as on Ray; a re-run of the
    same command resumes it.
    """
    from harness.cli.interrupt import raise_if_interrupted

    results = []
    with ModelServers() as servers:
        for number, cell in enumerate(plan.cells, 1):
            raise_if_interrupted()  # a Ctrl-C that a cell's error report swallowed
            console.rule(f"cell {number}/{len(plan.cells)}: {cell.label}")
            try:
                results.append(run_cell(cell.args, display=plan.display, servers=servers))
            except Exception as exc:  # noqa: BLE001 - one failed cell does not stop the grid
                lines = [line for line in str(exc).splitlines() if line.strip()]
                error = f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]
                console.print(f"[red]cell failed:[/red] {escape(error)}")
                results.append(CellResult(args=cell.args, success=False, error=error))
    return results
