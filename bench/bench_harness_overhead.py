"""P1 — harness overhead, three ways, against one vLLM server on the embedded model.

1. Entry point: the seconds importing the project's inspect entry point adds to
   `import inspect_ai` (inspect imports it for every command). Goal: ≤ 1 s.
2. Whole process: `harness eval` (a fresh process, as a user runs it) vs a raw async OpenAI
   client script (a fresh process), the same 64 chat requests × 64 tokens at concurrency 16,
   completion tokens per wall-clock second of each whole process. Goal: ratio ≥ 0.90.
   2b. The same three processes against an instant stub server (bench/_openai_stub.py): the
   client side alone, split into start-up and per-request time, and the imports of one
   `harness eval` grouped by what pulls them in (`-X importtime`) — where the remainder goes.
3. In-process: inspect eval tokens/s over the samples' span ÷ the raw loop's, at c = 16 and 4.

The order alternates across repetitions; medians are printed. The server runs float32 (the fast
path on CPUs without native bfloat16), or `BENCH_DTYPE`.
Each whole-process line splits the wall time: start-up (launch → first request), requests (first
request → last response), exit (last response → process gone).
Environment: BENCH_REPS (3), BENCH_CONCURRENCY (16,4; empty skips part 3), BENCH_IMPORT_REPS (7),
BENCH_DTYPE (float32), BENCH_DISPLAY (none; a comma list runs part 2 once per display),
BENCH_STUB_REPS (BENCH_REPS; 0 skips 2b), BENCH_VLLM (1; 0 stops after 2b, no model server),
BENCH_HARNESS_ARGS (extra `harness eval` options, space-separated), BENCH_LEAN (0; 1 adds to part 2
an arm with `ctl_server=off log_realtime=off`, which 2b always has).
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
# Extra `harness eval` options (BENCH_HARNESS_ARGS, space-separated), e.g. to measure a default.
HARNESS_ARGS = os.environ.get("BENCH_HARNESS_ARGS", "").split()


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
def _import_seconds(code: str, capture: bool = False) -> float:
    """Wall seconds of `python -c code`; with `capture`, the number the code prints."""
    started = time.perf_counter()
    result = subprocess.run(
        [PYTHON, "-c", code], check=True, cwd=REPO_ROOT, capture_output=capture, text=True
    )
    return float(result.stdout) if capture else time.perf_counter() - started


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


def _harness_command(
    model: str, concurrency: int, display: str, logs: str, extra: tuple[str, ...] = ()
) -> list[str]:
    return [
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
        *HARNESS_ARGS,
        *extra,
    ]


def whole_harness(
    base_url: str, model: str, concurrency: int, display: str, extra: tuple[str, ...] = ()
) -> Run:
    """A fresh `harness eval` process, as a user runs it."""
    with tempfile.TemporaryDirectory() as logs:
        command = _harness_command(model, concurrency, display, logs, extra)
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


# inspect's two runtime services a harness option turns off (neither changes the log)
LEAN = ("ctl_server=off", "log_realtime=off")
LABELS = {
    "raw": "raw async client",
    "inspect": "plain inspect eval",
    "harness": "harness eval",
    "lean": "harness, both off",
}


def _run_arms(
    base_url: str, model: str, reps: int, display: str, lean: bool = False
) -> dict[str, list[Run]]:
    """`reps` whole processes per arm, the order alternating between repetitions.

    `lean` adds an arm: `harness eval ctl_server=off log_realtime=off`.
    """
    c = 16
    arms = {
        "raw": lambda: whole_raw(base_url, model, c),
        "inspect": lambda: whole_inspect(base_url, model, c, display),
        "harness": lambda: whole_harness(base_url, model, c, display),
    }
    if lean:
        arms["lean"] = lambda: whole_harness(base_url, model, c, display, LEAN)
    runs: dict[str, list[Run]] = {kind: [] for kind in arms}
    for rep in range(reps):
        for kind in list(arms) if rep % 2 == 0 else list(arms)[::-1]:
            runs[kind].append(arms[kind]())
    return runs


def _median(runs: list[Run], value: Callable[[Run], float]) -> float:
    return statistics.median(value(r) for r in runs)


def _spread(runs: list[Run], value: Callable[[Run], float]) -> str:
    values = [value(r) for r in runs]
    return f"{statistics.median(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


def _print_table(runs: dict[str, list[Run]], raw_tps: float | None) -> None:
    print(
        f"   {'':19} {'wall s':>7} {'CPU s':>6} {'start-up':>8} {'requests':>8} {'exit':>6}"
        + (f" {'tok/s':>6}  ratio median [min, max]" if raw_tps else "")
    )
    for kind, rs in runs.items():
        line = (
            f"   {LABELS[kind]:19} {_median(rs, lambda r: r.wall):7.1f} "
            f"{_median(rs, lambda r: r.cpu):6.1f} {_median(rs, lambda r: r.startup):8.1f} "
            f"{_median(rs, lambda r: r.span):8.1f} {_median(rs, lambda r: r.tail):6.1f}"
        )
        if raw_tps:
            # each run against the raw median (the arms alternate, so runs are not paired)
            line += f" {_median(rs, lambda r: r.tokens_per_s):6.1f}  " + _spread(
                rs, lambda r: r.tokens_per_s / raw_tps
            )
            line += "  (goal >= 0.90)" if kind == "harness" else ""
        print(line)


def bench_whole_process(base_url: str, model: str, reps: int, display: str) -> float:
    """Prints medians per arm, where the harness's extra wall time goes; returns the ratio."""
    load = os.getloadavg()[0]
    runs = _run_arms(base_url, model, reps, display, lean=os.environ.get("BENCH_LEAN") == "1")
    raw_tps = _median(runs["raw"], lambda r: r.tokens_per_s)
    print(
        f"P1 whole process, 64 requests x {MAX_TOKENS} tokens at c=16, display={display}, "
        f"medians of {reps} runs each (order alternating), load average "
        f"{load:.1f} -> {os.getloadavg()[0]:.1f}:"
    )
    _print_table(runs, raw_tps)
    raw, harness = runs["raw"], runs["harness"]
    budget = _median(raw, lambda r: r.wall) / 0.90
    extra = {
        part: _median(harness, value) - _median(raw, value)
        for part, value in (
            ("start-up", lambda r: r.startup),
            ("requests", lambda r: r.span),
            ("exit", lambda r: r.tail),
        )
    }
    print(
        f"   0.90 allows the harness {budget:.1f} s wall, {budget - _median(raw, lambda r: r.wall):.1f} s"
        f" more than the raw client; it takes "
        + ", ".join(f"{part} {seconds:+.1f} s" for part, seconds in extra.items())
    )
    return _median(harness, lambda r: r.tokens_per_s) / raw_tps


# ------------------------------------------------------- 2b. client cost on an instant server
IMPORT_GROUPS = (  # (label, predicate on a top-level import's module name), first match wins
    (
        "Anthropic provider (inspect, first sample: `anthropic` is installed)",
        lambda m: m.startswith(("inspect_ai.model._providers.anthropic", "anthropic")),
    ),
    (
        "inspect-k8s-sandbox entry point (Kubernetes client)",
        lambda m: m.startswith(("k8s_sandbox", "kubernetes")),
    ),
    (
        "ACP server module (inspect, every eval)",
        lambda m: m.startswith(("inspect_ai.agent._acp", "acp")),
    ),
    (
        "control server (uvicorn, FastAPI)",
        lambda m: m.startswith(("uvicorn", "fastapi", "starlette", "inspect_ai._control")),
    ),
    ("OpenAI client and vllm provider", lambda m: m.startswith(("openai", "inspect_ai.model."))),
    ("inspect_ai (the package)", lambda m: m.startswith("inspect_ai")),
    ("harness, reports, sandboxes", lambda m: m.startswith(("harness", "reports", "sandboxes"))),
    ("everything else", lambda _: True),
)


def _import_groups(stderr: str) -> dict[str, float]:
    """Seconds per group of the top-level imports in a `-X importtime` trace."""
    seconds = {label: 0.0 for label, _ in IMPORT_GROUPS}
    for line in stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit() or parts[2][1:3] == "  ":
            continue  # the header, other output, or an import nested in another
        module = parts[2].strip()
        label = next(label for label, match in IMPORT_GROUPS if match(module))
        seconds[label] += int(parts[1]) / 1e6
    return seconds


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench_client_cost(model: str, reps: int) -> None:
    """The three arms against an instant stub server: what the client side alone costs."""
    import urllib.request

    port = _free_port()
    stub = subprocess.Popen(
        [PYTHON, str(BENCH_DIR / "_openai_stub.py"), str(port), model],
        cwd=BENCH_DIR,
        env=_bench_env(""),
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base_url}/models", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        load = os.getloadavg()[0]
        runs = _run_arms(base_url, model, reps, "none", lean=True)
        print(
            f"P1 client side alone: the same processes against an instant stub server "
            f"(bench/_openai_stub.py), medians of {reps}, load average {load:.1f} -> "
            f"{os.getloadavg()[0]:.1f}; 'requests' is the clients' own time for the 64 requests "
            "(for inspect and the harness it includes importing inspect's Anthropic provider at "
            f"the first sample); 'both off' = {' '.join(LEAN)}:"
        )
        _print_table(runs, None)
        raw_span = _median(runs["raw"], lambda r: r.span)
        for kind in ("inspect", "harness", "lean"):
            span = _median(runs[kind], lambda r: r.span)
            print(
                f"   {LABELS[kind]}: {(span - raw_span) / 64 * 1000:.0f} ms of client time per "
                f"request more than the raw client ({span / 64 * 1000:.0f} vs "
                f"{raw_span / 64 * 1000:.0f} ms, the one-time import spread over 64)"
            )
        _print_startup_breakdown(base_url, model)
    finally:
        stub.terminate()
        stub.wait()


def _print_startup_breakdown(base_url: str, model: str) -> None:
    """One `harness eval` under `-X importtime`, its imports grouped; the metadata scan."""
    with tempfile.TemporaryDirectory() as logs:
        command = [PYTHON, "-X", "importtime", *_harness_command(model, 16, "none", logs)]
        result, _, wall, _ = _timed(command, env=_bench_env(base_url), cwd=REPO_ROOT)
    groups = _import_groups(result.stderr)
    scan = _import_seconds(
        "import importlib.metadata as m, time; t = time.perf_counter(); "
        "m.packages_distributions(); print(time.perf_counter() - t)",
        capture=True,
    )
    print(
        f"   where a harness eval process's imports go (-X importtime, one run of {wall:.1f} s "
        f"wall; importtime adds its own overhead), {sum(groups.values()):.1f} s in all:"
    )
    for label, seconds in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"     {seconds:5.2f} s  {label}")
    print(
        f"     and, not an import: inspect scans every installed distribution's file list "
        f"(importlib.metadata.packages_distributions) to find the task's package: {scan:.2f} s"
    )


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
    from harness.models.embedded import EMBEDDED_NAME

    stub_reps = int(os.environ.get("BENCH_STUB_REPS", str(reps)))
    if stub_reps:
        bench_client_cost(EMBEDDED_NAME, stub_reps)
        sys.stdout.flush()
    if os.environ.get("BENCH_VLLM", "1") == "0":
        return
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
