"""Serving roofline: vLLM-CPU (eager, compiled) and the in-process back-end against this machine.

1. Probe: measured fp32/bf16 GEMM FLOP/s (torch, all threads, the model's own shapes and a square
   one) and memory read bandwidth.
2. Model: FLOPs and bytes per token of the embedded model (from its config), the rooflines they
   give: prefill = GEMM FLOP/s / FLOPs per token; decode at concurrency c = min(compute bound,
   c x bandwidth / bytes one step reads).
3. Measured, side by side in one run: prefill tok/s (c requests of distinct random-token prompts,
   one output token) and decode tok/s (c requests, short prompts, a fixed number of new tokens,
   EOS ignored) at c = 1, 4, 16 for vLLM-CPU eager, vLLM-CPU compiled and the in-process
   back-end, each as a fraction of its roofline. Each vLLM server is measured interleaved with
   the in-process back-end (rounds alternate), so load from other jobs hits both sides.
4. Where the time goes: a torch profile of the in-process prefill and decode step (GEMM share,
   attention, the rest) and the CPUs vLLM's OpenMP threads compute on.

Environment: BENCH_CONCURRENCY (1,4,16), BENCH_PROMPT_TOKENS (512), BENCH_DECODE_TOKENS (64),
BENCH_ROUNDS (2), BENCH_MODES (eager,compiled), HARNESS_DTYPE (auto), VLLM_CPU_OMP_THREADS_BIND.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CONCURRENCY = [int(c) for c in os.environ.get("BENCH_CONCURRENCY", "1,4,16").split(",")]
PROMPT_TOKENS = int(os.environ.get("BENCH_PROMPT_TOKENS", "512"))
DECODE_TOKENS = int(os.environ.get("BENCH_DECODE_TOKENS", "64"))
DECODE_PROMPT_TOKENS = 16
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
MODES = [m for m in os.environ.get("BENCH_MODES", "eager,compiled").split(",") if m]


# ----------------------------------------------------------------------------------- probe
# The machine is shared: wall-clock rates swing with other jobs' load. The probe therefore runs on
# one thread and divides work by that thread's CPU time (what one core does while it runs), and
# the machine's limit is that per-core rate times the usable cores. Wall-clock rates are printed
# beside it.
def _timed(fn: Any, work: float, seconds: float) -> tuple[float, float]:
    """(work per CPU-second of this thread, work per wall second), best of short windows."""
    fn()
    best_cpu = best_wall = 0.0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        cpu0, wall0 = time.thread_time(), time.perf_counter()
        fn()
        cpu, wall = time.thread_time() - cpu0, time.perf_counter() - wall0
        best_cpu = max(best_cpu, work / max(cpu, 1e-9))
        best_wall = max(best_wall, work / max(wall, 1e-9))
    return best_cpu, best_wall


@dataclass
class Probe:
    cores: int
    gemm_core: dict[str, float]  # dtype -> best FLOP/s per core (CPU time) over the shapes
    gemm_by_shape: dict[str, dict[str, tuple[float, float]]]  # per core (CPU), wall (1 thread)
    bandwidth_core: float  # bytes/s one core streams (CPU time)
    bandwidth_wall: float

    def gemm(self, dtype: str) -> float:
        """The machine's GEMM FLOP/s: per-core rate x usable cores."""
        return self.gemm_core[dtype] * self.cores

    @property
    def bandwidth(self) -> float:
        """Read bandwidth of all cores streaming at once (per-core rate x cores: an upper bound)."""
        return self.bandwidth_core * self.cores


def probe(hidden: int, inter: int, vocab: int) -> Probe:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        shapes = {
            "square 1024": (1024, 1024, 1024),
            f"mlp 256x{hidden}x{inter}": (256, hidden, inter),
            f"lm_head 256x{hidden}x{vocab}": (256, hidden, vocab),
        }
        by_shape: dict[str, dict[str, tuple[float, float]]] = {}
        for name, dtype in (("float32", torch.float32), ("bfloat16", torch.bfloat16)):
            by_shape[name] = {}
            for label, (m, k, n) in shapes.items():
                a, b = torch.randn(m, k, dtype=dtype), torch.randn(k, n, dtype=dtype)
                by_shape[name][label] = _timed(lambda a=a, b=b: a @ b, 2.0 * m * k * n, 1.5)
        x = torch.ones(256 * 1024**2 // 4)  # 256 MiB, far beyond the L3
        bw_cpu, bw_wall = _timed(x.sum, x.numel() * 4.0, 2.0)
    finally:
        torch.set_num_threads(threads)
    return Probe(
        len(os.sched_getaffinity(0)),
        {d: max(v[0] for v in shapes_.values()) for d, shapes_ in by_shape.items()},
        by_shape,
        bw_cpu,
        bw_wall,
    )


# ----------------------------------------------------------------------------------- model
@dataclass
class ModelCost:
    matmul_params: int  # weights multiplied per token (LM head included)
    weight_bytes: dict[str, int]  # dtype -> bytes of all weights one decode step reads
    layers: int
    attn_width: int  # heads x head_dim
    kv_bytes: dict[str, int]  # dtype -> K+V bytes per token of context

    def flops_per_token(self, context: int) -> float:
        """2 x matmul params + attention (QK^T and AV over `context` earlier tokens)."""
        return 2 * self.matmul_params + 4 * self.layers * self.attn_width * context

    def decode_bytes(self, dtype: str, c: int, context: int) -> float:
        """Bytes one decode step of `c` sequences reads: the weights once, each one's KV."""
        return self.weight_bytes[dtype] + c * self.kv_bytes[dtype] * context


def model_cost(path: Path) -> ModelCost:
    config = json.loads((path / "config.json").read_text())
    d, inter, layers = (
        config["hidden_size"],
        config["intermediate_size"],
        config["num_hidden_layers"],
    )
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    head_dim = config.get("head_dim") or d // heads
    vocab = config["vocab_size"]
    per_layer = d * heads * head_dim * 2 + d * kv_heads * head_dim * 2 + 3 * d * inter
    matmul = layers * per_layer + d * vocab
    norms = (2 * layers + 1) * d
    # Tied embeddings: the LM head's matrix is the embedding table, read once per step.
    stored = matmul + norms + (0 if config.get("tie_word_embeddings") else d * vocab)
    return ModelCost(
        matmul_params=matmul,
        weight_bytes={"float32": 4 * stored, "bfloat16": 2 * stored},
        layers=layers,
        attn_width=heads * head_dim,
        kv_bytes={
            "float32": 2 * layers * kv_heads * head_dim * 4,
            "bfloat16": 2 * layers * kv_heads * head_dim * 2,
        },
    )


# ----------------------------------------------------------------------------------- workloads
def random_prompts(n: int, length: int, vocab: int, seed: int) -> list[list[int]]:
    """Distinct random-token prompts (no shared prefix, so no prefix-cache hits)."""
    import random

    rng = random.Random(seed)
    return [[rng.randrange(1000, vocab - 1000) for _ in range(length)] for _ in range(n)]


@dataclass
class Run:
    """One measured batch: tokens, wall seconds, CPU seconds the serving processes used."""

    prompt_tokens: int
    completion_tokens: int
    wall: float
    cpu: float


@dataclass
class Point:
    runs: list[Run] = field(default_factory=list)

    def rate(self, kind: str) -> float:
        """Median tokens per wall second."""
        return statistics.median(_tokens(r, kind) / r.wall for r in self.runs)

    def rate_per_cpu(self, kind: str) -> float:
        """Median tokens per CPU-second (load-independent: work done while it had a core)."""
        return statistics.median(_tokens(r, kind) / max(r.cpu, 1e-9) for r in self.runs)


def _tokens(run: Run, kind: str) -> int:
    return run.prompt_tokens if kind == "prefill" else run.completion_tokens


def _tree_cpu(pid: int) -> float:
    """User + system CPU seconds of a process and all its descendants (vLLM's server tree)."""
    import psutil

    total = 0.0
    root = psutil.Process(pid)
    for proc in [root, *root.children(recursive=True)]:
        try:
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


async def _vllm_requests(
    base_url: str, model: str, prompts: list[list[int]], max_tokens: int
) -> tuple[int, int]:
    import httpx

    async with httpx.AsyncClient(timeout=900) as client:

        async def one(prompt: list[int]) -> tuple[int, int]:
            body = {
                "model": model,
                "prompt": prompt,
                "max_tokens": max_tokens,
                "temperature": 0.0,
                "ignore_eos": True,
            }
            reply = await client.post(base_url + "/completions", json=body)
            reply.raise_for_status()
            usage = reply.json()["usage"]
            return int(usage["prompt_tokens"]), int(usage["completion_tokens"])

        done = await asyncio.gather(*(one(p) for p in prompts))
    return sum(d[0] for d in done), sum(d[1] for d in done)


def vllm_point(server: Any, prompts: list[list[int]], max_tokens: int) -> Run:
    """c = len(prompts) concurrent requests to the server (raw HTTP, as inspect's client)."""
    cpu0, wall0 = _tree_cpu(server.process.pid), time.perf_counter()
    p, n = asyncio.run(
        _vllm_requests(server.base_url, server.served_model_name, prompts, max_tokens)
    )
    return Run(p, n, time.perf_counter() - wall0, _tree_cpu(server.process.pid) - cpu0)


def inprocess_point(lm: Any, prompts: list[list[int]], max_tokens: int) -> Run:
    """The in-process engine on one batch of the same prompts (what its batcher runs)."""
    texts = [lm.tokenizer.decode(p) for p in prompts]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    gens = lm.generate(
        texts, max_tokens, record=False, batch_size=len(texts), min_new_tokens=max_tokens
    )
    return Run(
        sum(g.prompt_tokens for g in gens),
        sum(len(g.token_ids) for g in gens),
        time.perf_counter() - wall0,
        time.process_time() - cpu0,
    )


# ----------------------------------------------------------------------------------- profile
def profile_inprocess(lm: Any, vocab: int) -> list[str]:
    """Where the in-process time goes: GEMM vs attention vs the rest, prefill and one decode."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    lines = []
    ids = torch.tensor(random_prompts(4, PROMPT_TOKENS, vocab, seed=99))
    model = lm.model
    with torch.inference_mode():
        model(ids[:, :32])
        for label, run in (
            (f"prefill 4x{PROMPT_TOKENS}", lambda: model(ids)),
            (f"decode step, 16 seqs x {PROMPT_TOKENS} context", _decode_step(model, vocab)),
        ):
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                start = time.perf_counter()
                run()
                wall = time.perf_counter() - start
            totals: dict[str, float] = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
            for event in prof.key_averages():
                if event.key in ("aten::mm", "aten::addmm", "aten::bmm", "aten::matmul"):
                    totals["gemm"] += event.self_cpu_time_total
                elif "attention" in event.key or "softmax" in event.key:
                    totals["attention"] += event.self_cpu_time_total
                else:
                    totals["other"] += event.self_cpu_time_total
            total = sum(totals.values()) or 1.0
            top = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:5]
            lines.append(
                f"  in-process {label}: {wall * 1e3:.0f} ms wall; self CPU time: "
                + ", ".join(f"{k} {v / total:.0%}" for k, v in totals.items())
                + "; top ops: "
                + ", ".join(f"{e.key} {e.self_cpu_time_total / 1e3:.0f} ms" for e in top)
            )
    return lines


def _decode_step(model: Any, vocab: int) -> Any:
    import torch

    ids = torch.tensor(random_prompts(16, PROMPT_TOKENS, vocab, seed=7))
    out = model(ids, use_cache=True)
    cache, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
    return lambda: model(nxt, past_key_values=cache, use_cache=True)


# ----------------------------------------------------------------------------------- main
def main() -> None:
    from harness.models.embedded import EMBEDDED_NAME, embedded_model_dir
    from harness.models.hardware import choose_dtype, native_bf16_flags
    from harness.models.vllm_server import start_vllm_server
    from harness.models.whitebox import WhiteBoxLM

    path = embedded_model_dir()
    config = json.loads((path / "config.json").read_text())
    vocab = config["vocab_size"]
    cost = model_cost(path)
    choice = choose_dtype()
    dtype = choice.dtype if choice.dtype in ("float32", "bfloat16") else "float32"
    print(f"CPU: {len(os.sched_getaffinity(0))} usable; native bf16 flags: {native_bf16_flags()}")
    print(f"dtype: {choice.reason}")

    hw = probe(config["hidden_size"], config["intermediate_size"], vocab)
    print(f"\n== probe (one thread; per core = work / that thread's CPU time; x{hw.cores} cores)")
    for name, shapes in hw.gemm_by_shape.items():
        print(
            f"  GEMM {name:>8} per core: "
            + ", ".join(
                f"{s} {v[0] / 1e9:.0f} GFLOP/s (wall {v[1] / 1e9:.0f})" for s, v in shapes.items()
            )
        )
    print(
        f"  machine GEMM: fp32 {hw.gemm('float32') / 1e9:.0f} GFLOP/s, bf16 "
        f"{hw.gemm('bfloat16') / 1e9:.0f} GFLOP/s; read bandwidth {hw.bandwidth_core / 1e9:.1f} "
        f"GB/s per core (wall {hw.bandwidth_wall / 1e9:.1f}), {hw.bandwidth / 1e9:.1f} GB/s x{hw.cores}"
    )

    prefill_flops = cost.flops_per_token(PROMPT_TOKENS // 2)
    decode_context = DECODE_PROMPT_TOKENS + DECODE_TOKENS // 2
    print("\n== model (embedded SmolLM2-135M)")
    print(
        f"  {cost.matmul_params / 1e6:.1f} M matmul params; {prefill_flops / 1e6:.0f} MFLOP/token "
        f"in a {PROMPT_TOKENS}-token prefill; a decode step reads {cost.weight_bytes[dtype] / 1e6:.0f}"
        f" MB of {dtype} weights + {cost.kv_bytes[dtype] / 1e3:.1f} kB KV per context token"
    )

    def roof_prefill(per: str, dt: str = "float32") -> float:
        """Prefill tok/s at the GEMM rate: of the machine, or of one core (per CPU-second)."""
        rate = hw.gemm(dt) if per == "machine" else hw.gemm_core[dt]
        return rate / prefill_flops

    def roof_decode(c: int, per: str) -> float:
        cores = hw.cores if per == "machine" else 1
        compute = hw.gemm_core[dtype] * cores / cost.flops_per_token(decode_context)
        memory = c * hw.bandwidth_core * cores / cost.decode_bytes(dtype, c, decode_context)
        return min(compute, memory)

    print(
        f"  roofline prefill: {roof_prefill('machine'):.0f} tok/s at the fp32 GEMM rate "
        f"({roof_prefill('core'):.0f} per core), {roof_prefill('machine', dtype):.0f} at {dtype}"
    )
    for c in CONCURRENCY:
        print(
            f"  roofline decode c={c:>2}: {roof_decode(c, 'machine'):.0f} tok/s "
            f"({roof_decode(c, 'core'):.0f} per core)"
        )

    lm = WhiteBoxLM.shared("default", dtype=dtype)
    seeds = iter(range(1, 10**6))

    def fresh(c: int, length: int) -> list[list[int]]:
        """New prompts for every measurement: vLLM's prefix cache skips a repeated prompt."""
        return random_prompts(c, length, vocab, seed=next(seeds))

    inprocess_point(lm, fresh(1, PROMPT_TOKENS), 2)  # warm-up

    results: dict[str, dict[str, dict[int, Point]]] = {}
    settings: dict[str, Any] = {}

    def record(name: str, kind: str, c: int, run: Run) -> None:
        results.setdefault(name, {}).setdefault(kind, {}).setdefault(c, Point()).runs.append(run)

    for mode in MODES:
        eager = mode == "eager"
        started = time.monotonic()
        with start_vllm_server(
            path,
            served_model_name=EMBEDDED_NAME,
            max_model_len=2048,
            dtype=dtype,
            enforce_eager=eager,
            # Compiling builds C++ kernels on these cores, and even an eager start took over 7
            # minutes on this 2-core machine at load 40: minutes, either way.
            startup_timeout_s=1800,
        ) as server:
            startup = time.monotonic() - started
            settings[mode] = {"startup_s": round(startup), **server.settings.get("vllm_cpu", {})}
            print(f"\n  vLLM-CPU {mode} ready in {startup:.0f} s", flush=True)
            vllm_point(server, fresh(4, DECODE_PROMPT_TOKENS), 4)  # warm-up
            label, inproc = f"vLLM-CPU {mode}", f"in-process (beside {mode})"
            for _ in range(ROUNDS):
                for c in CONCURRENCY:
                    prefill, decode = fresh(c, PROMPT_TOKENS), fresh(c, DECODE_PROMPT_TOKENS)
                    record(label, "prefill", c, vllm_point(server, prefill, 1))
                    record(inproc, "prefill", c, inprocess_point(lm, prefill, 1))
                    record(label, "decode", c, vllm_point(server, decode, DECODE_TOKENS))
                    record(inproc, "decode", c, inprocess_point(lm, decode, DECODE_TOKENS))
                    v, t = results[label], results[inproc]
                    print(
                        f"  [{mode}] c={c:>2}: prefill vLLM {v['prefill'][c].runs[-1].prompt_tokens / v['prefill'][c].runs[-1].wall:.0f}"
                        f" in-process {t['prefill'][c].runs[-1].prompt_tokens / t['prefill'][c].runs[-1].wall:.0f};"
                        f" decode vLLM {v['decode'][c].runs[-1].completion_tokens / v['decode'][c].runs[-1].wall:.1f}"
                        f" in-process {t['decode'][c].runs[-1].completion_tokens / t['decode'][c].runs[-1].wall:.1f} tok/s",
                        flush=True,
                    )
    report(results, settings, roof_prefill, roof_decode, dtype)
    print("\n== where the in-process time goes (torch profiler)")
    for line in profile_inprocess(lm, vocab):
        print(line)


def report(
    results: dict[str, dict[str, dict[int, Point]]],
    settings: dict[str, Any],
    roof_prefill: Any,
    roof_decode: Any,
    dtype: str,
) -> None:
    print(f"\n== measured ({dtype}; median of {ROUNDS} rounds)")
    for mode, info in settings.items():
        env = info.get("env", {})
        print(
            f"  vLLM-CPU {mode}: ready in {info['startup_s']} s; OpenMP on CPUs "
            f"{env.get('VLLM_CPU_OMP_THREADS_BIND', '?')}; KV cache "
            f"{env.get('VLLM_CPU_KVCACHE_SPACE', '?')} GiB"
        )
    print(
        "  tok/s (wall) | tok per CPU-second as a share of one core's roofline "
        "(prefill: fp32 GEMM rate; decode: min(compute, bandwidth))"
    )
    for kind in ("prefill", "decode"):
        for name, kinds in results.items():
            cells = []
            for c in CONCURRENCY:
                point = kinds[kind][c]
                roof = roof_prefill("core") if kind == "prefill" else roof_decode(c, "core")
                cells.append(
                    f"c={c:<2} {point.rate(kind):7.1f} | {point.rate_per_cpu(kind):6.1f} "
                    f"({point.rate_per_cpu(kind) / roof:4.0%})"
                )
            print(f"  {kind:<7} {name:<26} " + "   ".join(cells))

    print("\n== ratios (vLLM-CPU / in-process, same window, same prompts)")
    for mode in settings:
        label, inproc = f"vLLM-CPU {mode}", f"in-process (beside {mode})"
        for kind in ("prefill", "decode"):
            wall = [
                results[label][kind][c].rate(kind) / results[inproc][kind][c].rate(kind)
                for c in CONCURRENCY
            ]
            cpu = [
                results[label][kind][c].rate_per_cpu(kind)
                / results[inproc][kind][c].rate_per_cpu(kind)
                for c in CONCURRENCY
            ]
            print(
                f"  {kind:<7} {mode:<8} wall: "
                + ", ".join(f"c={c} {r:.2f}" for c, r in zip(CONCURRENCY, wall, strict=True))
                + "   per CPU-second: "
                + ", ".join(f"c={c} {r:.2f}" for c, r in zip(CONCURRENCY, cpu, strict=True))
            )
    top = max(CONCURRENCY)
    print("\n== goals")
    for mode in settings:
        label, inproc = f"vLLM-CPU {mode}", f"in-process (beside {mode})"
        ratio = results[label]["decode"][top].rate("decode") / results[inproc]["decode"][top].rate(
            "decode"
        )
        print(f"  vLLM-CPU {mode} decode c={top} / in-process: {ratio:.2f}x (goal >= 1.5x)")
    for name, kinds in results.items():
        best = max(kinds["prefill"][c].rate_per_cpu("prefill") for c in CONCURRENCY)
        wall = max(kinds["prefill"][c].rate("prefill") for c in CONCURRENCY)
        print(
            f"  {name}: prefill {best / roof_prefill('core'):.0%} of the fp32 GEMM roofline per "
            f"CPU-second (goal >= 50%); wall {wall / roof_prefill('machine'):.0%} of the "
            "machine's (load from other jobs included)"
        )
    for kind in ("prefill", "decode"):
        verdicts = []
        for mode in settings:
            label, inproc = f"vLLM-CPU {mode}", f"in-process (beside {mode})"
            faster = results[label][kind][top].rate(kind) > results[inproc][kind][top].rate(kind)
            verdicts.append(f"{mode}: {'vLLM-CPU' if faster else 'in-process'}")
        print(f"  faster for {kind}-heavy jobs at c={top}: {'; '.join(verdicts)}")


if __name__ == "__main__":
    main()
