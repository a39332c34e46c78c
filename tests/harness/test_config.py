from typing import Literal

import pytest

from harness.config import ConfigError, EvalConfig, build_eval_config, convert_value
from harness.registry import TaskEntry, task_params


def _task(
    limit_param: int = 3,
    mode: Literal["a", "b"] = "a",
    names: list[str] | None = None,
    ratio: float = 0.5,
    flag: bool = False,
    sandbox: str = "bwrap",
):
    """A task used to test parameter parsing."""


TASKS = {
    "t1": TaskEntry("t1", _task, "", task_params(_task)),
    "t2": TaskEntry("t2", lambda k=1: None, "", task_params(lambda k=1: None)),
}


def build(*args):
    return build_eval_config(list(args), TASKS, all_tasks=sorted(TASKS))


def test_defaults_and_harness_options():
    config, task_args, selected = build(
        "task=t1", "limit=5", "epochs=2", "seed=7", "log_dir=x", "backend=transformers"
    )
    assert config.task == ["t1"] and config.limit == 5 and config.epochs == 2 and config.seed == 7
    assert config.log_dir == "x" and config.backend == "transformers"
    assert task_args == {"t1": {}} and list(selected) == ["t1"]


def test_task_params_are_typed():
    _, task_args, _ = build(
        "task=t1", "limit_param=9", "mode=b", "names=x,y", "ratio=0.25", "flag=true"
    )
    assert task_args["t1"] == {
        "limit_param": 9,
        "mode": "b",
        "names": ["x", "y"],
        "ratio": 0.25,
        "flag": True,
    }


def test_roles_and_all():
    config, _, selected = build("task=all", "role.judge=scripted/j", "role.auditor=default")
    assert config.role == {"judge": "scripted/j", "auditor": "default"}
    assert sorted(selected) == ["t1", "t2"]


def test_sandbox_passes_to_tasks_that_take_it():
    config, task_args, _ = build("task=t1,t2", "sandbox=local")
    assert config.sandbox == "local"
    assert task_args == {"t1": {"sandbox": "local"}, "t2": {}}


@pytest.mark.parametrize(
    "args, message",
    [
        (["task=t1", "limt=3"], "did you mean 'limit'"),
        (["task=t1", "mod=b"], "did you mean 'mode'"),
        (["task=t1", "limit=abc"], "expected int"),
        (["task=t1", "mode=c"], "one of a, b"),
        (["task=t1", "flag=maybe"], "true or false"),
        (["task=t9"], "unknown task 't9'"),
        (["limit=3"], "task=<name> is required"),
        (["task=t1", "sandbox=vm"], "expected bwrap|docker|local"),
        (["task=t1", "oops"], "not key=value"),
        (["task=t2", "mode=a"], "not a harness option and not a parameter"),
    ],
)
def test_bad_overrides_name_the_problem(args, message):
    with pytest.raises(ConfigError, match=message):
        build(*args)


def test_optional_values():
    assert convert_value("none", int | None, "k") is None
    assert convert_value("3", int | None, "k") == 3
    assert EvalConfig().model == "default"


def test_bare_list_and_tuple():
    assert convert_value("a,2", list, "k") == ["a", 2]
    assert convert_value("", list | None, "k") is None and convert_value("", list, "k") == []
    assert convert_value("1,2", tuple[int, ...], "k") == (1, 2)
