"""Issue 20: a 12-cell `harness eval` grid run in turn (executor=local) vs fanned out on Ray (2 nodes).

    .venv/bin/python bench/bench_ray_grid.py [--delay S] [--model scripted|default-hf]

Starts a real two-node Ray cluster on this machine (a head and one worker node, 1 CPU each,
private ports and temp dir, stopped at the end), then runs the same grid twice as `harness eval`
commands, each in a fresh log directory: executor=local, then executor=ray. Prints both wall
times (the commands' whole run: imports, planning, every eval-set), their ratio, the cluster's
start-up time, and whether every cell's per-sample scores are identical.

The default grid is the test fixture's arithmetic task x 2 scripted models x 6 sizes; `--delay`
adds a per-sample wait (a slow model server: cells then wait rather than compute, the case a
cluster helps most). `--model default-hf` runs the grid on the embedded SmolLM2 in-process
(1-4 samples x 1-3 epochs per cell, 8 new tokens). On a shared machine the ratio moves with the load: read it
together with the load averages printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from inspect_ai.log import list_eval_logs, read_eval_log  # noqa: E402

from tests.harness.cli.executors.ray_cluster import start_two_node_cluster  # noqa: E402

FIXTURE = REPO_ROOT / "tests" / "harness" / "fixtures" / "arith_task.py"
RESPONDER = "tests.harness.fixtures.grid_responder:respond_sloppy"


def _grid(log_dir: Path, delay: float, model: str) -> list[str]:
    if model == "default-hf":  # one model: 4 sizes x 3 epoch counts = 12 cells
        models = ["model=default-hf"]
        extra = ["max_tokens=8", "grid.n=1,2,3,4", "grid.epochs=1,2,3"]
    else:
        models = ["model=scripted/a,scripted/b", f"model_arg.responder={RESPONDER}"]
        extra = ["grid.n=2,3,4,5,6,7"]
    if delay:
        extra += [f"delay_s={delay}", "max_samples=1"]
    return [
        f"task={FIXTURE}@arith",
        *models,
        *extra,
        f"log_dir={log_dir}",
        "display=none",
    ]


def _scores(log_dir: Path) -> dict[str, list]:
    cells = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info.name)
        key = json.dumps([log.eval.model, log.eval.task_args, log.eval.config.epochs])
        samples = sorted((s.id, s.epoch, s.scores["includes"].value) for s in log.samples or [])
        cells[key] = [log.status, samples]
    return cells


def _run(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", "eval", *args],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit(
            f"harness eval failed ({out.returncode}):\n{out.stdout[-3000:]}{out.stderr[-2000:]}"
        )
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.0, help="seconds per sample (fixture)")
    parser.add_argument("--model", choices=("scripted", "default-hf"), default="scripted")
    options = parser.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    work = Path(tempfile.mkdtemp(prefix="bench-ray-grid-"))
    print(f"load average at start: {os.getloadavg()}")

    cluster_started = time.perf_counter()
    cluster = start_two_node_cluster(env)
    try:
        cluster_s = time.perf_counter() - cluster_started
        local_s = _run(
            [*_grid(work / "local", options.delay, options.model), "executor=local"], env
        )
        ray_s = _run(
            [
                *_grid(work / "ray", options.delay, options.model),
                "executor=ray",
                f"ray_address={cluster.address}",
            ],
            env,
        )
    finally:
        cluster.stop()
    local, fanned = _scores(work / "local"), _scores(work / "ray")
    same = local == fanned and all(status == "success" for status, _ in local.values())
    print(f"grid: {len(local)} cells, model {options.model}, delay_s={options.delay}")
    print(f"cluster start-up (head + worker node): {cluster_s:.1f} s")
    print(f"executor=local: {local_s:.1f} s")
    print(f"executor=ray (2 nodes x 1 CPU): {ray_s:.1f} s")
    print(f"ratio ray / local: {ray_s / local_s:.2f}")
    print(f"scores identical, every cell complete: {same}")
    print(f"load average at end: {os.getloadavg()}")
    if not same:
        sys.exit("scores differ between executors")


if __name__ == "__main__":
    main()
