"""Discovery of the project's tasks: every `tasks/<name>/task.py` defining `@task <name>`."""

from __future__ import annotations

import importlib
import inspect as pyinspect
import pkgutil
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any


@dataclass
class TaskParam:
    name: str
    annotation: Any
    default: Any
    required: bool

    @property
    def type_name(self) -> str:
        return _type_name(self.annotation)


@dataclass
class TaskEntry:
    name: str
    function: Callable[..., Any]
    description: str
    params: dict[str, TaskParam]
    run_all_args: dict[str, Any] = field(default_factory=dict)
    module: str = ""


@dataclass
class TaskRegistry:
    tasks: dict[str, TaskEntry]
    errors: dict[str, str]  # task name → why it could not be imported


@lru_cache(maxsize=1)
def discover_tasks() -> TaskRegistry:
    """Import `tasks.<name>.task` for each task package; import errors are kept, not raised."""
    import tasks as tasks_pkg

    found: dict[str, TaskEntry] = {}
    errors: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(tasks_pkg.__path__), key=lambda m: m.name):
        if not info.ispkg or info.name.startswith("_"):
            continue
        module_name = f"tasks.{info.name}.task"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue  # a package without a task module yet
            errors[info.name] = f"{type(exc).__name__}: {exc}"
            continue
        except Exception as exc:  # noqa: BLE001 - one broken task must not hide the others
            errors[info.name] = f"{type(exc).__name__}: {exc}"
            continue
        function = getattr(module, info.name, None)
        if function is None:
            errors[info.name] = f"{module_name} defines no @task function '{info.name}'"
            continue
        found[info.name] = TaskEntry(
            name=info.name,
            function=function,
            description=_first_line(function.__doc__ or module.__doc__ or ""),
            params=task_params(function),
            run_all_args=dict(getattr(module, "RUN_ALL_ARGS", {}) or {}),
            module=module_name,
        )
    return TaskRegistry(found, errors)


def task_params(function: Callable[..., Any]) -> dict[str, TaskParam]:
    target = pyinspect.unwrap(function)
    signature = pyinspect.signature(target)
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # noqa: BLE001 - fall back to raw annotations
        hints = {}
    params = {}
    for name, p in signature.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        annotation = hints.get(name, p.annotation)
        params[name] = TaskParam(
            name=name,
            annotation=Any if annotation is pyinspect.Parameter.empty else annotation,
            default=None if p.default is pyinspect.Parameter.empty else p.default,
            required=p.default is pyinspect.Parameter.empty,
        )
    return params


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _type_name(annotation: Any) -> str:
    if annotation is Any:
        return "any"
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return "|".join(str(a) for a in typing.get_args(annotation))
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " | ".join(_type_name(a) for a in typing.get_args(annotation))
    if origin is not None:
        args = ", ".join(_type_name(a) for a in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def load_task_ref(ref: str) -> TaskEntry:
    """A task outside the registry: `path/to/file.py@function` (or `file.py` with one @task)."""
    import importlib.util
    from pathlib import Path

    file, _, function_name = ref.partition("@")
    path = Path(file).expanduser().resolve()
    if not path.is_file():
        raise FileNotFoundError(f"task file {path} does not exist")
    spec = importlib.util.spec_from_file_location(f"_harness_task_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import task file {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not function_name:
        from inspect_ai._util.registry import is_registry_object, registry_info

        candidates = [
            n
            for n, obj in vars(module).items()
            if is_registry_object(obj) and registry_info(obj).type == "task"
        ]
        if len(candidates) != 1:
            raise ImportError(
                f"{path} defines {len(candidates)} @task functions; name one with {file}@<name>"
            )
        function_name = candidates[0]
    function = getattr(module, function_name, None)
    if function is None:
        raise ImportError(f"{path} has no task '{function_name}'")
    return TaskEntry(
        name=ref,
        function=function,
        description=_first_line(function.__doc__ or ""),
        params=task_params(function),
        run_all_args=dict(getattr(module, "RUN_ALL_ARGS", {}) or {}),
        module=str(path),
    )
