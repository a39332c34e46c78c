"""Issue 26 §5: the docker_api sandbox against bwrap persistent, side by side in one run.

    .venv/bin/python bench/bench_docker_sandbox.py [N] [--levels 1,4,16,64] [--per-sample K]

- round trip: `exec(["sh", "-c", "echo hi"])` in one docker sample and one bwrap persistent
  sample, N times each, interleaved (one docker and one bwrap measurement per round, so the shared
  machine's load hits both alike); medians and the ratio docker / bwrap. Beside them, the engine
  API alternative the channel was measured against: one engine exec per command (create, start
  with the attach stream, inspect for the exit code), as the sample's uid, no server.
- start-up: `sample_init` + `sample_cleanup` of a sample, interleaved the same way (docker's
  includes starting the container and its first exec-server channel).
- throughput: C samples at once (C = 1, 4, 16, 64), each running K commands back to back through
  the default exec path (each provider's own exec gate included, as in an eval); commands/s and
  p99 per provider; at each C the providers run docker, bwrap, bwrap, docker (mean rate, worst
  p99), so that the shared machine's changing load hits both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Any

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment, bwrap_problem
from sandboxes.docker import DockerConfig, DockerSandboxEnvironment, docker_client, docker_problem

CMD = ["sh", "-c", "echo hi"]
KINDS = ("docker", "bwrap")
_BWRAP = BwrapConfig(mode="persistent")
_DOCKER = DockerConfig()


async def _start(kind: str) -> Any:
    if kind == "docker":
        return (await DockerSandboxEnvironment.sample_init("bench", _DOCKER, {}))["default"]
    return (await BwrapSandboxEnvironment.sample_init("bench", _BWRAP, {}))["default"]


async def _stop(kind: str, box: Any) -> None:
    if kind == "docker":
        await DockerSandboxEnvironment.sample_cleanup("bench", None, {"default": box}, False)
    else:
        await BwrapSandboxEnvironment.sample_cleanup("bench", _BWRAP, {"default": box}, False)


async def _echo(box: Any) -> float:
    started = time.perf_counter()
    result = await box.exec(CMD)
    elapsed = (time.perf_counter() - started) * 1000
    assert result.stdout == "hi\n", result
    return elapsed


def _engine_exec(box: DockerSandboxEnvironment) -> float:
    """The alternative: one engine exec per command; exit code from exec inspect."""
    api = docker_client().api
    started = time.perf_counter()
    created = api.exec_create(
        box.container_id, CMD, user=f"{box.uid}:{box.uid}", workdir="/workspace"
    )
    output = api.exec_start(created["Id"])
    code = api.exec_inspect(created["Id"])["ExitCode"]
    elapsed = (time.perf_counter() - started) * 1000
    assert (code, output) == (0, b"hi\n"), (code, output)
    return elapsed


def _pct(xs: list[float], q: float) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


async def round_trip_and_startup(rounds: int) -> None:
    boxes = {kind: await _start(kind) for kind in KINDS}
    trips: dict[str, list[float]] = {kind: [] for kind in (*KINDS, "engine exec")}
    startup: dict[str, list[float]] = {kind: [] for kind in KINDS}
    try:
        for _ in range(3):
            for kind in KINDS:
                await _echo(boxes[kind])
        for index in range(rounds):
            order = KINDS if index % 2 == 0 else KINDS[::-1]
            for kind in order:
                trips[kind].append(await _echo(boxes[kind]))
            if index % 5 == 0:
                trips["engine exec"].append(await asyncio.to_thread(_engine_exec, boxes["docker"]))
            if index % max(1, rounds // 10) == 0:
                for kind in order:
                    started = time.perf_counter()
                    await _stop(kind, await _start(kind))
                    startup[kind].append((time.perf_counter() - started) * 1000)
    finally:
        for kind in KINDS:
            await _stop(kind, boxes[kind])
    bwrap_trip, bwrap_start = statistics.median(trips["bwrap"]), statistics.median(startup["bwrap"])
    print(f"== round trip ({rounds} rounds, interleaved) and start-up + cleanup (medians)")
    for kind, data in trips.items():
        ms = statistics.median(data)
        print(
            f"  round trip {kind:12s} {ms:8.1f} ms  x bwrap {ms / bwrap_trip:5.2f}  (n={len(data)})"
        )
    for kind, data in startup.items():
        ms = statistics.median(data)
        print(
            f"  start-up   {kind:12s} {ms:8.1f} ms  x bwrap {ms / bwrap_start:5.2f}  (n={len(data)})"
        )


async def _throughput(kind: str, level: int, per_sample: int) -> tuple[float, float]:
    boxes = await asyncio.gather(*[_start(kind) for _ in range(level)])
    latencies: list[float] = []
    try:
        await asyncio.gather(*[_echo(box) for box in boxes])  # warm

        async def run(box: Any) -> None:
            for _ in range(per_sample):
                latencies.append(await _echo(box))

        started = time.perf_counter()
        await asyncio.gather(*[run(box) for box in boxes])
        wall = time.perf_counter() - started
    finally:
        await asyncio.gather(*[_stop(kind, box) for box in boxes])
    return level * per_sample / wall, _pct(latencies, 0.99)


async def throughput(levels: list[int], per_sample: int) -> None:
    print(f"== throughput: C samples at once, {per_sample} commands each, run twice per provider")
    print("  C   | docker cmd/s | bwrap cmd/s | docker/bwrap | docker p99 | bwrap p99")
    for level in levels:
        rates: dict[str, list[float]] = {kind: [] for kind in KINDS}
        p99s: dict[str, list[float]] = {kind: [] for kind in KINDS}
        for kind in (*KINDS, *KINDS[::-1]):  # docker, bwrap, bwrap, docker: load hits both alike
            rate, p99 = await _throughput(kind, level, per_sample)
            rates[kind].append(rate)
            p99s[kind].append(p99)
        docker, bwrap = statistics.mean(rates["docker"]), statistics.mean(rates["bwrap"])
        print(
            f"  {level:<3d} | {docker:12.1f} | {bwrap:11.1f} | {docker / bwrap:12.2f} |"
            f" {max(p99s['docker']):7.0f} ms | {max(p99s['bwrap']):6.0f} ms"
        )


async def main(args: argparse.Namespace) -> None:
    for problem in (bwrap_problem(), docker_problem()):
        if problem:
            sys.exit(f"cannot run: {problem}")
    await DockerSandboxEnvironment.task_init("bench", _DOCKER)  # image built, stale reaped
    with open("/proc/loadavg") as handle:
        print("load average at start:", " ".join(handle.read().split()[:3]))
    await round_trip_and_startup(args.rounds)
    await throughput([int(c) for c in args.levels.split(",")], args.per_sample)
    with open("/proc/loadavg") as handle:
        print("load average at end:", " ".join(handle.read().split()[:3]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rounds", nargs="?", type=int, default=50)
    parser.add_argument("--levels", default="1,4,16,64")
    parser.add_argument("--per-sample", type=int, default=10)
    asyncio.run(main(parser.parse_args()))
