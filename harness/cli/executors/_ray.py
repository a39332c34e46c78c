"""The grid's cells as Ray tasks, each an inspect eval-set into the grid's one log directory.

Every cell is independent and resumable (eval-set semantics), so a cell lost with its node is
either retried by Ray on another node (`max_retries`) or, when the run is given up, resumed by
re-running the same command: finished cells are found complete in the log directory and their
samples reused; a cell cut short keeps the samples it had flushed.

The log directory must be reachable under the same name from every node: a shared file system
path or an fsspec URL (`s3://...`).
"""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness.cli.executors._cell import CellResult, run_cell
from harness.cli.executors._grid import GridCell, GridPlan

# Environment the cells need on every node: the project's settings and the offline switches.
FORWARDED_ENV_PREFIXES = ("HARNESS_",)
FORWARDED_ENV = (
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "TOKENIZERS_PARALLELISM",
    "VLLM_BASE_URL",
)
# Ray's retries of a cell whose worker or node died (a cell that raises is not retried: it is
# an infrastructure error reported as the cell's result, and a re-run resumes it).
CELL_MAX_RETRIES = 2
# How often the driver, waiting for cells, checks that some node is still alive.
NODE_CHECK_S = 30.0


def run_cell_on_worker(args: tuple[str, ...]) -> CellResult:
    """The Ray task: one cell, without a live display (a worker has no terminal)."""
    return run_cell(args, display="none")


def forwarded_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The driver's settings that every cell must see, whatever environment its node has."""
    environ = dict(os.environ if environ is None else environ)
    return {
        k: v
        for k, v in environ.items()
        if k in FORWARDED_ENV or any(k.startswith(p) for p in FORWARDED_ENV_PREFIXES)
    }


def run_ray(plan: GridPlan, console: Console) -> list[CellResult]:
    """Submit every cell, collect them as they finish (a lost cell is a failed result)."""
    import ray

    init: dict[str, Any] = {
        "address": plan.ray_address,
        "runtime_env": {"env_vars": forwarded_env()},
        "logging_level": "WARNING",
        "log_to_driver": False,
    }
    if plan.ray_address is None and "RAY_ADDRESS" not in os.environ:
        init["include_dashboard"] = False  # a throw-away local cluster on this machine
    ray.init(**init)
    try:
        cluster = ray.cluster_resources()
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        console.print(
            f"ray: {len(plan.cells)} cells on {len(nodes)} node(s), "
            f"{cluster.get('CPU', 0):.0f} CPU; logs in {plan.log_dir}"
        )
        remote = ray.remote(num_cpus=1, max_retries=CELL_MAX_RETRIES)(run_cell_on_worker)
        pending: dict[Any, GridCell] = {remote.remote(cell.args): cell for cell in plan.cells}
        results: dict[GridCell, CellResult] = {}
        columns = (
            TextColumn("cells"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
        )
        with Progress(*columns, console=console, transient=False) as progress:
            bar = progress.add_task("", total=len(plan.cells))
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1, timeout=NODE_CHECK_S)
                if not done and not any(n.get("Alive") for n in ray.nodes()):
                    raise RuntimeError(
                        f"no Ray node is alive ({len(pending)} cells unfinished); "
                        "restart the cluster and re-run the same command to resume"
                    )
                for ref in done:
                    cell = pending.pop(ref)
                    results[cell] = _collect(ray, ref, cell)
                    state = "ok" if results[cell].success else "FAILED"
                    progress.update(bar, advance=1, description=f"{state}: {cell.label}")
        return [results[cell] for cell in plan.cells]
    finally:
        ray.shutdown()


def _collect(ray: Any, ref: Any, cell: GridCell) -> CellResult:
    try:
        result: CellResult = ray.get(ref)
        return result
    except ray.exceptions.RayError as exc:
        # A cell that raised, or whose worker/node died more often than Ray retries.
        cause = getattr(exc, "cause", None) or exc
        lines = [line for line in str(cause).splitlines() if line.strip()]
        return CellResult(
            args=cell.args,
            success=False,
            error=f"{type(cause).__name__}: {lines[-1] if lines else ''}"[:300],
        )
