import pytest

from harness.cli import HELP, main
from harness.cli.discovery import discover_tasks


def _at_80_columns(monkeypatch):
    """The CLI's consoles as a terminal 80 columns wide (rich reads COLUMNS)."""
    from harness.cli import commands as cli

    monkeypatch.setenv("COLUMNS", "80")
    for name in ("console", "err"):
        monkeypatch.setattr(cli, name, type(getattr(cli, name))(width=80, stderr=name == "err"))


def test_list_is_a_line_per_task_in_80_columns(capsys, monkeypatch):
    # issue 31 item 8: `harness list` printed 412 lines with names broken mid-word
    _at_80_columns(monkeypatch)
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80
    for name in discover_tasks().tasks:
        [row] = [line for line in lines if line.startswith(name + " ")]
    [swe] = [line for line in lines if line.startswith("swe_abs ")]
    assert "judge,mutator,tester" in swe  # declared roles (issue 31 item 2)
    assert any("scripted/<name>" in line for line in lines) and any("bwrap" in x for x in lines)
    assert len(lines) < 40


@pytest.mark.parametrize("task", sorted(discover_tasks().tasks))
def test_list_task_shows_its_parameters_and_declarations(task, capsys, monkeypatch):
    _at_80_columns(monkeypatch)
    assert main(["list", task]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    entry = discover_tasks().tasks[task]
    for name in entry.params:
        assert any(line.split()[:1] == [name] for line in out.splitlines()), name
    for label in ("model roles:", "generation:", "calls the model:", "limit=N:"):
        assert label in out
    if task == "ood_hallucination":
        assert "generation:          temperature=0.0" in out


def test_help_wraps_between_words_at_80_columns(capsys, monkeypatch):
    _at_80_columns(monkeypatch)
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "[ray_address=ADDR]" in out  # an option is never cut
    for command in HELP:
        assert main([command, "--help"]) == 0
        text = capsys.readouterr().out
        assert max(len(line) for line in text.splitlines()) <= 80, command
        words = " ".join(text.split())
        assert all(w in words for w in HELP[command].split()), command  # nothing lost


def test_registry_loads_every_task_package():
    registry = discover_tasks()
    assert registry.errors == {}, registry.errors
    assert registry.loaded().errors == {}


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["bogus"], 2, "unknown command"),
        (["eval", "limit=3"], 2, "task=<name> is required"),
        (["eval", "task=nosuchtask"], 2, "unknown task"),
        (["report", "/nonexistent/logs"], 2, "does not exist"),
        (["report", "logs", "outt=x"], 2, "unknown option"),
        (["serve", "prot=1"], 2, "unknown option 'prot'"),
        (["list", "x=1"], 2, "takes at most one task name"),
        (["list", "swe_ab"], 2, "(did you mean 'swe_abs'?)"),
        (["run-all", "tasks=anchor,nosuch"], 2, "unknown task(s) nosuch"),
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


@pytest.mark.parametrize("command", sorted(HELP))  # every subcommand, new ones too
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_subcommand_answers_help(command, flag, capsys):
    assert main([command, flag]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: harness {command}")


def test_report_help_is_not_read_as_a_log_dir(capsys):
    assert main(["report", "--help"]) == 0
    captured = capsys.readouterr()
    assert "out=DIR" in captured.out and "does not exist" not in captured.out + captured.err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["eval", "task=anchor", "limit=-3"], "limit=-3: must be a positive number"),
        (["eval", "task=anchor", "epochs=0"], "epochs=0: must be a positive number"),
        (["eval", "task=anchor", "max_samples=0"], "max_samples=0: must be a positive number"),
        (["eval", "task=anchor", "max_connections=-5"], "max_connections=-5: must be a positive"),
        (["eval", "task=anchor", "limit=1", "limit=2"], "limit= is given twice"),
        (["eval", "task=anchor", "role.judeg=default"], "use: auditor, judge, target"),
        (["eval", "task=ood_hallucination", "role.judge=default"], "use no model roles"),
        (["report", "logs", "out=a", "out=b"], "out= is given twice"),
    ],
)
def test_bad_input_is_one_line_before_anything_starts(argv, message, capsys, tmp_path):
    assert main([*argv, f"log_dir={tmp_path}"] if argv[0] == "eval" else argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err
    assert not any(tmp_path.iterdir()), "nothing may start before the arguments are checked"


def test_a_long_value_is_cut_in_the_error(capsys):
    assert main(["report", "x" * 100_000]) == 2
    err = capsys.readouterr().err
    assert "… (100000 characters)" in err and len(err) < 1000


@pytest.mark.parametrize(
    "args, code, stream, text",
    [
        (["report", "--help"], 0, "stdout", "usage: harness report"),
        (["eval", "task=anchor", "limit=0"], 2, "stderr", "limit=0: must be a positive number"),
        (["bogus"], 2, "stderr", "unknown command"),
    ],
)
def test_the_console_entry_point_keeps_exit_codes_and_output(args, code, stream, text):
    # `entry` ends the process without the interpreter's teardown; output and codes survive it.
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    result = subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert result.returncode == code
    assert text in getattr(result, stream)


@pytest.mark.parametrize(
    "options, passed",
    [
        # None: inspect's defaults (and its environment variables) stay in charge
        ([], {"ctl_server": None, "log_realtime": None}),
        (["ctl_server=off", "log_realtime=off"], {"ctl_server": False, "log_realtime": False}),
        (["ctl_server=on", "log_realtime=on"], {"ctl_server": True, "log_realtime": True}),
    ],
)
def test_ctl_server_and_log_realtime_reach_inspect(options, passed, tmp_path, monkeypatch):
    import inspect_ai
    from inspect_ai.log import list_eval_logs, read_eval_log

    from tests.conftest import REPO_ROOT

    real_eval_set, seen = inspect_ai.eval_set, {}

    def spy(*args, **kwargs):  # records what the harness passes, then runs the real eval set
        seen.update(kwargs)
        return real_eval_set(*args, **kwargs)

    monkeypatch.setattr(inspect_ai, "eval_set", spy)
    fixture = REPO_ROOT / "tests" / "harness" / "fixtures" / "arith_task.py"
    argv = ["eval", f"task={fixture}@arith", "n=2", "model=scripted/x", "model_arg.reply=one"]
    assert main([*argv, f"log_dir={tmp_path}", "display=none", *options]) == 0
    assert {k: seen.get(k, "not passed") for k in passed} == passed
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info.name)
    assert log.status == "success" and len(log.samples or []) == 2  # the log is complete
    assert log.eval.config.log_realtime is (passed["log_realtime"] is not False)


def test_a_bad_ctl_server_value_names_the_choices(capsys):
    assert main(["eval", "task=anchor", "ctl_server=maybe"]) == 2
    assert "one of on, off" in capsys.readouterr().err


def test_swe_abs_accepts_the_roles_its_readme_documents(tmp_path, capsys):
    from harness.cli.config import build_eval_config

    registry = discover_tasks()
    args = ["task=swe_abs", "role.judge=default", "role.mutator=default", "role.tester=default"]
    config, _, _ = build_eval_config(args, registry.tasks, all_tasks=sorted(registry.tasks))
    assert config.role == {"judge": "default", "mutator": "default", "tester": "default"}
