"""The grid of `harness eval`: which cells a command describes, checked before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.config import ConfigError
from harness.cli.discovery import load_task_ref
from harness.cli.executors import is_grid_request, plan_grid
from tests.conftest import REPO_ROOT

TASKS_FILE = Path(__file__).with_name("grid_tasks.py")


@pytest.fixture(scope="module")
def tasks():
    return {
        f"{TASKS_FILE}@sized": load_task_ref(f"{TASKS_FILE}@sized"),
        f"{TASKS_FILE}@moded": load_task_ref(f"{TASKS_FILE}@moded"),
    }


def _plan(tasks, *args: str, log_dir: Path):
    return plan_grid(
        [f"task={','.join(tasks)}", *args, f"log_dir={log_dir}"], tasks, all_tasks=list(tasks)
    )


def test_grid_request_is_recognised_by_its_keys():
    assert is_grid_request(["task=a", "executor=local"])
    assert is_grid_request(["task=a", "grid.n=1,2"])
    assert is_grid_request(["task=a", "model=scripted/a,scripted/b"])
    assert is_grid_request(["task=a", "ray_address=auto"])
    assert not is_grid_request(["task=a,b", "model=scripted/a", "n=3"])


def test_cells_are_task_x_model_x_swept_values_a_key_only_for_tasks_that_take_it(tasks, tmp_path):
    plan = _plan(
        tasks,
        "model=scripted/a,scripted/b",
        "grid.n=1,2,3",
        "grid.mode=x,y",
        "grid.epochs=1,2",
        log_dir=tmp_path,
    )
    sized = [c for c in plan.cells if c.task.endswith("@sized")]
    moded = [c for c in plan.cells if c.task.endswith("@moded")]
    # sized takes n (3 values), moded takes mode (2); epochs is a harness option for both.
    assert len(sized) == 2 * 3 * 2 and len(moded) == 2 * 2 * 2
    assert all(not any(a.startswith("mode=") for a in c.args) for c in sized)
    assert all(not any(a.startswith("n=") for a in c.args) for c in moded)
    assert len({c.args for c in plan.cells}) == len(plan.cells)
    assert plan.executor == "local" and plan.log_dir == str(tmp_path.resolve())
    assert sorted(c.swept for c in moded)[0] == (("mode", "x"), ("epochs", "1"))


def test_each_cell_has_its_own_stable_folder_in_the_shared_log_dir(tasks, tmp_path):
    first = _plan(tasks, "model=scripted/a,scripted/b", "grid.n=1,2", log_dir=tmp_path)
    again = _plan(tasks, "model=scripted/a,scripted/b", "grid.n=1,2", log_dir=tmp_path)
    dirs = [next(a for a in c.args if a.startswith("log_dir=")) for c in first.cells]
    assert dirs == [next(a for a in c.args if a.startswith("log_dir=")) for c in again.cells]
    assert len(set(dirs)) == len(dirs)
    assert all(d.startswith(f"log_dir={tmp_path.resolve()}/") for d in dirs)


def test_base_options_and_task_parameters_reach_only_the_cells_that_take_them(tasks, tmp_path):
    plan = _plan(tasks, "model=scripted/a", "n=4", "mode=y", "limit=2", log_dir=tmp_path)
    by_task = {c.task.rsplit("@", 1)[1]: c.args for c in plan.cells}
    assert "n=4" in by_task["sized"] and "n=4" not in by_task["moded"]
    assert "mode=y" in by_task["moded"] and "mode=y" not in by_task["sized"]
    assert all("limit=2" in args for args in by_task.values())


def test_relative_task_file_becomes_absolute_and_url_log_dir_is_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    ref = f"{TASKS_FILE.relative_to(REPO_ROOT)}@sized"
    tasks = {f"{TASKS_FILE}@sized": load_task_ref(f"{TASKS_FILE}@sized")}
    plan = plan_grid(
        [f"task={ref}", "model=scripted/a", "grid.n=1,2", "log_dir=s3://bucket/grid/"],
        tasks,
        all_tasks=[],
    )
    assert plan.log_dir == "s3://bucket/grid"
    assert all(c.task == f"{TASKS_FILE}@sized" for c in plan.cells)
    assert all("log_dir=s3://bucket/grid/sized-scripted_a-" in " ".join(c.args) for c in plan.cells)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["grid.n=1,x"], "n='x'"),  # a bad swept value fails before any cell runs
        (["grid.nn=1,2"], "did you mean 'n'"),
        (["grid.log_dir=a,b"], "log_dir cannot be swept"),
        (["grid.model=a,b"], "give model=m1,m2"),
        (["grid.n=1,1"], "names a value twice"),
        (["grid.n="], "at least one value"),
        (["executor=spark"], "executor='spark'"),
        (["ray_address=auto"], "ray_address= is an option of executor=ray"),
        (["grid.limit=0,1"], "limit=0: must be a positive number"),
    ],
)
def test_bad_grid_is_refused_naming_the_option(tasks, tmp_path, args, message):
    sized = {k: v for k, v in tasks.items() if k.endswith("@sized")}
    with pytest.raises(ConfigError) as caught:
        _plan(sized, "model=scripted/a", *args, log_dir=tmp_path)
    assert message in str(caught.value)


def test_local_grid_runs_every_cell_and_a_failing_cell_does_not_stop_the_others(tmp_path, capsys):
    from inspect_ai.log import list_eval_logs, read_eval_log

    from harness.cli import main

    code = main(
        [
            "eval",
            f"task={TASKS_FILE}@sized",
            "model=scripted/a",
            "model_arg.reply=x",
            "grid.n=-1,1,2",
            f"log_dir={tmp_path}",
            "display=none",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "ValueError: sized: n=-1 must not be negative" in out
    logs = [read_eval_log(i.name) for i in list_eval_logs(str(tmp_path))]
    assert sorted(log.eval.task_args["n"] for log in logs) == [1, 2]
    assert all(log.status == "success" for log in logs)
    assert "sized n=2" in out  # the summary names each cell by its swept values


def test_a_started_attempt_superseded_by_a_finished_retry_is_dropped(tmp_path):
    # A lost node leaves its attempt's log `started`; the retry finishes the same eval (same
    # task id) in a new log. Only that stale attempt goes; an unrelated started log stays.
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log
    from inspect_ai.model import get_model

    from harness.cli.executors import drop_superseded_attempts
    from tests.harness.cli.executors.grid_tasks import sized

    model = get_model("scripted/a", reply="2")
    (done,) = inspect_eval(sized(n=2), model=model, log_dir=str(tmp_path), display="none")
    stale = read_eval_log(done.location)
    stale.status, stale.results = "started", None
    write_eval_log(stale, str(tmp_path / "2000-01-01T00-00-00-00-00_sized_stale.eval"))
    other = read_eval_log(done.location)
    other.status, other.results, other.eval.task_id = "started", None, "another-eval"
    write_eval_log(other, str(tmp_path / "2000-01-01T00-00-00-00-00_sized_other.eval"))

    removed = drop_superseded_attempts(str(tmp_path))
    assert [p.rsplit("/", 1)[-1] for p in removed] == ["2000-01-01T00-00-00-00-00_sized_stale.eval"]
    left = sorted(i.name.rsplit("/", 1)[-1] for i in list_eval_logs(str(tmp_path)))
    assert left == sorted(
        [done.location.rsplit("/", 1)[-1], "2000-01-01T00-00-00-00-00_sized_other.eval"]
    )
