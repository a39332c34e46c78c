"""`correct` task: error localisation in multi-agent trajectories (CORRECT vs Who&When baselines)."""

from tasks.correct.task import RUN_ALL_ARGS, correct

__all__ = ["RUN_ALL_ARGS", "correct"]

# Read from source by the harness (harness/cli/declarations.py); `harness list <task>` shows them.
ROLES = ("teacher",)  # schema distillation (default: the model under test)
GENERATE = {"temperature": 0.0}  # the paper's local detection is greedy
