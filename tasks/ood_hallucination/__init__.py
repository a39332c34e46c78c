"""ood_hallucination task package (see README.md): the ``@task`` and the arguments ``make run``
uses."""

from tasks.ood_hallucination.task import RUN_ALL_ARGS, TASK_VERSION, ood_hallucination

__all__ = ["RUN_ALL_ARGS", "TASK_VERSION", "ood_hallucination"]
