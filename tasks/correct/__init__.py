"""`correct` task: error localisation in multi-agent trajectories (CORRECT vs Who&When baselines)."""

from tasks.correct.task import RUN_ALL_ARGS, correct

__all__ = ["RUN_ALL_ARGS", "correct"]
