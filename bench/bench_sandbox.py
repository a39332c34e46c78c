"""P6: command round trip through the bwrap sandbox vs a plain subprocess, and sample start-up.

    .venv/bin/python bench/bench_sandbox.py [N]

`exec(["sh", "-c", "echo hi"])` through `BwrapSandboxEnvironment` and the same command through
`asyncio.create_subprocess_exec`, N times each, interleaved; prints medians and the ratio, and the
median of `sample_init` + `sample_cleanup`. Goal: <= 10 ms per sandboxed command.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

from sandboxes.bwrap import BwrapSandboxEnvironment, bwrap_problem

CMD = ["sh", "-c", "echo hi"]
GOAL_MS = 10.0


async def _plain() -> None:
    proc = await asyncio.create_subprocess_exec(
        *CMD, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    assert out == b"hi\n"


async def main(n: int) -> int:
    problem = bwrap_problem()
    if problem is not None:
        print(f"SKIP: {problem}")
        return 0
    envs = await BwrapSandboxEnvironment.sample_init("bench", None, {})
    box = envs["default"]
    try:
        for _ in range(5):  # warm up both paths
            await box.exec(CMD)
            await _plain()
        sandboxed: list[float] = []
        plain: list[float] = []
        for _ in range(n):
            t = time.perf_counter()
            result = await box.exec(CMD)
            sandboxed.append((time.perf_counter() - t) * 1000)
            assert result.stdout == "hi\n", result
            t = time.perf_counter()
            await _plain()
            plain.append((time.perf_counter() - t) * 1000)
    finally:
        await BwrapSandboxEnvironment.sample_cleanup("bench", None, envs, False)

    startup: list[float] = []
    for _ in range(max(10, n // 5)):
        t = time.perf_counter()
        e = await BwrapSandboxEnvironment.sample_init("bench", None, {})
        await BwrapSandboxEnvironment.sample_cleanup("bench", None, e, False)
        startup.append((time.perf_counter() - t) * 1000)

    med_box, med_plain = statistics.median(sandboxed), statistics.median(plain)
    print(f"commands: N={n} each, interleaved; cgroups={'yes' if box.cgroup else 'no'}")
    print(f"  bwrap exec      median {med_box:7.2f} ms  (p90 {_p90(sandboxed):.2f})")
    print(f"  plain subprocess median {med_plain:7.2f} ms  (p90 {_p90(plain):.2f})")
    print(f"  ratio bwrap/plain {med_box / med_plain:.2f}x, overhead {med_box - med_plain:.2f} ms")
    print(f"sample start-up (sample_init + sample_cleanup): median {statistics.median(startup):.2f} ms")
    verdict = "MET" if med_box <= GOAL_MS else "NOT MET"
    print(f"goal <= {GOAL_MS:.0f} ms per command: {verdict}")
    return 0


def _p90(xs: list[float]) -> float:
    return sorted(xs)[int(0.9 * (len(xs) - 1))]


if __name__ == "__main__":
    sys.exit(asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)))
