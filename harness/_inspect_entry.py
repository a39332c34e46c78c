"""inspect_ai entry point: makes the harness's model providers, sandbox and tasks visible to inspect.

inspect imports this module for every command it runs (`inspect eval`, `inspect view`, ...) and
for every eval the harness runs, so it must stay light: the tasks are registered under their
names with the parameter names read from source (`harness.discovery`), and a task's module, with
its heavy libraries, is imported only when inspect builds that task.
"""

from __future__ import annotations

import inspect as pyinspect
import sys
import typing
from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.model import ModelAPI, modelapi

from harness.discovery import TaskEntry, discover_tasks

try:  # the sandbox package is optional where bubblewrap is not installed
    import sandboxes.bwrap  # noqa: F401 - registers the `bwrap` sandbox with inspect
except ImportError:  # pragma: no cover
    pass


@modelapi(name="harness")
def harness_provider() -> type[ModelAPI]:
    """`harness/<path>`: the in-process transformers back-end (imported when first used)."""
    from harness.models.local_provider import LocalTransformersAPI

    return LocalTransformersAPI


@modelapi(name="scripted")
def scripted_provider() -> type[ModelAPI]:
    """`scripted/<name>`: scripted offline replies for tests."""
    from harness.models.scripted import ScriptedModelAPI

    return ScriptedModelAPI


def lazy_task(entry: TaskEntry) -> Callable[..., Task]:
    """Register `entry` with inspect as a @task that imports its module when first built.

    Before the import, inspect sees the parameter names and kinds read from the source (all it
    needs to match `-T` arguments); the first call swaps in the real signature, so the defaults
    inspect records in the log are the task's own.
    """

    def build(*args: Any, **kwargs: Any) -> Task:
        real = entry.function
        build.__signature__ = pyinspect.signature(real)  # type: ignore[attr-defined]
        return typing.cast(Task, real(*args, **kwargs))

    build.__name__ = build.__qualname__ = entry.name
    build.__doc__ = entry.description
    # inspect finds the task's file (its log's task_file and run dir) through the module.
    build.__module__ = entry.module
    build.__signature__ = entry.signature  # type: ignore[attr-defined]
    return task(name=entry.name)(build)


def _register_tasks() -> dict[str, Callable[..., Task]]:
    registered = {}
    for entry in discover_tasks().tasks.values():
        if entry.module in sys.modules:
            # Already imported (the harness CLI building it): its own @task registration stands.
            registered[entry.name] = entry.function
        else:
            registered[entry.name] = lazy_task(entry)
    return registered


globals().update(_register_tasks())
