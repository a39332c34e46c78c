"""agent_stress task package (see README.md): the ``@task`` and the arguments ``make run``
uses."""

from tasks.agent_stress.task import RUN_ALL_ARGS, TASK_VERSION, agent_stress

__all__ = ["RUN_ALL_ARGS", "TASK_VERSION", "agent_stress"]
