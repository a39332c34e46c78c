"""The task × model × parameter grid of `harness eval`, expanded into one argument list per cell.

`task=a,b` names the tasks, `model=m1,m2` the models, and `grid.<key>=v1,v2,...` sweeps any other
option or task parameter. A cell is the plain `key=value` list of one `harness eval` run, so
that a worker on another machine rebuilds (and re-checks) its configuration from it. A swept
key is applied only to the tasks that take it, so a task never runs twice with the same
arguments.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from harness.cli.config import (
    CONFIG_FIELDS,
    ConfigError,
    EvalConfig,
    build_eval_config,
    clip,
    convert_value,
    parse_overrides,
)
from harness.cli.discovery import TaskEntry

Executor = Literal["local", "ray"]
# Options of the grid run itself; never part of a cell.
EXECUTOR_OPTIONS = ("executor", "ray_address")
GRID_PREFIX = "grid."
# Options that are one value for the whole grid: every cell writes into the same log directory.
_NOT_SWEPT = ("task", "log_dir", "display", "executor", "ray_address")


@dataclass(frozen=True)
class GridCell:
    """One evaluation of the grid: `harness eval` arguments for one task and one model."""

    task: str
    model: str
    swept: tuple[tuple[str, str], ...]
    args: tuple[str, ...]

    @property
    def task_name(self) -> str:
        """The task's name (a file task `path/file.py@fn` is `fn`)."""
        file, _, function = self.task.partition("@")
        return (function or Path(file).stem) if ".py" in file else self.task

    @property
    def label(self) -> str:
        return " ".join([self.task_name, self.model, *(f"{k}={v}" for k, v in self.swept)])


@dataclass
class GridPlan:
    """What `harness eval` was asked to fan out."""

    executor: Executor
    ray_address: str | None
    log_dir: str
    display: str = "rich"
    cells: list[GridCell] = field(default_factory=list)


def is_grid_request(args: list[str]) -> bool:
    """True when the arguments ask for an executor, a swept key or several models."""
    for arg in args:
        key, _, value = arg.partition("=")
        key = key.strip()
        if key in EXECUTOR_OPTIONS or key.startswith(GRID_PREFIX):
            return True
        if key == "model" and "," in value:
            return True
    return False


def plan_grid(args: list[str], tasks: dict[str, TaskEntry], *, all_tasks: list[str]) -> GridPlan:
    """Check every cell's arguments (as `harness eval` would) and list the cells.

    Raises `ConfigError` naming the option for anything `harness eval` would refuse, in any cell.
    """
    pairs = parse_overrides(args)
    executor: Executor = "local"
    ray_address: str | None = None
    models = ["default"]
    sweeps: dict[str, list[str]] = {}
    base: list[tuple[str, str]] = []
    for key, value in pairs:
        if key == "executor":
            executor = convert_value(value, Executor, "executor")
        elif key == "ray_address":
            ray_address = value.strip() or None
        elif key == "model":
            models = _split(key, value)
        elif key.startswith(GRID_PREFIX):
            name = key[len(GRID_PREFIX) :]
            if not name:
                raise ConfigError("grid.<key>=v1,v2 needs a key, e.g. grid.seed=0,1,2")
            if name in _NOT_SWEPT or name == "model":
                hint = "give model=m1,m2" if name == "model" else "it is one value for the grid"
                raise ConfigError(f"grid.{clip(name)}=: {name} cannot be swept ({hint})")
            sweeps[name] = _split(key, value)
        else:
            base.append((key, _absolute_task_refs(value) if key == "task" else value))
    if ray_address is not None and executor != "ray":
        raise ConfigError("ray_address= is an option of executor=ray")
    # One check of the whole grid with each swept key's first value: unknown keys, roles, types.
    first = [f"{k}={v[0]}" for k, v in sweeps.items()]
    config, _, selected = build_eval_config(
        [f"{k}={v}" for k, v in base] + [f"model={models[0]}", *first], tasks, all_tasks=all_tasks
    )
    log_dir = _shared_log_dir(config)
    plan = GridPlan(executor, ray_address, log_dir, display=config.display)
    for name in config.task:
        entry = selected[name]
        kept = [(k, v) for k, v in base if k not in _NOT_SWEPT and _takes(entry, k)]
        swept_keys = [k for k in sweeps if _takes(entry, k)]
        for model in models:
            for values in itertools.product(*(sweeps[k] for k in swept_keys)):
                swept = tuple(zip(swept_keys, values, strict=True))
                cell_args = (
                    f"task={name}",
                    f"model={model}",
                    *(f"{k}={v}" for k, v in kept),
                    *(f"{k}={v}" for k, v in swept),
                )
                cell_args += (f"log_dir={log_dir}/{_cell_dir(cell_args)}",)
                # Each cell is checked here, before anything runs (a bad swept value fails now).
                build_eval_config(list(cell_args), selected, all_tasks=all_tasks)
                plan.cells.append(GridCell(name, model, swept, cell_args))
    return plan


def _cell_dir(cell_args: tuple[str, ...]) -> str:
    """The cell's own folder in the grid's log directory, the same on every run of the grid.

    A folder per cell because an eval-set reads every log in its directory: a log that another
    cell is still writing is an unreadable zip, and the eval-set bookkeeping files
    (`.eval-set-id`, `eval-set.json`) are one per directory.
    """
    digest = hashlib.sha256("\0".join(cell_args).encode()).hexdigest()[:10]
    values = dict(arg.split("=", 1) for arg in cell_args)
    file, _, function = values["task"].partition("@")
    task = (function or Path(file).stem) if ".py" in file else values["task"]
    readable = re.sub(r"[^A-Za-z0-9._=-]+", "_", f"{task}-{values['model']}")[:60]
    return f"{readable}-{digest}"


def _split(key: str, value: str) -> list[str]:
    values = [v.strip() for v in value.split(",") if v.strip()]
    if not values:
        raise ConfigError(f"{clip(key)}= needs at least one value")
    if len(set(values)) != len(values):
        raise ConfigError(f"{clip(key)}={clip(value)!r} names a value twice")
    return values


def _takes(entry: TaskEntry, key: str) -> bool:
    """Whether `key=` applies to this task: a harness option, or one of its parameters/roles."""
    if key in CONFIG_FIELDS or key.startswith("model_arg."):
        return True
    if key.startswith("role."):
        return key[len("role.") :] in entry.roles
    return key in entry.params


def _absolute_task_refs(value: str) -> str:
    """`path/file.py@fn` task references made absolute, so a worker elsewhere in cwd finds them."""
    refs = []
    for ref in value.split(","):
        file, at, function = ref.strip().partition("@")
        refs.append(
            str(Path(file).expanduser().resolve()) + at + function if ".py" in file else ref
        )
    return ",".join(refs)


def _shared_log_dir(config: EvalConfig) -> str:
    """The grid's one log directory: an fsspec URL as given, a local path made absolute."""
    if "://" in config.log_dir:
        return config.log_dir.rstrip("/")
    return str(Path(config.log_dir).expanduser().resolve())
