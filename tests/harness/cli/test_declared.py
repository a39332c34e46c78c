"""A run applies what a task declares: generation defaults, a stratified small limit or a
warning, and no model server for a task that never calls the model under test (issue 31 items
3, 4, 5)."""

from __future__ import annotations

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from harness.cli import main
from harness.cli.config import build_eval_config
from harness.cli.declared import calls_model
from harness.cli.discovery import discover_tasks
from harness.models.aliases import ModelServers
from tests.conftest import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "harness" / "fixtures"
DECLARED = f"task={FIXTURES / 'declared_task.py'}@declared"


def _log(log_dir):
    [info] = list_eval_logs(str(log_dir))
    return read_eval_log(info)


def _run(tmp_path, *args):
    argv = ["eval", *args, "model=scripted/x", "model_arg.reply=ok"]
    return main([*argv, f"log_dir={tmp_path}", "display=none"])


@pytest.mark.parametrize(
    "given, temperature, source",
    [([], 0.0, "task declaration (GENERATE)"), (["temperature=0.7"], 0.7, "command line")],
)
def test_declared_generation_defaults_apply_unless_given(tmp_path, given, temperature, source):
    assert _run(tmp_path, DECLARED, "n_normal=2", *given) == 0
    log = _log(tmp_path)
    [call] = [e for e in (log.samples or [])[0].events if e.event == "model"]
    assert call.config.temperature == temperature  # what the model was asked for
    recorded = log.eval.metadata["harness_declared"]["generate"]["temperature"]
    assert recorded == {"value": temperature, "from": source}


def test_a_small_limit_draws_every_declared_class(tmp_path):
    assert _run(tmp_path, DECLARED, "limit=2") == 0
    log = _log(tmp_path)
    labels = sorted(s.metadata["label"] for s in log.samples or [])
    assert labels == ["anomaly", "normal"]  # the first two rows would both be "normal"
    drawn = log.eval.metadata["harness_declared"]["limit"]
    assert drawn == {"limit": 2, "stratified_by": "label", "values": ["anomaly", "normal"]}


def test_a_limit_below_the_declared_minimum_is_warned_about_once(tmp_path, capsys):
    assert _run(tmp_path, f"task={FIXTURES / 'small_task.py'}@small", "limit=2") == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning:" in line]
    assert len(warnings) == 1 and "limit=2 is below the 20 samples" in warnings[0]


def test_no_model_server_for_a_task_that_does_not_call_the_model(tmp_path, monkeypatch):
    def refuse(self, resolved):
        raise AssertionError(f"a model server was prepared for {resolved.name}")

    monkeypatch.setattr(ModelServers, "prepare", refuse)
    assert _run(tmp_path, DECLARED, "own_model=true", "n_normal=2") == 0
    assert _log(tmp_path).eval.model == "scripted/own"


def test_agent_stress_calls_the_model_only_with_agent_model():
    registry = discover_tasks()
    config, task_args, selected = build_eval_config(
        ["task=agent_stress"], registry.tasks, all_tasks=sorted(registry.tasks)
    )
    assert not calls_model(config, selected, task_args)  # agent=scripted (the default)
    config, task_args, selected = build_eval_config(
        ["task=agent_stress", "agent=model"], registry.tasks, all_tasks=sorted(registry.tasks)
    )
    assert calls_model(config, selected, task_args)


@pytest.mark.parametrize("task", ["dispat", "agent_stress", "omniverifier"])
def test_the_tasks_with_rare_classes_declare_a_stratification_key(task):
    assert discover_tasks().tasks[task].declarations.stratify


def test_undefined_metrics_are_said_once_in_one_line(tmp_path, capsys):
    # issue 31 item 10: each undefined metric warned on its own (16 warnings, each with a path)
    assert _run(tmp_path, f"task={FIXTURES / 'undefined_task.py'}@undefined") == 0
    err = capsys.readouterr().err
    assert "MetricUndefined" not in err and "warnings.warn" not in err, err
    [line] = [x for x in err.splitlines() if x.startswith("undefined:")]
    assert line.startswith("undefined: 2 metrics are NaN"), line


def test_no_server_for_a_role_of_a_task_that_calls_no_model(tmp_path, monkeypatch, capsys):
    # issue 31 item 4: agent_stress's scripted agent (agent=scripted, the default) calls no
    # model; a role.agent= given with it started that role's server all the same
    def refuse(self, resolved):
        raise AssertionError(f"a model server was prepared for {resolved.name}")

    monkeypatch.setattr(ModelServers, "prepare", refuse)
    argv = ["eval", "task=agent_stress", "samples=2", "workloads=file_io", "role.agent=vllm/absent"]
    assert main([*argv, f"log_dir={tmp_path}", "display=none"]) == 0, capsys.readouterr().err
    [warning] = [x for x in capsys.readouterr().err.splitlines() if "role.agent=" in x]
    assert "not used" in warning and "agent_stress" in warning
