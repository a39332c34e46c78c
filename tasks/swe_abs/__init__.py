"""swe_abs: SWE-ABS adversarial test-suite strengthening and re-evaluation of candidate patches."""

from tasks.swe_abs.task import RUN_ALL_ARGS, swe_abs

__all__ = ["RUN_ALL_ARGS", "swe_abs"]

# Read from source by the harness (harness/cli/declarations.py); `harness list <task>` shows them.
ROLES = ("judge", "mutator", "tester")  # each defaults to the model under test
