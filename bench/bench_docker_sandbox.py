"""Issue 20: the docker_api sandbox against bwrap — sample start-up (sample_init + sample_cleanup)
and the exec round trip of `sh -c "echo hi"`, as ratios docker / bwrap (persistent jail).

    .venv/bin/python bench/bench_docker_sandbox.py [N]

N rounds (default 10), interleaved (one docker and one bwrap measurement per round) so that the
shared machine's load hits both alike; medians and the ratio docker / bwrap. The docker round
trip is one engine exec (create + start over the engine's HTTP socket) plus the in-container
supervisor (a Python start); bwrap's is one message to the jail's resident exec server.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment, bwrap_problem
from sandboxes.docker import DockerConfig, DockerSandboxEnvironment, docker_problem

CMD = ["sh", "-c", "echo hi"]


async def _start_stop(kind: str) -> float:
    started = time.perf_counter()
    if kind == "docker":
        envs = await DockerSandboxEnvironment.sample_init("bench", DockerConfig(), {})
        await DockerSandboxEnvironment.sample_cleanup("bench", None, envs, False)
    else:
        config = BwrapConfig(mode="persistent")
        envs = await BwrapSandboxEnvironment.sample_init("bench", config, {})
        await BwrapSandboxEnvironment.sample_cleanup("bench", config, envs, False)
    return (time.perf_counter() - started) * 1000


async def _round_trip(sandbox: object) -> float:
    started = time.perf_counter()
    result = await sandbox.exec(CMD)  # type: ignore[attr-defined]
    elapsed = (time.perf_counter() - started) * 1000
    assert result.stdout == "hi\n", result
    return elapsed


async def main(rounds: int) -> None:
    for problem in (bwrap_problem(), docker_problem()):
        if problem:
            sys.exit(f"cannot run: {problem}")
    await DockerSandboxEnvironment.task_init("bench", DockerConfig())  # image built, stale reaped
    startup: dict[str, list[float]] = {"docker": [], "bwrap": []}
    trips: dict[str, list[float]] = {"docker": [], "bwrap": []}
    bwrap_config = BwrapConfig(mode="persistent")
    docker_env = await DockerSandboxEnvironment.sample_init("bench", DockerConfig(), {})
    bwrap_env = await BwrapSandboxEnvironment.sample_init("bench", bwrap_config, {})
    sandboxes = {"docker": docker_env["default"], "bwrap": bwrap_env["default"]}
    try:
        for _ in range(2):  # warm-up
            for sandbox in sandboxes.values():
                await _round_trip(sandbox)
        for index in range(rounds):
            order = ("docker", "bwrap") if index % 2 == 0 else ("bwrap", "docker")
            for kind in order:
                startup[kind].append(await _start_stop(kind))
                for _ in range(5):
                    trips[kind].append(await _round_trip(sandboxes[kind]))
    finally:
        await DockerSandboxEnvironment.sample_cleanup("bench", None, docker_env, False)
        await BwrapSandboxEnvironment.sample_cleanup("bench", bwrap_config, bwrap_env, False)
    for name, data in (("start-up + cleanup", startup), ("exec round trip", trips)):
        docker_ms, bwrap_ms = statistics.median(data["docker"]), statistics.median(data["bwrap"])
        print(
            f"{name:20s} docker {docker_ms:8.1f} ms  bwrap {bwrap_ms:8.1f} ms  "
            f"ratio docker/bwrap {docker_ms / bwrap_ms:6.1f}  (n={len(data['docker'])} each)"
        )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
