"""agent_stress task package (see README.md): the ``@task`` and the arguments ``make run``
uses."""

from tasks.agent_stress.task import RUN_ALL_ARGS, TASK_VERSION, agent_stress

__all__ = ["RUN_ALL_ARGS", "TASK_VERSION", "agent_stress"]

# Read from source by the harness (harness/cli/declarations.py); `harness list <task>` shows them.
ROLES = ("agent",)  # agent=model: role.agent= (default: the model under test)
CALLS_MODEL = {"agent": ("model",)}  # agent=scripted drives the workloads with its own script
STRATIFY = "fault"  # a small limit draws planted-fault and well-behaved workloads in turn
