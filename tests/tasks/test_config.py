"""The shared task config helper (tasks/_config.py) and every task's use of it."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from dataclasses import dataclass

import pytest

from tasks._config import Deviation, TaskConfig, deviations, task_defaults

# task name -> its config class (module tasks.<name>.config)
CONFIGS = {
    "agent_stress": "StressConfig",
    "correct": "CorrectConfig",
    "dispat": "DispatConfig",
    "docval": "DocvalConfig",
    "omniverifier": "OmniConfig",
    "ood_hallucination": "OodConfig",
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_each_tasks_config_has_exactly_its_task_parameters_in_order(name: str) -> None:
    config = getattr(importlib.import_module(f"tasks.{name}.config"), CONFIGS[name])
    function = getattr(importlib.import_module(f"tasks.{name}.task"), name)
    params = list(inspect.signature(function).parameters)
    assert [f.name for f in dataclasses.fields(config)] == params
    assert issubclass(config, TaskConfig)


@dataclass(frozen=True)
class _Cfg(TaskConfig):
    rows: int | None
    method: str

    @property
    def label(self) -> str:
        return self.method.upper()


def test_from_params_names_what_differs() -> None:
    assert _Cfg.from_params({"rows": 3, "method": "x"}) == _Cfg(3, "x")
    with pytest.raises(
        TypeError, match=r"without a field: \['seed'\].*without a parameter: \['method'\]"
    ):
        _Cfg.from_params({"rows": 3, "seed": 0})


def test_replace_changes_fields_and_refuses_unknown_names() -> None:
    assert _Cfg(3, "x").replace(rows=None) == _Cfg(None, "x")
    with pytest.raises(TypeError, match=r"no field\(s\) \['row'\]"):
        _Cfg(3, "x").replace(row=1)


TABLE = (
    Deviation("always"),
    Deviation("rows={rows} of {label}", when=lambda c: c.rows is not None),
    Deviation("style={style}", when=lambda c, style: style != "paper"),
)


def test_deviations_apply_in_table_order_over_fields_properties_and_context() -> None:
    assert deviations(_Cfg(3, "x"), TABLE, style="short") == [
        "always",
        "rows=3 of X",
        "style=short",
    ]
    assert deviations(_Cfg(None, "x"), TABLE, style="paper") == ["always"]


def test_a_template_naming_nothing_known_is_an_error_naming_it() -> None:
    with pytest.raises(KeyError, match="'seed'.*neither a _Cfg attribute nor in the context"):
        deviations(_Cfg(1, "x"), (Deviation("seed={seed}"),))


def test_task_defaults_reads_a_task_signature() -> None:
    def fn(a: int, b: int = 2, c: str | None = None) -> None: ...

    assert task_defaults(fn) == {"b": 2, "c": None}
