"""P6: command round trip through the bwrap sandbox (both jail modes) vs a plain subprocess, and
sample start-up.

    .venv/bin/python bench/bench_sandbox.py [N]

`exec(["sh", "-c", "echo hi"])` through `BwrapSandboxEnvironment` in mode="persistent" (one jail
per sample, one round trip to its exec server per command) and mode="per_exec" (a fresh jail per
command), and the same command through `asyncio.create_subprocess_exec`, N times each, interleaved
so machine load hits all three alike; prints medians and ratios against the plain subprocess, and
the median of `sample_init` + `sample_cleanup` per mode. Goal: <= 10 ms per sandboxed command.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment, bwrap_problem

CMD = ["sh", "-c", "echo hi"]
GOAL_MS = 10.0
MODES = ("persistent", "per_exec")


async def _plain() -> None:
    proc = await asyncio.create_subprocess_exec(
        *CMD, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    assert out == b"hi\n"


async def _timed(step) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    await step()
    return (time.perf_counter() - t) * 1000


async def main(n: int) -> int:
    problem = bwrap_problem()
    if problem is not None:
        print(f"SKIP: {problem}")
        return 0
    configs = {mode: BwrapConfig(mode=mode) for mode in MODES}  # type: ignore[arg-type]
    envs = {
        mode: await BwrapSandboxEnvironment.sample_init("bench", configs[mode], {})
        for mode in MODES
    }
    boxes = {mode: envs[mode]["default"] for mode in MODES}
    times: dict[str, list[float]] = {mode: [] for mode in (*MODES, "plain")}

    async def sandboxed(mode: str) -> None:
        result = await boxes[mode].exec(CMD)
        assert result.stdout == "hi\n", result

    try:
        for _ in range(5):  # warm up every path
            for mode in MODES:
                await sandboxed(mode)
            await _plain()
        for _ in range(n):
            for mode in MODES:
                times[mode].append(await _timed(lambda mode=mode: sandboxed(mode)))
            times["plain"].append(await _timed(_plain))
    finally:
        for mode in MODES:
            await BwrapSandboxEnvironment.sample_cleanup("bench", configs[mode], envs[mode], False)

    init: dict[str, list[float]] = {mode: [] for mode in MODES}
    cleanup: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(max(10, n // 5)):
        for mode in MODES:
            t = time.perf_counter()
            e = await BwrapSandboxEnvironment.sample_init("bench", configs[mode], {})
            init[mode].append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            await BwrapSandboxEnvironment.sample_cleanup("bench", configs[mode], e, False)
            cleanup[mode].append((time.perf_counter() - t) * 1000)

    plain = statistics.median(times["plain"])
    cgroups = "yes" if boxes["per_exec"].as_type(BwrapSandboxEnvironment).cgroup else "no"
    print(f"commands: N={n} each, interleaved; cgroups={cgroups}")
    print(f"  plain subprocess    median {plain:7.2f} ms  (p90 {_p90(times['plain']):.2f})")
    for mode in MODES:
        med = statistics.median(times[mode])
        print(f"  bwrap {mode:<13} median {med:7.2f} ms  (p90 {_p90(times[mode]):.2f})  "
              f"ratio vs plain {med / plain:5.2f}x  overhead {med - plain:6.2f} ms  "
              f"goal <= {GOAL_MS:.0f} ms: {'MET' if med <= GOAL_MS else 'NOT MET'}")  # fmt: skip
    for mode in MODES:
        print(f"sample {mode:<11} sample_init median {statistics.median(init[mode]):7.2f} ms, "
              f"sample_cleanup median {statistics.median(cleanup[mode]):7.2f} ms")  # fmt: skip
    return 0


def _p90(xs: list[float]) -> float:
    return sorted(xs)[int(0.9 * (len(xs) - 1))]


if __name__ == "__main__":
    sys.exit(asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)))
