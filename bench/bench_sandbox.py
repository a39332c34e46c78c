"""P6: the bwrap sandbox — command round trip, what seccomp adds to start-up, and throughput / p99
under concurrent samples.

    .venv/bin/python bench/bench_sandbox.py [N] [--rounds R] [--only roundtrip|seccomp|concurrency]

roundtrip: `exec(["sh", "-c", "echo hi"])` through `BwrapSandboxEnvironment` in mode="persistent"
(one jail per sample, one round trip to its exec server per command) and mode="per_exec" (a fresh
jail per command), `read_file` of a small file in persistent mode, and the same command through a
plain `subprocess.run` and `asyncio.create_subprocess_exec`, N times each per round, interleaved
so machine load hits all alike; per round (R rounds, default 3) the medians, the ratios against
the plain `subprocess.run` and the load average; then the median ratio over the rounds, and the
median of `sample_init` + `sample_cleanup` per mode. Goals: <= 10 ms per sandboxed command, and
persistent <= 2x the plain subprocess (issue 26.5).

seccomp: the same, with `BwrapConfig(seccomp=True)` against `seccomp=False`, interleaved: what the
filter adds to a per_exec command (one bwrap start each), to a persistent command, and to a
persistent sample's start-up.

concurrency: C samples at once (C = 1, 4, 16, 64), each running K commands back to back through
the default exec path (inspect's subprocess gate included, as in an eval; docker_api: its own exec
gate); throughput (commands/s) and p99 latency per bwrap mode and, where a Docker engine is
reachable, for the `docker_api` sandbox (one container per sample), printed as ratios to C = 1.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment, bwrap_problem

CMD = ["sh", "-c", "echo hi"]
GOAL_MS = 10.0
MODES = ("persistent", "per_exec")
LEVELS = (1, 4, 16, 64)


async def _plain() -> None:
    proc = await asyncio.create_subprocess_exec(
        *CMD, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    assert out == b"hi\n"


async def _plain_run() -> None:
    """The reference of issue 26.5: a plain blocking `subprocess.run` of the same command (nothing
    else runs on the loop while it blocks: the arms are measured one after another)."""
    done = subprocess.run(CMD, capture_output=True, check=True)
    assert done.stdout == b"hi\n"


async def _timed(step: Callable[[], Awaitable[object]]) -> float:
    t = time.perf_counter()
    await step()
    return (time.perf_counter() - t) * 1000


def _pct(xs: list[float], q: float) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


async def _start(config: BwrapConfig) -> BwrapSandboxEnvironment:
    envs = await BwrapSandboxEnvironment.sample_init("bench", config, {})
    return envs["default"].as_type(BwrapSandboxEnvironment)


async def _stop(box: BwrapSandboxEnvironment) -> None:
    await BwrapSandboxEnvironment.sample_cleanup("bench", box.config, {"default": box}, False)


async def _echo(box: Any) -> None:
    result = await box.exec(CMD)
    assert result.stdout == "hi\n", result


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


async def roundtrip(n: int, rounds: int = 3) -> None:
    configs = {mode: BwrapConfig(mode=mode) for mode in MODES}  # type: ignore[arg-type]
    boxes = {mode: await _start(configs[mode]) for mode in MODES}
    await boxes["persistent"].write_file("small.txt", "hi\n")

    async def read() -> None:
        assert await boxes["persistent"].read_file("small.txt") == "hi\n"

    arms: dict[str, Callable[[], Awaitable[None]]] = {
        "plain subprocess.run": _plain_run,
        "plain asyncio": _plain,
        **{f"bwrap {mode}": (lambda mode=mode: _echo(boxes[mode])) for mode in MODES},
        "persistent read_file": read,
    }
    ratios: dict[str, list[float]] = {name: [] for name in arms}
    print(f"== roundtrip: {rounds} rounds of N={n} per arm, interleaved; "
          f"cgroups={'yes' if boxes['per_exec'].cgroup else 'no'}")  # fmt: skip
    try:
        for _ in range(5):  # warm up every path
            for step in arms.values():
                await step()
        for r in range(rounds):
            times: dict[str, list[float]] = {name: [] for name in arms}
            load_before = _load()
            for _ in range(n):
                for name, step in arms.items():
                    times[name].append(await _timed(step))
            plain = statistics.median(times["plain subprocess.run"])
            print(f" round {r + 1}: load average {load_before} -> {_load()}")
            for name, xs in times.items():
                med = statistics.median(xs)
                ratios[name].append(med / plain)
                print(f"  {name:<22} median {med:7.2f} ms  (p90 {_pct(xs, 0.9):7.2f})  "
                      f"x{med / plain:5.2f} plain subprocess.run")  # fmt: skip
    finally:
        for box in boxes.values():
            await _stop(box)
    print(" over the rounds (median of the per-round ratios to plain subprocess.run):")
    for name, xs in ratios.items():
        verdict = ""
        if name == "bwrap persistent":
            verdict = f"  goal <= 2x: {'MET' if statistics.median(xs) <= 2 else 'NOT MET'}"
        print(f"  {name:<22} x{statistics.median(xs):5.2f}  "
              f"(rounds: {', '.join(f'{x:.2f}' for x in xs)}){verdict}")  # fmt: skip
    init: dict[str, list[float]] = {mode: [] for mode in MODES}
    cleanup: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(max(10, n // 5)):
        for mode in MODES:
            t = time.perf_counter()
            box = await _start(configs[mode])
            init[mode].append((time.perf_counter() - t) * 1000)
            cleanup[mode].append(await _timed(lambda box=box: _stop(box)))
    for mode in MODES:
        print(f"  sample {mode:<11} sample_init median {statistics.median(init[mode]):7.2f} ms, "
              f"sample_cleanup median {statistics.median(cleanup[mode]):7.2f} ms")  # fmt: skip
    print(f" load average at the end: {_load()}")


async def seccomp(n: int) -> None:
    """Filter on vs off, interleaved: exec latency per mode and persistent start-up."""
    variants = {(mode, on): BwrapConfig(mode=mode, seccomp=on) for mode in MODES for on in (1, 0)}  # type: ignore[arg-type]
    boxes = {key: await _start(cfg) for key, cfg in variants.items()}
    execs: dict[tuple[str, int], list[float]] = {key: [] for key in variants}
    try:
        for _ in range(3):
            for box in boxes.values():
                await _echo(box)
        for _ in range(n):
            for key, box in boxes.items():
                execs[key].append(await _timed(lambda box=box: _echo(box)))
    finally:
        for box in boxes.values():
            await _stop(box)
    starts: dict[int, list[float]] = {1: [], 0: []}
    for _ in range(max(10, n // 5)):
        for on in (1, 0):
            t = time.perf_counter()
            box = await _start(variants[("persistent", on)])
            await _echo(box)  # start-up until the first command has run
            starts[on].append((time.perf_counter() - t) * 1000)
            await _stop(box)
    print(f"== seccomp: N={n} commands per variant, interleaved (median ms; ratio on/off)")
    for mode in MODES:
        on, off = (statistics.median(execs[(mode, v)]) for v in (1, 0))
        print(f"  exec {mode:<11} seccomp {on:7.2f}  without {off:7.2f}  ratio {on / off:5.3f}  "
              f"added {on - off:+6.2f} ms")  # fmt: skip
    on, off = statistics.median(starts[1]), statistics.median(starts[0])
    print(f"  persistent start-up + first command: seccomp {on:7.2f}  without {off:7.2f}  "
          f"ratio {on / off:5.3f}  added {on - off:+6.2f} ms")  # fmt: skip


async def _start_docker(config: Any) -> Any:
    from sandboxes.docker import DockerSandboxEnvironment

    envs = await DockerSandboxEnvironment.sample_init("bench", config, {})
    return envs["default"]


async def _stop_docker(box: Any) -> None:
    from sandboxes.docker import DockerSandboxEnvironment

    await DockerSandboxEnvironment.sample_cleanup("bench", box.config, {"default": box}, False)


def _variants() -> list[
    tuple[str, Any, Callable[[Any], Awaitable[Any]], Callable[[Any], Awaitable[None]]]
]:
    """(name, config, start, stop) per sandbox variant: bwrap's two modes, and docker_api (one
    container per sample, through its own exec gate) where an engine is reachable."""
    variants: list[Any] = [
        (mode, BwrapConfig(mode=mode, memory_mb=256, max_processes=64), _start, _stop)  # type: ignore[arg-type]
        for mode in MODES
    ]
    from sandboxes.docker import DockerConfig, docker_problem

    problem = docker_problem()
    if problem is None:
        variants.append(("docker_api", DockerConfig(memory_mb=256, max_processes=64),
                         _start_docker, _stop_docker))  # fmt: skip
    else:
        print(f"  (docker_api rows skipped: {problem})")
    return variants


async def concurrency(per_sample: int) -> None:
    print(f"== concurrency: C samples at once, {per_sample} commands each (ratios to C=1)")
    for name, config, start, stop in _variants():
        rows: list[tuple[int, float, float, float]] = []
        for level in LEVELS:
            boxes = await asyncio.gather(*(start(config) for _ in range(level)))
            latencies: list[float] = []

            async def work(box: Any, out: list[float]) -> None:
                for _ in range(per_sample):
                    out.append(await _timed(lambda: _echo(box)))

            try:
                for box in boxes:  # warm
                    await _echo(box)
                t = time.perf_counter()
                await asyncio.gather(*(work(box, latencies) for box in boxes))
                wall = time.perf_counter() - t
            finally:
                await asyncio.gather(*(stop(box) for box in boxes))
            throughput = len(latencies) / wall
            rows.append((level, throughput, _pct(latencies, 0.5), _pct(latencies, 0.99)))
        base = rows[0]
        for level, throughput, p50, p99 in rows:
            print(f"  {name:<11} C={level:<3} {throughput:7.1f} cmd/s (x{throughput / base[1]:5.2f})"
                  f"  p50 {p50:8.1f} ms  p99 {p99:8.1f} ms (x{p99 / base[3]:6.2f})")  # fmt: skip


async def main(n: int, only: str | None, rounds: int = 3) -> int:
    problem = bwrap_problem()
    if problem is not None:
        print(f"SKIP: {problem}")
        return 0
    if only in (None, "roundtrip"):
        await roundtrip(n, rounds)
    if only in (None, "seccomp"):
        await seccomp(n)
    if only in (None, "concurrency"):
        await concurrency(max(5, n // 10))
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    only, rounds = None, 3
    if "--only" in args:
        at = args.index("--only")
        only = args[at + 1]
        del args[at : at + 2]
    if "--rounds" in args:
        at = args.index("--rounds")
        rounds = int(args[at + 1])
        del args[at : at + 2]
    sys.exit(asyncio.run(main(int(args[0]) if args else 100, only, rounds)))
