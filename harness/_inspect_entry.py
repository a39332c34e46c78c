"""inspect_ai entry point: makes the harness's providers, sandbox and tasks visible to inspect."""

# ruff: noqa: F401
from harness.models import local_provider, scripted

try:  # the sandbox package is optional where bubblewrap is not installed
    import sandboxes.bwrap
except ImportError:  # pragma: no cover
    pass

from harness.registry import discover_tasks as _discover

for _entry in _discover().tasks.values():
    globals()[_entry.name] = _entry.function
