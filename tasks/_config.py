"""A task's parameters as one frozen config, and its deviations from the paper as data.

The inspect_evals pattern, shared by every task: the `@task` function's parameters (the CLI
checks `key=value` arguments against its signature, so the signature owns the names and the
defaults) are turned into the task's frozen config once, at the top of the body:

    @task
    def dispat(method: str = "all", ...) -> Task:
        cfg = DispatConfig.from_params(locals())
        ...

and the ways a run departs from the paper are a table beside the config, not `if`s in the body:

    DEVIATIONS = (
        Deviation("max_test_rows={max_test_rows}: stratified subsample of each split",
                  when=lambda c: c.max_test_rows is not None),
        ...
    )
    metadata=task_metadata(..., deviations=deviations(cfg, DEVIATIONS))

A deviation's text is a `str.format` template over the config's attributes (fields and
properties) and any `context` the task passes (values known only once data is loaded); `when`
is a predicate on the config (and the same context), absent for one that always applies.

Presets (`smoke`, `paper`: `tasks/<name>/presets.yaml`) and splits (`dev`, `test`) are data in
the task folder too. They arrive as parameter values (the CLI applies a preset's settings as
`key=value` arguments), so the config built from the parameters already holds them and logs
them; code that builds a config outside the CLI applies a preset's or split's settings with
`TaskConfig.replace` after `from_params`. Either way the config stays the one place a run's
settings are read from, and a deviation a preset implies is a row of the task's table.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["Deviation", "TaskConfig", "deviations", "task_defaults"]

C = TypeVar("C", bound="TaskConfig")


@dataclass(frozen=True)
class TaskConfig:
    """Base of every task's frozen config: one field per `@task` parameter, same name."""

    @classmethod
    def from_params(cls: type[C], params: Mapping[str, Any]) -> C:
        """The config from the `@task` function's parameters (`locals()` on its first line).

        The config's fields must be exactly the parameters: a parameter the config lacks (or a
        field no parameter fills) is a `TypeError` naming them, so the two cannot drift apart.
        """
        names = {f.name for f in dataclasses.fields(cls) if f.init}
        missing, extra = sorted(set(params) - names), sorted(names - set(params))
        if missing or extra:
            raise TypeError(
                f"{cls.__name__}: the task's parameters and the config's fields differ "
                f"(parameters without a field: {missing or 'none'}; fields without a "
                f"parameter: {extra or 'none'})"
            )
        return cls(**params)

    def replace(self: C, **overrides: Any) -> C:
        """A copy with some fields changed (a preset's or a split's overrides); an unknown
        name is a `TypeError` naming it."""
        unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"{type(self).__name__}: no field(s) {unknown}")
        return dataclasses.replace(self, **overrides)


def task_defaults(task_function: Callable[..., Any]) -> dict[str, Any]:
    """A `@task` function's parameters at their defaults (for tools that build the task's
    config outside inspect, such as a measurement grid, and change a few knobs)."""
    params = inspect.signature(task_function).parameters.values()
    return {p.name: p.default for p in params if p.default is not p.empty}


def _always(*_: Any) -> bool:
    return True


@dataclass(frozen=True)
class Deviation:
    """One way a run departs from the paper, recorded in the log's metadata when it applies.

    `text`: a `str.format` template over the config's attributes and the task's context.
    `when`: predicate on the config, or on the config and the context (keyword arguments) when
    it takes more than one parameter; the default: always.
    """

    text: str
    when: Callable[..., bool] = _always

    def applies(self, config: Any, context: Mapping[str, Any]) -> bool:
        takes_context = len(inspect.signature(self.when).parameters) > 1
        return bool(self.when(config, **context) if takes_context else self.when(config))

    def render(self, config: Any, context: Mapping[str, Any]) -> str:
        return self.text.format_map(_Names(config, context))


class _Names(dict[str, Any]):
    """`format_map` lookup: the context first, then the config's attributes."""

    def __init__(self, config: Any, context: Mapping[str, Any]) -> None:
        super().__init__(context)
        self._config = config

    def __missing__(self, key: str) -> Any:
        try:
            return getattr(self._config, key)
        except AttributeError:
            raise KeyError(
                f"deviation text names {key!r}: neither a {type(self._config).__name__} "
                f"attribute nor in the context ({', '.join(sorted(self)) or 'empty'})"
            ) from None


def deviations(config: Any, table: Iterable[Deviation], **context: Any) -> list[str]:
    """The texts of the deviations in `table` that apply to `config`, in table order."""
    return [d.render(config, context) for d in table if d.applies(config, context)]
