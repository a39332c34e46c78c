"""The tasks are native to inspect: `inspect eval icml26_harness/<task>` and `-T` checks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import click
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.util import registry_info

from harness.cli.discovery import discover_tasks
from harness.cli.inspect_entry import NAMESPACED, PACKAGE
from tests.conftest import REPO_ROOT

# pyproject.toml's inspect entry point: the module it names loads harness.cli.inspect_entry.
_ENTRY_POINT_LINE = 'icml26_harness = "harness._inspect_entry"'
INSPECT = str(Path(os.environ.get("VIRTUAL_ENV", REPO_ROOT / ".venv")) / "bin" / "inspect")


def _inspect_eval(spec: str, log_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`inspect eval <spec>` in a fresh process, from outside the checkout (as a user would)."""
    command = [INSPECT, "eval", spec, "--model", "scripted/x", "-M", "reply=x"]
    command += ["--log-dir", str(log_dir), "--display", "plain", *args]
    return subprocess.run(
        command, cwd=log_dir.parent, capture_output=True, text=True, timeout=300, check=False
    )


def _only_log(log_dir: Path):
    [info] = list_eval_logs(str(log_dir))
    return read_eval_log(info)


def test_every_task_is_registered_under_the_package_namespace():
    assert PACKAGE == "icml26_harness"
    assert _ENTRY_POINT_LINE in (REPO_ROOT / "pyproject.toml").read_text()
    for name in discover_tasks().tasks:
        info = registry_info(NAMESPACED[name])
        assert info.type == "task" and info.name == f"icml26_harness/{name}"


def test_inspect_eval_icml26_harness_dispat_runs_on_the_scripted_model(tmp_path):
    log_dir = tmp_path / "logs"
    out = _inspect_eval(
        "icml26_harness/dispat",
        log_dir,
        "-T",
        "method=KNN,IForest",
        "-T",
        "max_test_rows=12",
        "-T",
        "seeds=0",
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    log = _only_log(log_dir)
    assert log.status == "success"
    assert log.eval.task == "icml26_harness/dispat"
    assert log.eval.task_file and log.eval.task_file.endswith("tasks/dispat/task.py")
    # inspect records `-T` values as it parsed them (YAML, `a,b` as a list); the task got the text.
    assert log.eval.task_args["method"] == ["KNN", "IForest"]
    assert log.eval.task_args["max_test_rows"] == 12
    # The metadata `harness eval` records is there for `inspect view` to show.
    meta = log.eval.metadata or {}
    assert {"dataset_source", "dataset_hash", "deviations", "harness_git"} <= set(meta)
    metrics = {k for s in log.results.scores for k in s.metrics}
    assert {"KNN/auroc", "IForest/auroc"} <= metrics
    assert len(log.samples) == 12


def test_inspect_eval_icml26_harness_correct_on_data(tmp_path, data_dir):  # noqa: ARG001 - skips without data
    log_dir = tmp_path / "logs"
    # `FIRST_STEP`: a choice in another case is that choice.
    out = _inspect_eval(
        "icml26_harness/correct", log_dir, "-T", "method=FIRST_STEP", "--limit", "3"
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    log = _only_log(log_dir)
    assert log.status == "success" and len(log.samples) == 3
    # The task was built with the choice in its own case (the log's task_args keep inspect's text).
    assert log.eval.metadata["method"] == "first_step" and log.eval.metadata["dataset_hash"]


def test_a_bad_choice_given_to_inspect_is_one_line_naming_the_choices(tmp_path):
    out = _inspect_eval("icml26_harness/correct", tmp_path / "logs", "-T", "method=CORRECTT")
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "Traceback" not in text
    assert "correct.method='CORRECTT': expected" in text and "did you mean 'correct'" in text


def _build(task: str, **kwargs):
    return NAMESPACED[task](**kwargs)


def test_task_arguments_are_checked_like_harness_eval(monkeypatch):
    monkeypatch.delenv("HARNESS_DEBUG", raising=False)
    with pytest.raises(click.UsageError, match=r"unknown key 'metod' \(did you mean 'method'\?\)"):
        _build("correct", metod="correct")
    with pytest.raises(click.UsageError, match=r"correct\.k='three': expected"):
        _build("correct", k="three")
    # An error raised while building the task is one line with its type, not a traceback.
    with pytest.raises(click.ClickException, match=r"task dispat: ValueError: unknown method"):
        _build("dispat", method="kmeans")
    monkeypatch.setenv("HARNESS_DEBUG", "1")
    with pytest.raises(ValueError, match="unknown method"):
        _build("dispat", method="kmeans")


def test_inspect_list_tasks_shows_every_task():
    out = subprocess.run(
        [INSPECT, "list", "tasks"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    for name in discover_tasks().tasks:
        assert f"tasks/{name}/task.py@{name}" in out.stdout
