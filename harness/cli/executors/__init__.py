"""Running a `harness eval` grid (task × model × parameter) in this process or fanned out on Ray.

`harness eval task=a,b model=m1,m2 grid.<key>=v1,v2 executor=local|ray [ray_address=...]`:
each cell is one inspect eval-set into the grid's shared log directory (resumable by re-running
the same command); `harness report <log_dir>` reads the merged directory.
"""

from harness.cli.executors._cell import CellResult, drop_superseded_attempts, run_cell
from harness.cli.executors._grid import (
    EXECUTOR_OPTIONS,
    GRID_PREFIX,
    Executor,
    GridCell,
    GridPlan,
    is_grid_request,
    plan_grid,
)
from harness.cli.executors._run import grid_plan, run_grid, run_plan

__all__ = [
    "EXECUTOR_OPTIONS",
    "GRID_PREFIX",
    "CellResult",
    "Executor",
    "GridCell",
    "GridPlan",
    "drop_superseded_attempts",
    "grid_plan",
    "is_grid_request",
    "plan_grid",
    "run_cell",
    "run_grid",
    "run_plan",
]
