"""Decoding speed with a constraint on vs off, on the in-process back-end and on vLLM-CPU.

The same prompts decode exactly DECODE_TOKENS tokens per request both ways: unconstrained with EOS
ignored; constrained by a JSON schema whose one string must be longer than the budget (so every
row runs to max_tokens inside the grammar, masking logits at every step). tok/s = generated
tokens / wall time. Within a round the arms alternate (their order flips every round), so the
machine's load hits them alike; the ratio reported is the median over rounds of on / off.
Goal: on / off >= 0.8 on both back-ends. The first constrained request's grammar compilation is
timed apart.

In-process, a third arm decodes under the row-by-row reference processor (`batched=False`), and
the time spent inside the logits processor is measured directly: its share of the constrained
run's wall time is the mask's cost, a number the machine's load hardly moves (the tok/s ratio
on a shared machine swings by 2x between rounds).

On vLLM the server's own time is measured too (a timer the bench puts on the server's
PYTHONPATH as sitecustomize; per process, cumulative): the engine step, vLLM's structured-output
work (grammar compile, bitmask fill in the engine process, token accept, bitmask apply in the
worker) and the worker's forward and sampling. Per arm it prints ms per engine step of each:
what the constraint adds to a step, and where, whatever the machine's load does to the tok/s.

Environment: BENCH_BACKENDS (in-process,vllm: in this order), BENCH_CONCURRENCY (1,16),
BENCH_DECODE_TOKENS (64), BENCH_ROUNDS (5), BENCH_VLLM_STRUCTURED (the server's
--structured-outputs-config as JSON; default the harness's, `STRUCTURED_OUTPUTS`).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BACKENDS = [b.strip() for b in os.environ.get("BENCH_BACKENDS", "in-process,vllm").split(",")]
CONCURRENCY = [int(c) for c in os.environ.get("BENCH_CONCURRENCY", "1,16").split(",")]
DECODE_TOKENS = int(os.environ.get("BENCH_DECODE_TOKENS", "64"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SCHEMA = {
    "type": "object",
    "properties": {"story": {"type": "string", "minLength": 2000, "maxLength": 4000}},
    "required": ["story"],
}
QUESTIONS = [f"Write a long story about the number {n}, as JSON." for n in range(1, 65)]
STRUCTURED = os.environ.get("BENCH_VLLM_STRUCTURED")

#: The server-side timer (written as sitecustomize.py into a folder on the server's PYTHONPATH):
#: cumulative (seconds, calls) per timed function, per process, in $BENCH_SO_TIMER_DIR/<pid>.json
#: (rewritten by a thread every 0.1 s while counts change; forked processes start their own).
SO_TIMER = r"""
import json, os, threading, time

_DIR = os.environ.get("BENCH_SO_TIMER_DIR")
if _DIR:
    _counts, _state = {}, {"pid": None, "dirty": False}

    def _flush():
        path = os.path.join(_DIR, f"{os.getpid()}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(_counts, f)
        os.replace(path + ".tmp", path)

    def _loop():
        while True:
            time.sleep(0.1)
            if _state["dirty"]:
                _state["dirty"] = False
                _flush()

    def _wrap(owner, name, key):
        inner = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                seconds, calls = _counts.get(key, (0.0, 0))
                _counts[key] = (seconds + time.perf_counter() - start, calls + 1)
                _state["dirty"] = True
                if _state["pid"] != os.getpid():
                    _state["pid"] = os.getpid()
                    _counts.clear()
                    threading.Thread(target=_loop, daemon=True).start()

        setattr(owner, name, timed)

    try:
        from vllm.v1.engine.core import EngineCore
        from vllm.v1.structured_output import StructuredOutputManager
        from vllm.v1.worker import gpu_model_runner

        _wrap(EngineCore, "step", "engine step")
        _wrap(StructuredOutputManager, "grammar_bitmask", "bitmask fill")
        _wrap(StructuredOutputManager, "accept_tokens", "token accept")
        _wrap(StructuredOutputManager, "_create_grammar", "grammar compile")
        _wrap(gpu_model_runner, "apply_grammar_bitmask", "bitmask apply")
        _wrap(gpu_model_runner.GPUModelRunner, "execute_model", "forward")
        _wrap(gpu_model_runner.GPUModelRunner, "sample_tokens", "sample")
    except Exception as exc:  # the bench still runs, without the breakdown
        print(f"bench structured-output timer not installed: {exc!r}", flush=True)
"""
TIMED = ["engine step", "forward", "sample", "bitmask fill", "token accept", "bitmask apply"]


class _ServerClock:
    """Reads the server timer's files: totals over every process of the server."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="bench-so-timer-")
        Path(self.dir, "sitecustomize.py").write_text(SO_TIMER)

    def env(self) -> dict[str, str]:
        path = os.pathsep.join(p for p in (self.dir, os.environ.get("PYTHONPATH", "")) if p)
        return {"BENCH_SO_TIMER_DIR": self.dir, "PYTHONPATH": path}

    def totals(self) -> dict[str, tuple[float, int]]:
        time.sleep(0.3)  # the timer threads write every 0.1 s
        out: dict[str, tuple[float, int]] = {}
        for file in Path(self.dir).glob("*.json"):
            try:
                counts = json.loads(file.read_text())
            except (OSError, ValueError):
                continue
            for key, (seconds, calls) in counts.items():
                s0, c0 = out.get(key, (0.0, 0))
                out[key] = (s0 + seconds, c0 + calls)
        return out


def _per_step(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float]:
    """ms per engine step of each timed function between two readings."""
    steps = after.get("engine step", (0.0, 0))[1] - before.get("engine step", (0.0, 0))[1]
    if steps <= 0:
        return {}
    return {
        key: 1000 * (after.get(key, (0.0, 0))[0] - before.get(key, (0.0, 0))[0]) / steps
        for key in TIMED
    } | {"steps": float(steps)}


async def _vllm(server: Any, prompts: list[str], constrained: bool) -> tuple[int, float]:
    import httpx

    async with httpx.AsyncClient(timeout=900) as client:

        async def one(prompt: str) -> int:
            body: dict[str, Any] = {
                "model": server.served_model_name,
                "messages": [{"role": "user", "content": prompt}],
                "max_tokens": DECODE_TOKENS,
                "temperature": 0.0,
            }
            if constrained:
                body["structured_outputs"] = {"json": SCHEMA}
            else:
                body["ignore_eos"] = True
            reply = await client.post(server.base_url + "/chat/completions", json=body)
            reply.raise_for_status()
            return int(reply.json()["usage"]["completion_tokens"])

        start = time.perf_counter()
        tokens = await asyncio.gather(*(one(p) for p in prompts))
    return sum(tokens), time.perf_counter() - start


def vllm_rate(server: Any, prompts: list[str], constrained: bool) -> float:
    tokens, seconds = asyncio.run(_vllm(server, prompts, constrained))
    if tokens != DECODE_TOKENS * len(prompts):
        print(f"  note: vLLM produced {tokens} tokens, not {DECODE_TOKENS * len(prompts)}")
    return tokens / seconds


class _ProcessorClock:
    """Seconds spent inside the constrained logits processor (both paths go through __call__)."""

    def __init__(self) -> None:
        from harness.models.grammar import ConstrainedLogits

        self.seconds = 0.0
        inner = ConstrainedLogits.__call__
        clock = self

        def timed(self_: Any, input_ids: Any, scores: Any) -> Any:
            start = time.perf_counter()
            try:
                return inner(self_, input_ids, scores)
            finally:
                clock.seconds += time.perf_counter() - start

        ConstrainedLogits.__call__ = timed  # type: ignore[method-assign]


def inprocess_run(
    lm: Any, prompts: list[str], constraint: Any | None, clock: _ProcessorClock, batched: bool
) -> tuple[float, float]:
    """(tok/s, share of the wall time spent in the logits processor)."""
    from harness.models.grammar import GrammarEngine

    texts = [lm.chat_prompt(p) for p in prompts]
    make = GrammarEngine.logits_processor
    if not batched:

        def per_row(self: Any, grammars: Any, *, batched: bool = True) -> Any:  # noqa: ARG001
            return make(self, grammars, batched=False)

        GrammarEngine.logits_processor = per_row  # type: ignore[method-assign]
    clock.seconds = 0.0
    start = time.perf_counter()
    try:
        gens = lm.generate(
            texts,
            DECODE_TOKENS,
            record=False,
            batch_size=len(texts),
            min_new_tokens=0 if constraint else DECODE_TOKENS,
            constraints=None if constraint is None else [constraint] * len(texts),
        )
    finally:
        GrammarEngine.logits_processor = make  # type: ignore[method-assign]
    seconds = time.perf_counter() - start
    tokens = sum(len(g.token_ids) for g in gens)
    if tokens != DECODE_TOKENS * len(prompts):
        print(f"  note: in-process produced {tokens} tokens, not {DECODE_TOKENS * len(prompts)}")
    return tokens / seconds, clock.seconds / seconds


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def bench_inprocess(fmt: Any) -> dict[tuple[int, str], list[float]]:
    from harness.models.whitebox import WhiteBoxLM

    lm = WhiteBoxLM.shared("default")
    clock = _ProcessorClock()
    started = time.perf_counter()
    inprocess_run(lm, QUESTIONS[:1], fmt.constraint, clock, True)  # compiles, caches the grammar
    print(
        f"in-process: first constrained request (grammar compile + decode) "
        f"{time.perf_counter() - started:.1f} s",
        flush=True,
    )
    out: dict[tuple[int, str], list[float]] = {}
    arms = [("off", None, True), ("on", fmt.constraint, True), ("per-row", fmt.constraint, False)]
    for r in range(ROUNDS):
        for c in CONCURRENCY:
            prompts = QUESTIONS[:c]
            rates: dict[str, float] = {}
            for name, constraint, batched in arms if r % 2 == 0 else arms[::-1]:
                rates[name], share = inprocess_run(lm, prompts, constraint, clock, batched)
                if name != "off":
                    out.setdefault((c, f"{name} mask share"), []).append(share)
            out.setdefault((c, "ratio"), []).append(rates["on"] / rates["off"])
            out.setdefault((c, "per-row ratio"), []).append(rates["per-row"] / rates["off"])
            print(
                f"  in-process round {r + 1} c={c:>2}: off {rates['off']:.1f} on {rates['on']:.1f} "
                f"per-row {rates['per-row']:.1f} tok/s; on/off {rates['on'] / rates['off']:.2f}; "
                f"mask share on {out[c, 'on mask share'][-1]:.3f} per-row "
                f"{out[c, 'per-row mask share'][-1]:.3f}; load {_load()}",
                flush=True,
            )
    return out


def bench_vllm() -> dict[tuple[int, str], list[float]]:
    from harness.models.embedded import EMBEDDED_NAME, embedded_model_dir
    from harness.models.vllm_server import start_vllm_server

    out: dict[tuple[int, str], list[float]] = {}
    clock = _ServerClock()
    saved = {k: os.environ.get(k) for k in clock.env()}
    os.environ.update(clock.env())  # the server inherits the environment
    try:
        server = start_vllm_server(
            embedded_model_dir(),
            served_model_name=EMBEDDED_NAME,
            max_model_len=2048,
            structured_outputs=json.loads(STRUCTURED) if STRUCTURED else None,
        )
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    with server:
        print(
            f"vLLM-CPU ({server.settings['dtype']['dtype']}, eager, structured outputs "
            f"{json.dumps(server.settings['structured_outputs'])}) ready in "
            f"{server.startup_s:.0f} s",
            flush=True,
        )
        started = time.perf_counter()
        before = clock.totals()
        vllm_rate(server, QUESTIONS[:1], True)
        compile_s = (
            clock.totals().get("grammar compile", (0.0, 0))[0]
            - before.get("grammar compile", (0.0, 0))[0]
        )
        print(
            f"vLLM-CPU: first constrained request {time.perf_counter() - started:.1f} s "
            f"(grammar compile {compile_s:.2f} s)"
        )
        for r in range(ROUNDS):
            for c in CONCURRENCY:
                prompts = QUESTIONS[:c]
                rates = {}
                for on in (False, True) if r % 2 == 0 else (True, False):
                    before = clock.totals()
                    rates[on] = vllm_rate(server, prompts, on)
                    arm = "on" if on else "off"
                    for key, ms in _per_step(before, clock.totals()).items():
                        out.setdefault((c, f"{arm} {key}"), []).append(ms)
                out.setdefault((c, "ratio"), []).append(rates[True] / rates[False])
                print(
                    f"  vLLM round {r + 1} c={c:>2}: off {rates[False]:.1f} on {rates[True]:.1f} "
                    f"tok/s; on/off {rates[True] / rates[False]:.2f}; load {_load()}",
                    flush=True,
                )
    return out


def _print_breakdown(out: dict[tuple[int, str], list[float]]) -> None:
    """ms per engine step (median over rounds) of each timed part, constraint off and on."""
    for c in CONCURRENCY:
        if (c, "off engine step") not in out:
            continue
        print(f"  vLLM c={c:>2} ms per engine step, median over rounds (off -> on):")
        for key in TIMED:
            off, on = (statistics.median(out[c, f"{arm} {key}"]) for arm in ("off", "on"))
            print(f"    {key:<14} {off:7.2f} -> {on:7.2f}  ({on - off:+.2f})")
        on_step = statistics.median(out[c, "on engine step"])
        grammar = sum(
            statistics.median(out[c, f"on {key}"])
            for key in ("bitmask fill", "token accept", "bitmask apply")
        )
        off_step = statistics.median(out[c, "off engine step"])
        print(
            f"    structured-output work {grammar:.2f} ms of a {on_step:.2f} ms step "
            f"({100 * grammar / on_step:.1f} %); engine-step time off / on {off_step / on_step:.3f} "
            "(the tok/s ratio without the gaps between steps)"
        )


def main() -> None:
    from harness.constrained import AnswerFormat

    fmt = AnswerFormat(json_schema=SCHEMA, name="story")
    print(f"load average (1/5/15 min) at start: {_load()}", flush=True)
    results = {}
    for backend in BACKENDS:
        if backend == "in-process":
            results[backend] = bench_inprocess(fmt)
        elif backend == "vllm":
            results[backend] = bench_vllm()
        else:
            raise SystemExit(f"BENCH_BACKENDS: unknown back-end {backend!r} (in-process, vllm)")
    print(f"\n== decode tok/s on / off, median over {ROUNDS} rounds [min, max]; goal >= 0.8")
    for backend, out in results.items():
        for c in CONCURRENCY:
            for key in ("ratio", "per-row ratio", "on mask share", "per-row mask share"):
                if (c, key) in out:
                    v = out[c, key]
                    print(
                        f"  {backend:<10} c={c:>2} {key:<19} {statistics.median(v):.3f} "
                        f"[{min(v):.3f}, {max(v):.3f}]"
                    )
    if "vllm" in results:
        _print_breakdown(results["vllm"])
    print(f"load average at end: {_load()}")


if __name__ == "__main__":
    main()
