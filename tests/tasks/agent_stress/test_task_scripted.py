"""The task end to end with the scripted agent: every planted fault contained, every well-behaved
sample completed, nothing left on the host (bwrap, both jail modes); and the same run on the
`local` sandbox, which has no isolation, counted honestly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval

from tasks.agent_stress import agent_stress
from tasks.agent_stress.leaks import tagged_processes


def _run(tmp_path: Path, **args: Any) -> tuple[Any, dict[str, float]]:
    [log] = eval(agent_stress(**args), model="scripted/agent-stress-main",
                 model_args={"reply": "unused"}, log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success", log.error
    assert log.results is not None
    metrics = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
    return log, metrics


def _explain(log: Any) -> str:
    return "\n".join(f"{s.id}: {next(iter(s.scores.values())).explanation}" for s in log.samples)


def test_every_fault_contained_nothing_leaked_persistent(bwrap_ok: None, tmp_path: Path) -> None:
    log, m = _run(tmp_path, concurrency=5, samples=10)
    assert m["samples"] == 10 and m["ok_rate"] == 1.0, _explain(log)
    assert m["completed"] == 3 and m["contained"] == 7
    for kind in ("fork_bomb", "memory_hog", "runaway_loop", "output_flood", "ignore_sigterm",
                 "network", "killed_mid_command"):  # fmt: skip
        assert m[f"contained_{kind}"] == 1.0, (kind, _explain(log))
    assert m["leaked_total"] == 0, m
    assert m["ops"] == 38 and m["ops_per_s"] > 0 and m["latency_p99_ms"] >= m["latency_p50_ms"]
    for sample in log.samples:  # a contained fault is scored as a failure of its sample
        score = next(iter(sample.scores.values()))
        assert bool(score.metadata["failure"]) == sample.metadata["fault"]
    assert log.eval.metadata["dataset_generated"] is True
    assert log.eval.task_version == "1.0.0"
    # the default split (test) holds every kind, and the log says so
    assert log.eval.metadata["data_split"] == "test"
    assert log.eval.metadata["data_split_unit"].startswith("workload kind")


def test_per_exec_mode(bwrap_ok: None, tmp_path: Path) -> None:
    log, m = _run(tmp_path, mode="per_exec", concurrency=4,
                  workloads="background_jobs,runaway_loop,killed_mid_command,output_flood")  # fmt: skip
    assert m["ok_rate"] == 1.0, _explain(log)
    assert m["leaked_total"] == 0, m


def test_local_sandbox_counted_honestly(tmp_path: Path) -> None:
    """`local` has no isolation: the network fault reaches the host, and background jobs outlive
    the sample — counted as leaks, then killed so the host is left clean."""
    log, m = _run(tmp_path, sandbox="local", concurrency=2, workloads="network,background_jobs")
    assert m["contained_network"] == 0.0, _explain(log)
    assert m["completed"] == 1.0
    assert m["leaked_processes"] >= 2, m  # the nohup loop and the setsid sleep
    run_tag = log.eval.metadata["run_tag"]
    assert tagged_processes(run_tag) == []  # killed after counting


@pytest.mark.parametrize("bad", ["sandbox=nowhere", "mode=sometimes", "concurrency=x"])
def test_cli_validates_choices(bad: str) -> None:
    from harness.cli import main

    assert main(["eval", "task=agent_stress", bad, "model=scripted/x"]) == 2


def test_through_the_cli(bwrap_ok: None, tmp_path: Path) -> None:
    from harness.cli import main

    code = main(["eval", "task=agent_stress", "model=scripted/cli", "model_arg.reply=unused",
                 "workloads=memory_hog,file_io", "concurrency=2", f"log_dir={tmp_path}",
                 "display=none"])  # fmt: skip
    assert code == 0


def test_leaderboard_schema_loads() -> None:
    from reports._schema import load_schema

    schema = load_schema("agent_stress")
    assert schema is not None and schema.task == "agent_stress"
    ids = {m.id for m in schema.metrics}
    assert {"ok_rate", "contained_rate", "ops_per_s", "latency_p99_ms", "leaked_total"} <= ids


_HARNESS = """
import sys
from harness.cli import main
sys.exit(main(["eval", "task=agent_stress", "model=scripted/kill9", "model_arg.reply=unused",
               "concurrency=6", "samples=12", f"log_dir={sys.argv[1]}", "display=none"]))
"""


def test_kill_9_mid_run_then_next_run_leaves_nothing(bwrap_ok: None, tmp_path: Path) -> None:
    """issue 19: `kill -9` of the harness in the middle of a stress run; the next run's start
    (sandbox task_init) removes everything the killed one left."""
    import os
    import subprocess
    import sys
    import tempfile
    import time

    from sandboxes.bwrap import process_table
    from sandboxes.bwrap._disk import mounts_under

    project = Path(__file__).resolve().parents[3]
    harness = subprocess.Popen([sys.executable, "-c", _HARNESS, str(tmp_path / "killed")],
                               cwd=project, env={**os.environ, "PYTHONPATH": str(project)})  # fmt: skip
    try:
        deadline, mine = time.monotonic() + 180, []
        while time.monotonic() < deadline and len(mine) < 4:
            time.sleep(0.2)
            mine = [r for r in Path(tempfile.gettempdir()).glob("bwrap-sample-*")
                    if (r / "owner").exists()
                    and (r / "owner").read_text().startswith(f"{harness.pid}:")]  # fmt: skip
        assert len(mine) >= 4, "control: the stress run did not get going"
        time.sleep(1.0)  # mid-command
        owners = {r: (r / "owner").read_text().split("\n") for r in mine if r.exists()}
    finally:
        harness.kill()  # SIGKILL
        harness.wait()
    _run(tmp_path / "next", concurrency=1, samples=1, workloads="network")
    uids = {int(o[1]) + off for o in owners.values() if o[1].isdigit() for off in (0, 500_000_000)}
    assert not [r for r in owners if r.exists()]
    assert not [m for r in owners for m in mounts_under(r)]
    assert not [g for o in owners.values() for g in o[2:] if g and Path(g).exists()]
    time.sleep(0.5)
    assert not [p for p, (uid, _) in process_table().items() if uid in uids]
    assert tagged_processes("as") == []  # no command of any stress run is left
