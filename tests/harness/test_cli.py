import pytest

from harness.cli import main
from harness.registry import discover_tasks


def test_list_shows_tasks_params_models_and_sandboxes(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in discover_tasks().tasks:
        assert name in out
    assert "default" in out and "bwrap" in out and "scripted/<name>" in out


def test_registry_loads_every_task_package():
    registry = discover_tasks()
    assert registry.errors == {}, registry.errors


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["bogus"], 2, "unknown command"),
        (["eval", "limit=3"], 2, "task=<name> is required"),
        (["eval", "task=nosuchtask"], 2, "unknown task"),
        (["report", "/nonexistent/logs"], 2, "does not exist"),
        (["report", "logs", "outt=x"], 2, "unknown option"),
        (["serve", "prot=1"], 2, "unknown option 'prot'"),
        (["list", "x=1"], 2, "takes no arguments"),
    ],
)
def test_bad_commands_exit_nonzero_with_message(argv, code, message, capsys):
    assert main(argv) == code
    captured = capsys.readouterr()
    assert message in captured.out + captured.err


def test_run_failure_is_one_line_not_a_traceback(tmp_path, capsys):
    from tests.conftest import REPO_ROOT

    fixture = REPO_ROOT / "tests" / "harness" / "fixtures" / "arith_task.py"
    code = main(
        [
            "eval",
            f"task={fixture}@arith",
            "model=scripted/none",
            f"log_dir={tmp_path}",
            "display=none",
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "ScriptError" in err and "Traceback" not in err
