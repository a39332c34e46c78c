"""ood_hallucination task package (see README.md): the ``@task`` and the arguments ``make run``
uses."""

from tasks.ood_hallucination.task import RUN_ALL_ARGS, TASK_VERSION, ood_hallucination

__all__ = ["RUN_ALL_ARGS", "TASK_VERSION", "ood_hallucination"]

# Read from source by the harness (harness/cli/declarations.py); `harness list <task>` shows them.
GENERATE = {"temperature": 0.0}  # the paper: a single sample, greedy decoding
# AUROC needs both correct and hallucinated answers, which only the model's replies decide:
# no stratified draw is possible, so a smaller limit is warned about.
MIN_SAMPLES = 20
