"""The benchmark workload as a task file, for `harness eval task=bench/_prompt_task.py@prompts`."""

from _common import PROMPTS, prompt_task  # bench/ is on PYTHONPATH (see the bench)
from inspect_ai import Task, task


@task
def prompts(n: int = len(PROMPTS)) -> Task:
    """The benchmark's chat prompts, scored by the completion tokens each produced."""
    return prompt_task(PROMPTS[:n])
