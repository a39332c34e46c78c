"""Running one grid cell: the same configuration check and eval-set as `harness eval`."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.config import build_eval_config
from harness.discovery import discover_tasks
from harness.eval import EvalOutcome, TaskSummary, run_eval

if TYPE_CHECKING:
    from harness.models.aliases import ModelServers


@dataclass
class CellResult:
    """What one cell's eval-set returned, and where and how long it ran."""

    args: tuple[str, ...]
    success: bool
    summaries: list[TaskSummary] = field(default_factory=list)
    error: str | None = None
    host: str = ""
    seconds: float = 0.0


def run_cell(
    args: tuple[str, ...], *, display: str = "none", servers: ModelServers | None = None
) -> CellResult:
    """Evaluate one cell (an eval-set into the grid's log directory: re-running it resumes)."""
    started = time.monotonic()
    registry = discover_tasks()
    config, task_args, selected = build_eval_config(
        [*args, f"display={display}"], registry.tasks, all_tasks=sorted(registry.tasks)
    )
    outcome: EvalOutcome = run_eval(config, selected, task_args, servers)
    return CellResult(
        args=args,
        success=outcome.success and all(s.status == "success" for s in outcome.summaries),
        summaries=outcome.summaries,
        host=f"{socket.gethostname()}:{os.getpid()}",
        seconds=time.monotonic() - started,
    )
