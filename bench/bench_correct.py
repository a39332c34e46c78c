"""CORRECT retrieval latency at 1k and 10k cached schemata, and its share of localisation time.

Goals (issue 4): ≤ 5 ms per query at 10k schemata; ≤ 2 % of total localisation time.
Keys are random unit vectors of all-MiniLM-L6-v2's width (384); the query path is the cache's
`retrieve` with self-exclusion. References in the same process: the bare mat-vec over the same
key matrix (interleaved with the queries, so machine load hits both alike), and the time of one
localisation call: a 1 s floor, a measured s/trajectory (BENCH_CORRECT_CALL_S), or one real
greedy call on the embedded model (BENCH_CORRECT_MODEL=1).

    make bench   (or: python bench/bench_correct.py)
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

from methods.correct import SchemaCache

DIM = 384
QUERIES = 200


def _latency_ms(n: int, k: int, rng: np.random.Generator) -> tuple[float, float]:
    """Median ms of `retrieve` and of the bare mat-vec on the same matrix."""
    cache = SchemaCache(DIM, initial_rows=n)
    keys = rng.normal(size=(n, DIM)).astype(np.float32)
    for i, key in enumerate(keys):
        cache.add(i, key)
    matrix = cache._keys[:n]  # the cache's own storage: the floor any retrieval pays
    queries = rng.normal(size=(QUERIES, DIM)).astype(np.float32)
    for q in queries[:10]:  # warm-up
        cache.retrieve(q, k, exclude={0})
    ours, bare = [], []
    for i, q in enumerate(queries):
        start = time.perf_counter()
        cache.retrieve(q, k, exclude={i})
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        matrix @ q
        bare.append(time.perf_counter() - start)
    return statistics.median(ours) * 1000, statistics.median(bare) * 1000


def _query_embedding_ms() -> float | None:
    try:
        from methods.correct import MiniLMEmbedder, minilm_dir

        if minilm_dir() is None:
            return None
        emb = MiniLMEmbedder()
        text = "A team of agents tried to answer a question. " * 40
        emb.encode([text])
        start = time.perf_counter()
        for _ in range(5):
            emb.encode([text])
        return (time.perf_counter() - start) / 5 * 1000
    except Exception:  # noqa: BLE001 - embedding is optional in the bench
        return None


def _localisation_call_ms() -> tuple[float, str]:
    """One real localisation call on the embedded model if asked for, else a conservative floor."""
    if os.environ.get("BENCH_CORRECT_MODEL") == "1":
        import asyncio

        from harness.models import WhiteBoxLM
        from methods.correct import LocaliserConfig, Step, Trajectory, all_at_once

        lm = WhiteBoxLM.shared("default")
        steps = tuple(
            Step(i, f"Agent{i % 3}", f"Agent{i % 3}", "Some reasoning about the task. " * 30)
            for i in range(8)
        )
        t = Trajectory("bench", "What is the answer?", steps, "42", "Agent1", 1)

        def gen(messages):
            prompt = lm.chat_template(messages)
            return lm.generate([prompt], 64, record=False)[0].text

        start = time.perf_counter()
        asyncio.run(all_at_once(t, gen, LocaliserConfig(max_prompt_tokens=2048)))
        return (
            time.perf_counter() - start
        ) * 1000, "measured (embedded SmolLM2, 2048-token prompt, 64 new tokens)"
    measured = os.environ.get("BENCH_CORRECT_CALL_S")
    if measured:  # e.g. the s/trajectory of an eval log (tasks/correct/README.md)
        return float(measured) * 1000, f"given: BENCH_CORRECT_CALL_S={measured}"
    # A localisation call on the embedded model takes seconds on CPU; 1 s is a floor that
    # flatters nothing.
    return 1000.0, "assumed floor of 1 s per localisation call (BENCH_CORRECT_MODEL=1 measures one)"


def main() -> None:
    rng = np.random.default_rng(0)
    lat = {(n, k): _latency_ms(n, k, rng) for n in (1_000, 10_000) for k in (1, 10)}
    embed_ms = _query_embedding_ms()
    call_ms, how = _localisation_call_ms()
    print(f"{'schemata':>9} {'k':>3} {'retrieve ms':>12} {'bare matvec ms':>15} {'ratio':>7}")
    for (n, k), (ms, bare) in lat.items():
        print(f"{n:>9} {k:>3} {ms:>12.3f} {bare:>15.3f} {ms / bare:>6.1f}x")
    worst = max(lat[(10_000, 1)][0], lat[(10_000, 10)][0])
    print(f"goal <= 5 ms/query at 10k: {'PASS' if worst <= 5 else 'FAIL'} ({worst:.3f} ms)")
    print(
        f"query embedding (MiniLM, one new trajectory): {embed_ms:.1f} ms"
        if embed_ms is not None
        else "query embedding: MiniLM not installed"
    )
    print(f"localisation call: {call_ms:.0f} ms ({how})")
    print(
        f"retrieval share of localisation time: {worst / (worst + call_ms) * 100:.3f}% (goal <= 2 %: "
        f"{'PASS' if worst / (worst + call_ms) <= 0.02 else 'FAIL'})"
    )
    if embed_ms is not None:
        both = worst + embed_ms
        print(
            f"with embedding a new trajectory: {both / (both + call_ms) * 100:.2f}% "
            "(Who&When pool trajectories are embedded once when the cache is built)"
        )


if __name__ == "__main__":
    main()
