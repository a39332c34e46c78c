from typing import Literal

import pytest

from harness.cli.config import ConfigError, EvalConfig, build_eval_config, convert_value
from harness.cli.discovery import TaskEntry


def _task(
    limit_param: int = 3,
    mode: Literal["a", "b"] = "a",
    names: list[str] | None = None,
    ratio: float = 0.5,
    flag: bool = False,
    sandbox: str = "bwrap",
):
    """A task used to test parameter parsing."""


def _judged(k: int = 1):
    """A task with model roles."""


TASKS = {
    "t1": TaskEntry.from_function("t1", _task),
    "t2": TaskEntry.from_function("t2", lambda k=1: None),
    "t3": TaskEntry.from_function("t3", _judged, roles=("judge", "teacher")),
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
    config, _, selected = build("task=all", "role.judge=scripted/j", "role.teacher=default")
    assert config.role == {"judge": "scripted/j", "teacher": "default"}
    assert sorted(selected) == ["t1", "t2", "t3"]


def test_a_role_no_chosen_task_uses_is_refused_naming_the_roles_they_use():
    with pytest.raises(
        ConfigError, match=r"role.judeg=.*did you mean 'judge'.*use: judge, teacher"
    ):
        build("task=t1,t3", "role.judeg=scripted/j")
    with pytest.raises(ConfigError, match=r"role.judge=: task\(s\) t1, t2 use no model roles"):
        build("task=t1,t2", "role.judge=scripted/j")


@pytest.mark.parametrize(
    "option", ["limit", "epochs", "max_samples", "max_connections", "max_tokens"]
)
@pytest.mark.parametrize("value", ["0", "-3"])
def test_non_positive_counts_are_refused_naming_the_option(option, value):
    with pytest.raises(ConfigError, match=rf"^{option}={value}: must be a positive number"):
        build("task=t1", f"{option}={value}")


@pytest.mark.parametrize("option", ["seed", "temperature", "retry_attempts", "fail_on_error"])
def test_negative_values_are_refused_naming_the_option(option):
    with pytest.raises(ConfigError, match=rf"^{option}=-1(\.0)?: must be not negative"):
        build("task=t1", f"{option}=-1")
    build("task=t1", f"{option}=0")  # zero is allowed


def test_a_repeated_key_is_refused():
    with pytest.raises(ConfigError, match=r"limit= is given twice \('1' and '2'\)"):
        build("task=t1", "limit=1", "limit=2")
    with pytest.raises(ConfigError, match="given twice"):
        build("task=t3", "role.judge=a", "role.judge=b")


def test_errors_cut_long_values():
    long = "x" * 100_000
    for args in (["task=t1", f"limit={long}"], ["task=t1", f"mode={long}"], [f"task={long}"]):
        with pytest.raises(ConfigError) as caught:
            build(*args)
        message = str(caught.value)
        assert len(message) < 1000 and "… (100000 characters)" in message


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


def _own_generation(max_tokens: int = 1024, temperature: float = 1.0, k: int = 1):
    """A task with its own parameters named like harness options (swe_abs, omniverifier)."""


def test_a_harness_option_a_task_also_takes_reaches_the_task():
    # issue 31 item 1: max_tokens=160 must cap the task's own calls, not only inspect's default
    tasks = {"own": TaskEntry.from_function("own", _own_generation)}
    config, task_args, _ = build_eval_config(
        ["task=own", "max_tokens=160", "temperature=0"], tasks, all_tasks=["own"]
    )
    assert config.max_tokens == 160 and config.temperature == 0.0
    assert task_args["own"] == {"max_tokens": 160, "temperature": 0.0}
    _, untouched, _ = build_eval_config(["task=own", "k=2"], tasks, all_tasks=["own"])
    assert untouched["own"] == {"k": 2}  # not given: the task's own default stays


@pytest.mark.parametrize("task", ["swe_abs", "omniverifier"])
def test_max_tokens_reaches_the_tasks_that_take_it(task):
    from harness.cli.discovery import discover_tasks

    registry = discover_tasks()
    _, task_args, _ = build_eval_config(
        [f"task={task}", "max_tokens=160"], registry.tasks, all_tasks=sorted(registry.tasks)
    )
    assert task_args[task]["max_tokens"] == 160
