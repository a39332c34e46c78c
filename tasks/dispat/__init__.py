"""dispat task package (see README.md): the ``@task`` and the arguments ``make run`` uses."""

from tasks.dispat.task import RUN_ALL_ARGS, TASK_VERSION, dispat

__all__ = ["RUN_ALL_ARGS", "TASK_VERSION", "dispat"]
