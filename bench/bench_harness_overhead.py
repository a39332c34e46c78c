"""P1 — harness overhead: inspect eval tokens/s ÷ a raw async OpenAI loop, same vLLM server.

Both clients send the same 64 chat requests (max_tokens=64, temperature 0) at the same
concurrency to one vLLM server on the embedded model; the order alternates across repetitions.
Goal: ratio ≥ 0.90 at concurrency 16.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time

from _common import MAX_TOKENS, PROMPTS, inspect_throughput, start_embedded_server


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


def main() -> None:
    concurrencies = [int(c) for c in os.environ.get("BENCH_CONCURRENCY", "16,4").split(",")]
    reps = int(os.environ.get("BENCH_REPS", "2"))
    with start_embedded_server() as server:
        print(f"vLLM ready in {server.startup_s:.0f} s at {server.base_url}")
        os.environ["VLLM_BASE_URL"] = server.base_url
        from inspect_ai.model import get_model

        model = get_model(f"vllm/{server.served_model_name}")
        asyncio.run(raw_loop(server.base_url, server.served_model_name, 16))  # warm-up
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
                f"P1 c={c:>2}: raw {r:7.1f} tok/s  harness {i:7.1f} tok/s  ratio {i / r:.3f}  (goal >= 0.90 at c=16)"
            )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
