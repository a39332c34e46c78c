"""P1 — harness overhead, three ways, against one vLLM server on the embedded model.

1. Entry point: the seconds importing the project's inspect entry point adds to
   `import inspect_ai` (inspect imports it for every command). Goal: ≤ 1 s.
2. Whole process: `harness eval` (a fresh process, as a user runs it) vs a raw async OpenAI
   client script (a fresh process), the same 64 chat requests × 64 tokens at concurrency 16,
   completion tokens per wall-clock second of each whole process. Goal: ratio ≥ 0.90.
3. In-process: inspect eval tokens/s over the samples' span ÷ the raw loop's, at c = 16 and 4.

The order alternates across repetitions; medians are printed. The server runs float32 (the fast
path on CPUs without native bfloat16), or `BENCH_DTYPE`.
Each whole-process line splits the wall time: start-up (launch → first request), requests (first
request → last response), exit (last response → process gone).
Environment: BENCH_REPS (3), BENCH_CONCURRENCY (16,4; empty skips part 3), BENCH_IMPORT_REPS (7),
BENCH_DTYPE (float32), BENCH_DISPLAY (none; a comma list runs part 2 once per display).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from _common import MAX_TOKENS, PROMPTS, inspect_throughput, start_embedded_server

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
PYTHON = sys.executable
HARNESS = str(Path(sys.executable).with_name("harness"))


async def raw_loop(base_url: str, model: str, concurrency: int) -> tuple[float, int, float]:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="x")
    gate = asyncio.Semaphore(concurrency)

    async def one(prompt: str) -> int:
        async with gate:
            reply = await client.chat.completions.create(
                model=model,
                messages=[{"role": "user", "content": prompt}],
                max_tokens=MAX_TOKENS,
                temperature=0,
            )
            return reply.usage.completion_tokens

    started = time.perf_counter()
    tokens = sum(await asyncio.gather(*(one(p) for p in PROMPTS)))
    seconds = time.perf_counter() - started
    await client.close()
    return tokens / seconds, tokens, seconds


# ------------------------------------------------------------------------ 1. entry point import
def _import_seconds(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([PYTHON, "-c", code], check=True, cwd=REPO_ROOT)
    return time.perf_counter() - started


def _importtime_entry_us() -> tuple[int, int]:
    """(`import inspect_ai`, the entry point beyond it) in µs, from `python -X importtime`."""
    result = subprocess.run(
        [PYTHON, "-X", "importtime", "-c", "import inspect_ai; import harness._inspect_entry"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    )
    cumulative = {}
    for line in result.stderr.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[1].isdigit():
            cumulative[parts[2]] = int(parts[1])
    return cumulative["inspect_ai"], cumulative["harness._inspect_entry"]


def bench_entry_point(reps: int) -> None:
    base, entry = [], []
    for rep in range(reps):
        pair = [
            ("base", "import inspect_ai"),
            ("entry", "import inspect_ai, harness._inspect_entry"),
        ]
        for kind, code in pair if rep % 2 == 0 else pair[::-1]:
            (base if kind == "base" else entry).append(_import_seconds(code))
    extra = statistics.median(e - b for e, b in zip(entry, base, strict=True))
    inspect_us, entry_us = _importtime_entry_us()
    print(
        f"P1 entry point: import inspect_ai {statistics.median(base):.2f} s, with the entry point "
        f"{statistics.median(entry):.2f} s: +{extra:.2f} s wall (median of {reps} paired runs); "
        f"-X importtime: inspect_ai {inspect_us / 1e6:.2f} s, entry point +{entry_us / 1e6:.3f} s"
        f"  (goal <= +1 s)"
    )


# ------------------------------------------------------------------------- 2. whole process
RAW_SCRIPT = """
import asyncio, json, sys, time
from openai import AsyncOpenAI
base_url, model, concurrency, max_tokens = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
prompts = json.loads(sys.stdin.read())

async def main():
    client = AsyncOpenAI(base_url=base_url, api_key="x")
    gate = asyncio.Semaphore(concurrency)
    async def one(prompt):
        async with gate:
            reply = await client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": prompt}],
                max_tokens=max_tokens, temperature=0)
            return reply.usage.completion_tokens
    first = time.time()
    tokens = sum(await asyncio.gather(*(one(p) for p in prompts)))
    last = time.time()
    await client.close()
    return tokens, first, last

tokens, first, last = asyncio.run(main())
print(json.dumps({"tokens": tokens, "first": first, "last": last}))
"""


@dataclass
class Run:
    """One whole process: wall and CPU seconds, and where its wall time went."""

    wall: float
    tokens: int
    cpu: float
    startup: float  # launch → first request (first sample start)
    span: float  # first request → last response (last sample end)

    @property
    def tail(self) -> float:  # last response → process exit
        return self.wall - self.startup - self.span

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.wall


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(command: list[str], **kwargs) -> tuple[subprocess.CompletedProcess, float, float, float]:
    cpu, launched, started = _child_cpu(), time.time(), time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"{command[:2]} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return result, launched, wall, _child_cpu() - cpu


def whole_raw(base_url: str, model: str, concurrency: int) -> Run:
    """A fresh raw-client process."""
    result, launched, wall, cpu = _timed(
        [PYTHON, "-c", RAW_SCRIPT, base_url, model, str(concurrency), str(MAX_TOKENS)],
        input=json.dumps(PROMPTS),
    )
    out = json.loads(result.stdout)
    return Run(wall, out["tokens"], cpu, out["first"] - launched, out["last"] - out["first"])


def _from_log(logs: str, launched: float, wall: float, cpu: float) -> Run:
    from inspect_ai.log import list_eval_logs, read_eval_log

    [info] = list_eval_logs(logs)
    log = read_eval_log(info.name)
    samples = log.samples or []
    tokens = sum(s.output.usage.output_tokens for s in samples if s.output.usage)
    first = min(datetime.fromisoformat(s.started_at).timestamp() for s in samples if s.started_at)
    last = max(
        datetime.fromisoformat(s.completed_at).timestamp() for s in samples if s.completed_at
    )
    return Run(wall, tokens, cpu, first - launched, last - first)


def _bench_env(base_url: str) -> dict[str, str]:
    env = dict(os.environ, VLLM_BASE_URL=base_url)
    env["PYTHONPATH"] = os.pathsep.join([str(BENCH_DIR), env.get("PYTHONPATH", "")])
    return env


def whole_harness(base_url: str, model: str, concurrency: int, display: str) -> Run:
    """A fresh `harness eval` process, as a user runs it."""
    with tempfile.TemporaryDirectory() as logs:
        command = [
            HARNESS,
            "eval",
            f"task={BENCH_DIR / '_prompt_task.py'}@prompts",
            f"model=vllm/{model}",
            f"max_connections={concurrency}",
            f"max_samples={concurrency}",
            f"max_tokens={MAX_TOKENS}",
            "temperature=0",
            f"log_dir={logs}",
            f"display={display}",
        ]
        _, launched, wall, cpu = _timed(command, env=_bench_env(base_url), cwd=REPO_ROOT)
        return _from_log(logs, launched, wall, cpu)


def whole_inspect(base_url: str, model: str, concurrency: int, display: str) -> Run:
    """A fresh plain `inspect eval` process on the same task (no harness)."""
    with tempfile.TemporaryDirectory() as logs:
        command = [
            str(Path(sys.executable).with_name("inspect")),
            "eval",
            f"{BENCH_DIR / '_prompt_task.py'}@prompts",
            f"--model=vllm/{model}",
            f"--max-connections={concurrency}",
            f"--max-samples={concurrency}",
            f"--max-tokens={MAX_TOKENS}",
            "--temperature=0",
            f"--log-dir={logs}",
            f"--display={display}",
        ]
        _, launched, wall, cpu = _timed(command, env=_bench_env(base_url), cwd=REPO_ROOT)
        return _from_log(logs, launched, wall, cpu)


def bench_whole_process(base_url: str, model: str, reps: int, display: str) -> float:
    """Prints medians per arm and returns harness ÷ raw throughput."""
    c = 16
    runs: dict[str, list[Run]] = {"raw": [], "harness": [], "inspect": []}
    arms = {
        "raw": lambda: whole_raw(base_url, model, c),
        "harness": lambda: whole_harness(base_url, model, c, display),
        "inspect": lambda: whole_inspect(base_url, model, c, display),
    }
    for rep in range(reps):
        for kind in list(arms) if rep % 2 == 0 else list(arms)[::-1]:
            runs[kind].append(arms[kind]())

    def med(kind: str, value: Callable[[Run], float]) -> float:
        return statistics.median(value(r) for r in runs[kind])

    raw_tps = med("raw", lambda r: r.tokens_per_s)
    print(
        f"P1 whole process, 64 requests x {MAX_TOKENS} tokens at c={c}, display={display}, "
        f"medians of {reps} runs each (order alternating):"
    )
    print(
        f"   {'':19} {'wall s':>7} {'CPU s':>6} {'start-up':>8} {'requests':>8} {'exit':>6} {'tok/s':>6}  ratio"
    )
    labels = {"raw": "raw async client", "inspect": "plain inspect eval", "harness": "harness eval"}
    for kind in ("raw", "inspect", "harness"):
        tps = med(kind, lambda r: r.tokens_per_s)
        print(
            f"   {labels[kind]:19} {med(kind, lambda r: r.wall):7.1f} {med(kind, lambda r: r.cpu):6.1f} "
            f"{med(kind, lambda r: r.startup):8.1f} {med(kind, lambda r: r.span):8.1f} "
            f"{med(kind, lambda r: r.tail):6.1f} {tps:6.1f}  {tps / raw_tps:.3f}"
            + ("  (goal >= 0.90)" if kind == "harness" else "")
        )
    return med("harness", lambda r: r.tokens_per_s) / raw_tps


# ------------------------------------------------------------------------------ 3. in-process
def bench_in_process(server, concurrencies: list[int], reps: int) -> None:
    from inspect_ai.model import get_model

    model = get_model(f"vllm/{server.served_model_name}")
    for c in concurrencies:
        raw, ins = [], []
        for rep in range(reps):
            order = ("raw", "inspect") if rep % 2 == 0 else ("inspect", "raw")
            for kind in order:
                if kind == "raw":
                    raw.append(
                        asyncio.run(raw_loop(server.base_url, server.served_model_name, c))[0]
                    )
                else:
                    with tempfile.TemporaryDirectory() as logs:
                        ins.append(inspect_throughput(model, PROMPTS, c, logs)[0])
        r, i = statistics.median(raw), statistics.median(ins)
        print(
            f"P1 in-process c={c:>2}: raw {r:7.1f} tok/s  inspect {i:7.1f} tok/s  ratio {i / r:.3f}"
        )


def main() -> None:
    reps = int(os.environ.get("BENCH_REPS", "3"))
    concurrencies = [int(c) for c in os.environ.get("BENCH_CONCURRENCY", "16,4").split(",") if c]
    bench_entry_point(int(os.environ.get("BENCH_IMPORT_REPS", "7")))
    sys.stdout.flush()
    dtype = os.environ.get("BENCH_DTYPE", "float32")
    with start_embedded_server(dtype=dtype) as server:
        print(f"vLLM ({dtype}) ready in {server.startup_s:.0f} s at {server.base_url}")
        os.environ["VLLM_BASE_URL"] = server.base_url
        asyncio.run(raw_loop(server.base_url, server.served_model_name, 16))  # warm-up
        for display in os.environ.get("BENCH_DISPLAY", "none").split(","):
            bench_whole_process(server.base_url, server.served_model_name, reps, display)
            sys.stdout.flush()
        if concurrencies:
            bench_in_process(server, concurrencies, max(2, reps - 1))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
