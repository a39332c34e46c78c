"""Task discovery: which tasks exist, their parameters and model roles.

A task is `tasks/<name>/task.py` defining `@task def <name>(...)`, or a file named on the command
line (`path/to/file.py@function`). Discovery reads the task's source for what it can know without
running it (the name, the docstring, the parameter names, the model roles it asks for) and imports
the task module only when its function, typed parameters or `RUN_ALL_ARGS` are needed. Listing
the tasks, loading inspect's entry point or running one task therefore never imports the other
tasks and their heavy libraries (torch, transformers, PyOD).

What a task declares for the harness (its model roles, generation defaults, whether it calls the
model under test, how a small `limit` is drawn) is read from literals in its package's
`__init__.py` or its task module (`harness.cli.declarations`). A task that declares no `ROLES`
accepts only `model=`.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect as pyinspect
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from harness.cli.declarations import DeclarationError, TaskDeclarations, read_declarations


class TaskLoadError(ImportError):
    """A task's module cannot be imported or does not define its @task function."""


@dataclass
class TaskParam:
    name: str
    annotation: Any
    default: Any
    required: bool

    @property
    def type_name(self) -> str:
        return type_name(self.annotation)


class TaskEntry:
    """One task: what its source says, and (imported on first use) its function and parameters."""

    def __init__(
        self,
        name: str,
        *,
        module: str,
        function_name: str,
        source: Path | None = None,
        description: str = "",
        roles: tuple[str, ...] | None = None,
        signature: pyinspect.Signature | None = None,
        function: Callable[..., Any] | None = None,
        run_all_args: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.module = module  # dotted module name, or the file path of a task file
        self.function_name = function_name
        self.source = source
        self.description = description
        self._roles = roles
        self._signature = signature
        self._module: types.ModuleType | None = None
        if function is not None:
            self.__dict__["function"] = function
            self.__dict__["run_all_args"] = dict(run_all_args or {})

    @classmethod
    def from_function(
        cls, name: str, function: Callable[..., Any], *, roles: tuple[str, ...] = ()
    ) -> TaskEntry:
        """An entry for a function already in hand (tests, programmatic use)."""
        return cls(
            name,
            module=getattr(function, "__module__", "") or "",
            function_name=getattr(function, "__name__", name),
            description=first_line(function.__doc__ or ""),
            roles=tuple(roles),
            function=function,
        )

    def __repr__(self) -> str:
        return f"TaskEntry({self.name!r}, module={self.module!r}, roles={self.roles!r})"

    @cached_property
    def declarations(self) -> TaskDeclarations:
        """What the task declares for the harness (harness.cli.declarations), read from source."""
        if self.source is None:
            return TaskDeclarations(roles=self._roles or ())
        files = [self.source]
        if _is_package_module(self.module):
            files.insert(0, self.source.parent / "__init__.py")
        try:
            found = read_declarations(*files)
        except DeclarationError as exc:
            raise TaskLoadError(f"task '{self.name}': {exc}") from None
        if self._roles is not None:
            return dataclasses.replace(found, roles=self._roles)
        return found

    @property
    def roles(self) -> tuple[str, ...]:
        """The model roles the task declares (`ROLES`; role.<name>= accepts exactly these)."""
        return self.declarations.roles

    @property
    def loaded(self) -> bool:
        return "function" in self.__dict__

    @property
    def signature(self) -> pyinspect.Signature:
        """The real signature once loaded; before that the one read from the source."""
        if self.loaded or self._signature is None:
            return pyinspect.signature(self.function)
        return self._signature

    @cached_property
    def function(self) -> Callable[..., Any]:
        module = self._import()
        function = getattr(module, self.function_name, None)
        if function is None:
            raise TaskLoadError(f"task '{self.name}': {self.module} has no '{self.function_name}'")
        return typing.cast(Callable[..., Any], function)

    @cached_property
    def params(self) -> dict[str, TaskParam]:
        return task_params(self.function)

    @cached_property
    def run_all_args(self) -> dict[str, Any]:
        self.function  # noqa: B018 - loads the module (and fails like `function` does)
        return dict(getattr(self._module, "RUN_ALL_ARGS", {}) or {})

    def _import(self) -> types.ModuleType:
        if self._module is not None:
            return self._module
        try:
            if self.source is not None and not _is_package_module(self.module):
                self._module = _import_file(self.source)
            else:
                self._module = importlib.import_module(self.module)
        except TaskLoadError:
            raise
        except Exception as exc:  # noqa: BLE001 - any import failure is this task's load error
            raise TaskLoadError(
                f"task '{self.name}' could not be loaded: {type(exc).__name__}: {exc}"
            ) from exc
        return self._module


@dataclass
class TaskRegistry:
    tasks: dict[str, TaskEntry]
    errors: dict[str, str]  # task name → why it cannot be used

    def loaded(self) -> TaskRegistry:
        """Import every task; the ones that fail move to `errors` (one broken task hides none)."""
        tasks: dict[str, TaskEntry] = {}
        errors = dict(self.errors)
        for name, entry in self.tasks.items():
            try:
                entry.params  # noqa: B018 - imports the module and reads the signature
            except TaskLoadError as exc:
                errors[name] = str(exc)
            else:
                tasks[name] = entry
        return TaskRegistry(tasks, errors)


@lru_cache(maxsize=1)
def discover_tasks() -> TaskRegistry:
    """Every `tasks/<name>/task.py`, read from source (nothing is imported but `tasks`)."""
    import tasks as tasks_pkg

    found: dict[str, TaskEntry] = {}
    errors: dict[str, str] = {}
    folders = sorted(
        (Path(p) / name for p in tasks_pkg.__path__ for name in _child_names(Path(p))),
        key=lambda f: f.name,
    )
    for folder in folders:
        name = folder.name
        source = folder / "task.py"
        if name.startswith(("_", ".")) or not (folder / "__init__.py").is_file():
            continue
        if not source.is_file():
            continue  # a package without a task module yet
        module = f"tasks.{name}.task"
        try:
            found[name] = _entry_from_source(name, source, module=module, function_name=name)
        except TaskLoadError as exc:
            errors[name] = str(exc)
    return TaskRegistry(found, errors)


def load_task_ref(ref: str, *, load: bool = True) -> TaskEntry:
    """A task outside the registry: `path/to/file.py@function` (or `file.py` with one @task).

    `load=False` reads the file without importing it (imported when first used).
    """
    file, _, function_name = ref.partition("@")
    path = Path(file).expanduser().resolve()
    if not path.is_file():
        raise FileNotFoundError(f"task file {path} does not exist")
    tree = _parse(path)
    if not function_name:
        candidates = [f.name for f in _task_functions(tree)]
        if len(candidates) != 1:
            raise TaskLoadError(
                f"{path} defines {len(candidates)} @task functions; name one with {file}@<name>"
            )
        function_name = candidates[0]
    entry = _entry_from_source(ref, path, module=str(path), function_name=function_name, tree=tree)
    if load:
        entry.function  # noqa: B018 - imports the file now, so its errors surface here
    return entry


def task_params(function: Callable[..., Any]) -> dict[str, TaskParam]:
    """The parameters of a @task function with their evaluated type hints."""
    target = pyinspect.unwrap(function)
    signature = pyinspect.signature(target)
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # noqa: BLE001 - unresolvable hints: fall back to raw annotations
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


def type_name(annotation: Any) -> str:
    """A short readable name for a type hint (`int | None`, `a|b` for a Literal)."""
    if annotation is Any:
        return "any"
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return "|".join(str(a) for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in typing.get_args(annotation))
    if origin is not None:
        args = ", ".join(type_name(a) for a in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


# ----------------------------------------------------------------------------- reading source
class SourceDefault:
    """A default value the source computes (not a literal); the real one arrives on import."""

    def __init__(self, expression: str) -> None:
        self.expression = expression

    def __repr__(self) -> str:
        return self.expression


def _entry_from_source(
    name: str,
    source: Path,
    *,
    module: str,
    function_name: str,
    tree: ast.Module | None = None,
) -> TaskEntry:
    tree = tree or _parse(source)
    function = next((f for f in _task_functions(tree) if f.name == function_name), None)
    if function is None:
        defined = any(
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == function_name
            for n in tree.body
        )
        why = "is not decorated with @task" if defined else "is not defined"
        raise TaskLoadError(f"{source}: the @task function '{function_name}' {why}")
    description = first_line(ast.get_docstring(function) or ast.get_docstring(tree) or "")
    return TaskEntry(
        name,
        module=module,
        function_name=function_name,
        source=source,
        description=description,
        signature=_source_signature(function),
    )


def _parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, OSError) as exc:
        raise TaskLoadError(
            f"{path} cannot be read as Python: {type(exc).__name__}: {exc}"
        ) from exc


def _task_functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    def is_task(decorator: ast.expr) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Name):
            return target.id == "task"
        return isinstance(target, ast.Attribute) and target.attr == "task"

    return [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(is_task(d) for d in node.decorator_list)
    ]


def _source_signature(function: ast.FunctionDef | ast.AsyncFunctionDef) -> pyinspect.Signature:
    """Names, kinds, annotations (as written) and literal defaults of a function, unimported."""
    P = pyinspect.Parameter
    a = function.args

    def default(node: ast.expr | None) -> Any:
        if node is None:
            return P.empty
        try:
            return ast.literal_eval(node)
        except ValueError:
            return SourceDefault(ast.unparse(node))

    def annotation(arg: ast.arg) -> Any:
        return ast.unparse(arg.annotation) if arg.annotation is not None else P.empty

    positional = a.posonlyargs + a.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults))
    defaults += a.defaults
    params = [
        P(
            arg.arg,
            P.POSITIONAL_ONLY if i < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD,
            default=default(d),
            annotation=annotation(arg),
        )
        for i, (arg, d) in enumerate(zip(positional, defaults, strict=True))
    ]
    if a.vararg is not None:
        params.append(P(a.vararg.arg, P.VAR_POSITIONAL, annotation=annotation(a.vararg)))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        params.append(P(arg.arg, P.KEYWORD_ONLY, default=default(d), annotation=annotation(arg)))
    if a.kwarg is not None:
        params.append(P(a.kwarg.arg, P.VAR_KEYWORD, annotation=annotation(a.kwarg)))
    return pyinspect.Signature(params)


def _child_names(path: Path) -> list[str]:
    return [p.name for p in path.iterdir() if p.is_dir()] if path.is_dir() else []


def _is_package_module(module: str) -> bool:
    return not module.endswith(".py") and "/" not in module and "\\" not in module


def _import_file(path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"_harness_task_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise TaskLoadError(f"cannot import task file {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered like any import, so dataclasses, pickling and inspect's getmodule() find it.
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[spec.name]
        raise
    return module
