"""inspect_ai entry point: makes the harness's model providers, sandbox and tasks visible to inspect.

inspect imports this module for every command it runs (`inspect eval`, `inspect view`, ...) and
for every eval the harness runs, so it must stay light: the tasks are registered under their
names with the parameter names read from source (`harness.cli.discovery`), and a task's module, with
its heavy libraries, is imported only when inspect builds that task.

Each task is registered twice: under its bare name (what `harness eval` and earlier logs use) and
as `icml26_harness/<task>`, the inspect_evals convention (`inspect eval icml26_harness/dispat`):
inspect loads the entry point named like the part before the slash, here the one in
pyproject.toml's `[project.entry-points.inspect_ai]`. The namespaced form checks its `-T`
arguments as `harness eval` checks task parameters (same conversion, same messages) and turns an
error raised while building the task into one line instead of a traceback.
"""

from __future__ import annotations

import inspect as pyinspect
import os
import sys
import typing
from collections.abc import Callable
from typing import Any

import click
from inspect_ai import Task, task
from inspect_ai.model import ModelAPI, modelapi

from harness.cli.discovery import TaskEntry, discover_tasks

#: The entry point's name in pyproject.toml: `inspect eval icml26_harness/<task>`.
PACKAGE = "icml26_harness"

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


def checked_task(entry: TaskEntry) -> Callable[..., Task]:
    """Register `entry` as `icml26_harness/<name>`, checking `-T` arguments before building it.

    inspect hands `-T key=value` values over parsed as YAML (`a,b` as a list): each is turned back
    into the text `harness eval` would get and converted with `harness.cli.config.convert_value`
    against the task's annotations (a choice in another case is accepted when unique, otherwise
    the choices are listed with the closest one); None and mappings go through unchanged. Errors are click usage errors, which inspect
    prints as one line (`HARNESS_DEBUG=1` keeps the traceback of a failed build).
    """

    def build(**kwargs: Any) -> Task:
        from harness.cli.config import ConfigError, clip, convert_value, suggest

        params = entry.params
        args: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key == "model" and key not in params:
                continue  # inspect offers every task the model; tasks need not take it
            if key not in params:
                raise click.UsageError(
                    f"unknown key '{clip(key)}'{suggest(key, list(params))}: not a parameter "
                    f"of task {entry.name} (parameters: {', '.join(params) or 'none'})"
                )
            raw = _as_command_line(value)
            if raw is not None:
                try:
                    value = convert_value(raw, params[key].annotation, f"{entry.name}.{key}")
                except ConfigError as exc:
                    raise click.UsageError(str(exc)) from None
            args[key] = value
        build.__signature__ = pyinspect.signature(entry.function)  # type: ignore[attr-defined]
        try:
            return typing.cast(Task, entry.function(**args))
        except Exception as exc:  # noqa: BLE001 - one line, as `harness eval` prints it
            if os.environ.get("HARNESS_DEBUG"):
                raise
            raise click.ClickException(
                f"task {entry.name}: {type(exc).__name__}: {clip(str(exc), 2000)}\n"
                "(set HARNESS_DEBUG=1 for the traceback)"
            ) from exc

    build.__name__ = build.__qualname__ = entry.name
    build.__doc__ = entry.description
    build.__module__ = entry.module
    # A catch-all parameter, so inspect hands unknown `-T` keys over (to be refused by name)
    # instead of dropping them with a warning.
    catch_all = pyinspect.Parameter("unknown_task_args", pyinspect.Parameter.VAR_KEYWORD)
    build.__signature__ = entry.signature.replace(  # type: ignore[attr-defined]
        parameters=[*entry.signature.parameters.values(), catch_all]
    )
    return task(name=f"{PACKAGE}/{entry.name}")(build)


def _as_command_line(value: Any) -> str | None:
    """A `-T` value as `harness eval` would have received it (None: pass it through as is).

    inspect parses `-T` values as YAML and splits `a,b` into a list; `harness eval` gets the text.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value).lower() if isinstance(value, bool) else str(value)
    if isinstance(value, list | tuple) and all(
        isinstance(v, str | int | float) and not isinstance(v, bool) for v in value
    ):
        return ",".join(str(v) for v in value)
    return None


def _register_tasks() -> dict[str, Callable[..., Task]]:
    registered = {}
    for entry in discover_tasks().tasks.values():
        if entry.module in sys.modules:
            # Already imported (the harness CLI building it): its own @task registration stands.
            registered[entry.name] = entry.function
        else:
            registered[entry.name] = lazy_task(entry)
        NAMESPACED[entry.name] = checked_task(entry)
    return registered


#: The `icml26_harness/<task>` registrations, by task name.
NAMESPACED: dict[str, Callable[..., Task]] = {}


globals().update(_register_tasks())
