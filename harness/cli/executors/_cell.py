"""Running one grid cell: the same configuration check and eval-set as `harness eval`."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.cli.config import build_eval_config
from harness.cli.discovery import discover_tasks
from harness.cli.eval import EvalOutcome, TaskSummary, run_eval

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
    success = outcome.success and all(s.status == "success" for s in outcome.summaries)
    if success:
        drop_superseded_attempts(config.log_dir)
    return CellResult(
        args=args,
        success=success,
        summaries=outcome.summaries,
        host=f"{socket.gethostname()}:{os.getpid()}",
        seconds=time.monotonic() - started,
    )


def drop_superseded_attempts(log_dir: str) -> list[str]:
    """Remove the logs of attempts that a later attempt of the same eval finished; return them.

    A cell whose node was lost leaves its attempt's log in state `started`. The retry (Ray's, or
    a re-run) resumes from it in a new log with the same task id and reuses its samples; inspect's
    eval-set keeps the stale log, and every reader would then see the cell twice. Only `started`
    logs whose task id has a `success` log in the same folder are removed.
    """
    from fsspec.core import url_to_fs
    from inspect_ai.log import list_eval_logs, read_eval_log

    headers = [
        (info.name, read_eval_log(info.name, header_only=True))
        for info in list_eval_logs(log_dir, recursive=False)
    ]
    finished = {log.eval.task_id for _, log in headers if log.status == "success"}
    removed = [
        name for name, log in headers if log.status == "started" and log.eval.task_id in finished
    ]
    for name in removed:
        fs, path = url_to_fs(name)
        fs.rm(path)
    return removed
