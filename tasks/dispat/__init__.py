"""dispat task package (see README.md): the ``@task`` and the arguments ``make run`` uses."""

from tasks.dispat.task import RUN_ALL_ARGS, TASK_VERSION, dispat

__all__ = ["RUN_ALL_ARGS", "TASK_VERSION", "dispat"]

# Read from source by the harness (harness/cli/declarations.py); `harness list <task>` shows them.
STRATIFY = "label"  # a small limit draws normal and anomalous rows in turn (AUROC needs both)
