"""The grid's cells one after another in this process (the reference for the Ray fan-out)."""

from __future__ import annotations

from rich.console import Console

from harness.executors._cell import CellResult, run_cell
from harness.executors._grid import GridPlan
from harness.models.aliases import ModelServers


def run_local(plan: GridPlan, console: Console) -> list[CellResult]:
    """Each cell in turn, sharing the model servers (one vLLM start for the whole grid)."""
    results = []
    with ModelServers() as servers:
        for number, cell in enumerate(plan.cells, 1):
            console.rule(f"cell {number}/{len(plan.cells)}: {cell.label}")
            results.append(run_cell(cell.args, display=plan.display, servers=servers))
    return results
