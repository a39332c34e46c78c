"""`harness plan` / `harness eval ... dry_run=on` and `preset=` on real runs.

The plan's sample and call counts are checked against real scripted runs of the same preset (the
log's model events), the preset and its overrides against what the log records, a two-model
sweep on one preset and its paired leaderboard. How long planning takes, and the probe's
estimated wall time against a measured smoke run of the embedded model, are measured in
bench/bench_plan.py (timed checks fail on a loaded machine); the log route's estimate against a
measured embedded run is test_plan_embedded.py (a ratio, both runs under the same load).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from harness.cli import main
from harness.cli.config import ConfigError, build_eval_config
from harness.cli.discovery import discover_tasks
from harness.cli.plan import make_plans, measure_log, plan_task
from harness.presets import PRESET_NAMES
from reports import build_report

TASKS = sorted(discover_tasks().tasks)
# A reply each task scores (as a miss where it is wrong): the counts do not depend on it.
REPLY = '<think>t</think>{"answer": true, "reasoning": "r", "bbox": [1, 2, 30, 40]}'


def _logs(log_dir: Path) -> list[str]:
    return [i.name for i in list_eval_logs(str(log_dir), recursive=True)]


def _eval(tmp_path: Path, *args: str) -> int:
    return main(["eval", *args, f"log_dir={tmp_path}", "display=none", f"model_arg.reply={REPLY}"])


@pytest.mark.parametrize(
    ("task", "overrides"),
    [("docval", {}), ("omniverifier", {"n": 5})],
)
def test_plan_counts_equal_a_scripted_run(tmp_path, task, overrides):
    args = [f"task={task}", "preset=smoke", "model=scripted/plan"]
    assert _eval(tmp_path, *args, *(f"{k}={v}" for k, v in overrides.items())) == 0
    (log,) = _logs(tmp_path)
    measured = measure_log(log)
    planned = plan_task(discover_tasks().tasks[task], "smoke", overrides, "scripted/plan")
    assert planned.samples == measured.samples
    assert planned.calls == measured.calls  # per role, from the log's model events
    recorded = read_eval_log(log, header_only=True).eval.metadata["harness_preset"]
    assert recorded["name"] == "smoke"
    assert recorded["overrides"] == {k: str(v) for k, v in overrides.items()}
    assert recorded["deviations"] == [
        f"{k}={v} overrides preset smoke's {k}=14" for k, v in overrides.items()
    ]


def test_plan_reads_its_time_from_the_latest_log_of_the_model(tmp_path, capsys):
    assert _eval(tmp_path, "task=omniverifier", "preset=smoke", "model=scripted/t", "n=4") == 0
    wall = measure_log(_logs(tmp_path)[0]).wall_s
    capsys.readouterr()
    plans, _ = make_plans(
        ["task=omniverifier", "preset=smoke", "model=scripted/t", f"log_dir={tmp_path}"]
    )
    (plan,) = plans
    assert "omniverifier smoke log" in plan.time_source
    # 14 samples at the 4-sample run's seconds per sample
    assert plan.est_seconds == pytest.approx(wall / 4 * 14, rel=1e-6)
    other, _ = make_plans(["task=omniverifier", "preset=smoke", "model=scripted/other"])
    assert other[0].est_seconds is None  # no log of that model, no throughput given


def test_two_model_sweep_on_one_preset_into_one_log_folder(tmp_path):
    code = _eval(
        tmp_path, "task=omniverifier", "preset=smoke", "model=scripted/a,scripted/b", "n=3"
    )
    assert code == 0
    headers = [read_eval_log(p, header_only=True) for p in _logs(tmp_path)]
    assert sorted(h.eval.model for h in headers) == ["scripted/a", "scripted/b"]
    for header in headers:
        assert header.eval.metadata["harness_preset"]["name"] == "smoke"
        assert header.eval.metadata["harness_preset_name"] == "smoke"
        assert header.results is not None and header.results.total_samples == 3
    # one leaderboard, the other model paired against the baseline model on the same samples
    result = build_report(tmp_path, tmp_path / "site", baseline="scripted/a")
    (board,) = [b for b in result.leaderboards if b.task == "omniverifier"]
    (other,) = [r for r in board.rows if r.model.endswith("scripted/b")]
    assert other.comparisons, other.notes
    assert max(c.n_paired for c in other.comparisons.values()) == 3  # some metrics cover fewer


def test_preset_over_several_tasks_runs_each_with_its_own_settings(tmp_path):
    # ood's smoke preset sets the harness option limit=24, docval's does not: one eval each
    registry = discover_tasks()
    with pytest.raises(ConfigError, match="limit= differently per task"):
        build_eval_config(
            ["task=omniverifier,ood_hallucination", "preset=smoke"],
            registry.tasks,
            all_tasks=TASKS,
        )
    assert _eval(tmp_path, "task=docval,omniverifier", "preset=smoke", "model=scripted/m") == 0
    headers = [read_eval_log(p, header_only=True) for p in _logs(tmp_path)]
    assert sorted(h.eval.task.split("/")[-1] for h in headers) == ["docval", "omniverifier"]
    assert sorted(h.results.total_samples for h in headers if h.results) == [3, 14]


def test_paper_preset_records_its_deviations_and_an_explicit_override(tmp_path):
    registry = discover_tasks()
    config, task_args, _ = build_eval_config(
        ["task=ood_hallucination", "preset=paper", "max_new_tokens=64", "limit=5"],
        registry.tasks,
        all_tasks=TASKS,
    )
    assert config.temperature == 0.0 and config.limit == 5  # the paper is greedy
    assert task_args["ood_hallucination"]["max_new_tokens"] == 64  # the command line wins
    assert task_args["ood_hallucination"]["dataset"] == "gsm8k"
    record = config.preset_records["ood_hallucination"]
    assert record["overrides"] == {"max_new_tokens": "64"} and record["added"] == {"limit": "5"}
    assert record["protocol_met"] is False
    assert any("fDBD's k is not chosen" in d for d in record["deviations"])
    chosen, _, _ = build_eval_config(
        ["task=ood_hallucination", "preset=paper", "dataset=csqa"], registry.tasks, all_tasks=TASKS
    )
    assert chosen.preset_records["ood_hallucination"]["protocol_met"] is True  # listed "also"


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("task", TASKS)
def test_every_task_and_preset_plans_without_a_model(task, preset, capsys, monkeypatch):
    """Planning loads no model and starts no process (no model server, no sandbox); how long it
    takes is measured in bench/bench_plan.py, not here (timed tests fail on a loaded machine)."""
    import subprocess

    import inspect_ai.model

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"planning started something: {args!r:.200}")

    monkeypatch.setattr(inspect_ai.model, "get_model", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    code = main(["plan", f"task={task}", f"preset={preset}", "model=vllm/x", "tokens_per_s=40"])
    out = capsys.readouterr().out
    assert code == 0 and "plan (no model started)" in out and "estimated wall time" in out


def test_a_sweep_plans_each_model():
    plans, _ = make_plans(["task=docval", "preset=smoke", "model=vllm/a,vllm/b", "tokens_per_s=9"])
    assert [p.model for p in plans] == ["vllm/a", "vllm/b"]
    assert plans[0].calls == plans[1].calls == {"model": 3}


def test_a_grid_plans_each_cell():
    args = ["task=correct", "preset=paper", "grid.method=correct,binary_search", "tokens_per_s=9"]
    plans, _ = make_plans(args)
    assert [p.overrides["method"] for p in plans] == ["correct", "binary_search"]
    # the paper preset runs split=test: the 128 trajectories whose question is on test (issue 29)
    assert plans[0].calls == {"model": 128, "teacher": 128}
    assert plans[1].calls == {"model": pytest.approx(128 * 4.2)}  # ~4.2 calls per trajectory


def test_dry_run_plans_instead_of_running(tmp_path, capsys):
    code = main(
        ["eval", "task=correct", "preset=paper", "model=vllm/x", f"log_dir={tmp_path}/logs"]
        + ["tokens_per_s=40", "dry_run=on"]
    )
    out = capsys.readouterr().out
    assert code == 0 and "plan (no model started)" in out and "correct" in out
    assert not (tmp_path / "logs").exists()  # nothing ran


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["task=docval"], "plan needs preset=smoke or preset=paper"),
        (["task=docval", "preset=paper", "n_dcs=3"], "did you mean 'n_docs'"),
        (["task=nope", "preset=paper"], "unknown task 'nope'"),
        (["task=docval", "preset=paper", "model=a,b", "probe=on"], "measures one model"),
        (["task=docval", "preset=paper", "tokens_per_s=-1"], "must be positive"),
    ],
)
def test_plan_refuses_bad_input_in_one_line(args, message, capsys):
    assert main(["plan", *args]) == 2
    assert message in capsys.readouterr().err


def test_a_sub_second_run_still_has_a_wall_time(tmp_path):
    """The eval's own times are whole seconds: a run inside one second read 0 s there, and the
    planner then found no throughput in its log. The samples' times (microseconds) fill in."""
    from datetime import datetime

    from inspect_ai.log import write_eval_log

    assert _eval(tmp_path / "run", "task=omniverifier", "preset=smoke", "model=scripted/t",
                 "n=4") == 0  # fmt: skip
    log = read_eval_log(_logs(tmp_path / "run")[0])
    assert log.samples and all(s.started_at and s.completed_at for s in log.samples)
    first = min(datetime.fromisoformat(s.started_at) for s in log.samples if s.started_at)
    last = max(datetime.fromisoformat(s.completed_at) for s in log.samples if s.completed_at)
    log.stats.started_at = log.stats.completed_at  # as when the run fits in one second
    write_eval_log(log, str(tmp_path / "fast" / "fast.eval"))
    measured = measure_log(tmp_path / "fast" / "fast.eval")
    assert measured.wall_s > 0
    assert measured.wall_s == pytest.approx((last - first).total_seconds())
    plans, _ = make_plans(["task=omniverifier", "preset=smoke", "model=scripted/t",
                           f"log_dir={tmp_path / 'fast'}"])  # fmt: skip
    assert plans[0].est_seconds == pytest.approx(measured.wall_s / 4 * 14)
