"""`anchor` task: auditing CLI agents (auditor ↔ sandboxed target ↔ judges)."""

from tasks.anchor.task import RUN_ALL_ARGS, anchor

__all__ = ["RUN_ALL_ARGS", "anchor"]

# Read from source by the harness (harness/cli/declarations.py); `harness list <task>` shows them.
ROLES = ("auditor", "judge", "target")
