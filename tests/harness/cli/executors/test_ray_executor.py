"""`harness eval ... executor=ray` on a real two-node Ray cluster (head + one worker node).

A 12-cell grid (arith fixture task x 2 scripted models x 6 sizes) gives the same per-sample
scores on Ray as run in turn in this process; `harness report` reads the merged directory; a
worker node killed (SIGKILL) mid-run loses nothing: Ray retries the lost cell elsewhere or a
re-run resumes it, and every cell ends complete with the same scores, each sample once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from harness.cli import main
from tests.conftest import REPO_ROOT
from tests.harness.cli.executors.ray_cluster import RayCluster, start_two_node_cluster

# a two-node Ray cluster per test: heavy integration, run by `make test-full` (and CI)
pytestmark = pytest.mark.full

pytest.importorskip("ray")

FIXTURE = REPO_ROOT / "tests" / "harness" / "fixtures" / "arith_task.py"
RESPONDER = "tests.harness.fixtures.grid_responder:respond_sloppy"
SIZES = (2, 3, 4, 5, 6, 7)
MODELS = ("scripted/a", "scripted/b")
CELLS = len(SIZES) * len(MODELS)
SAMPLES = sum(SIZES) * len(MODELS)


def _grid_args(log_dir: Path | str, *extra: str) -> list[str]:
    return [
        f"task={FIXTURE}@arith",
        "model=" + ",".join(MODELS),
        f"model_arg.responder={RESPONDER}",
        "grid.n=" + ",".join(map(str, SIZES)),
        f"log_dir={log_dir}",
        "display=none",
        *extra,
    ]


def _env(calls: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["HARNESS_TEST_CALLS_FILE"] = str(calls)
    return env


def _driver(cluster: RayCluster, log_dir: Path, calls: Path, *extra: str) -> list[str]:
    grid = _grid_args(log_dir, "executor=ray", f"ray_address={cluster.address}", *extra)
    return [sys.executable, "-m", "harness.cli", "eval", *grid]


def _calls(calls: Path) -> list[tuple[str, str]]:
    if not calls.exists():
        return []
    return [tuple(line.split("\t", 1)) for line in calls.read_text().splitlines() if "\t" in line]


def _scores(log_dir: Path) -> dict[tuple[str, str], tuple[str, dict, list]]:
    """Per cell (model, task args): status, metrics and each sample's score, from the logs."""
    cells: dict[tuple[str, str], tuple[str, dict, list]] = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info.name)
        key = (log.eval.model, json.dumps(log.eval.task_args, sort_keys=True))
        assert key not in cells, f"two logs for cell {key} in {log_dir}"
        metrics = {
            f"{s.name}/{m}": v.value for s in log.results.scores for m, v in s.metrics.items()
        }
        samples = sorted((s.id, s.scores["includes"].value) for s in log.samples or [])
        cells[key] = (log.status, metrics, samples)
    return cells


@pytest.fixture(scope="module")
def sequential(tmp_path_factory):
    """The grid run in turn in this process (executor=local): the reference scores."""
    log_dir = tmp_path_factory.mktemp("sequential") / "logs"
    assert main(["eval", *_grid_args(log_dir, "executor=local")]) == 0
    scores = _scores(log_dir)
    assert len(scores) == CELLS
    assert all(status == "success" for status, _, _ in scores.values())
    # The sizes give different accuracies, so equal scores below mean the same cells ran.
    assert len({json.dumps(m) for _, m, _ in scores.values()}) >= 4
    return scores


@pytest.fixture(scope="module")
def ray_cluster(sequential):
    """Head and worker node (started after the reference run: two cores do not stretch further)."""
    cluster = start_two_node_cluster(_env(Path("/dev/null")))
    try:
        yield cluster
    finally:
        cluster.stop()


def test_ray_grid_scores_equal_sequential_and_report_reads_merged_dir(
    ray_cluster, sequential, tmp_path
):
    log_dir, calls = tmp_path / "logs", tmp_path / "calls.txt"
    run = subprocess.run(
        _driver(ray_cluster, log_dir, calls),
        env=_env(calls),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert f"{CELLS} cells on 2 node(s)" in run.stdout
    assert _scores(log_dir) == sequential
    nodes = {node for node, _ in _calls(calls)}
    assert nodes == {"head", "worker"}, f"cells ran on {nodes}, not on both nodes"
    assert len(_calls(calls)) == SAMPLES  # each sample asked once

    out = tmp_path / "report"
    assert main(["report", str(log_dir), f"out={out}"]) == 0
    rows = (out / "leaderboard.csv").read_text()
    assert (out / "index.html").is_file()
    for model in MODELS:
        assert model in rows


def test_ray_worker_node_killed_mid_run_then_rerun_completes_same_scores(
    ray_cluster, sequential, tmp_path
):
    log_dir, calls = tmp_path / "logs", tmp_path / "calls.txt"
    # Slow samples, so the kill lands while cells are in flight on the worker node.
    driver = subprocess.Popen(
        _driver(ray_cluster, log_dir, calls, "delay_s=0.3", "max_samples=1"),
        env=_env(calls),
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and driver.poll() is None:
        if sum(node == "worker" for node, _ in _calls(calls)) >= 3:
            break
        time.sleep(0.2)
    assert driver.poll() is None, "the grid finished before the worker node could be killed"
    asked_before_kill = len(_calls(calls))
    assert asked_before_kill < SAMPLES
    ray_cluster.nodes["worker"].kill()
    first_out, _ = driver.communicate(timeout=600)

    rerun = subprocess.run(
        _driver(ray_cluster, log_dir, calls, "delay_s=0.3", "max_samples=1"),
        env=_env(calls),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert rerun.returncode == 0, first_out[-2000:] + rerun.stdout[-3000:] + rerun.stderr[-2000:]
    # The same scores; each cell's log holds every sample once (`_scores` refuses duplicates).
    final = {k: v for k, v in _scores(log_dir).items()}
    assert final == {
        (model, json.dumps({**json.loads(args), "delay_s": 0.3}, sort_keys=True)): value
        for (model, args), value in sequential.items()
    }
    asked = _calls(calls)
    # Finished cells and flushed samples were reused: at most the lost cell is asked again.
    assert SAMPLES <= len(asked) <= SAMPLES + max(SIZES), f"{len(asked)} questions asked"
