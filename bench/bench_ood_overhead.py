"""Per-token overhead of the ood_hallucination detectors during generation (goal ≤ +2 %).

Same prompts, same greedy continuations, three ways, interleaved and repeated (median):
  plain    WhiteBoxLM.generate(record=False)
  record   generate(record=True): LM-head inputs and logits kept per token
  detect   record + every default detector (NCI, fDBD@1/100/1000, perplexity, MSP, entropy, energy)
Prints ms per generated token and the ratios against `plain` measured in this process, both in
wall time and in this process's CPU time (1 torch thread: CPU time is what the work costs and is
far less sensitive than wall time to other jobs on a shared machine).
The paper reports +2.4 % for fDBD on Llama-3.2-3B on a GPU (31.94 → 32.71 ms/token).

Env: BENCH_PROMPTS (8), BENCH_TOKENS (32), BENCH_REPEATS (3), BENCH_BATCH (1).
"""

from __future__ import annotations

import os
import statistics
import time

import torch

from harness.models import WhiteBoxLM
from methods.ood import DEFAULT_DETECTORS, LMHead, TokenTrace, make_detector, score_all
from tasks.ood_hallucination.dataset import generate_records, generated_record_to_sample


def main() -> None:
    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "1")))
    n_prompts = int(os.environ.get("BENCH_PROMPTS", "8"))
    max_tokens = int(os.environ.get("BENCH_TOKENS", "32"))
    repeats = int(os.environ.get("BENCH_REPEATS", "3"))
    batch = int(os.environ.get("BENCH_BATCH", "1"))

    lm = WhiteBoxLM.shared("default")
    head = LMHead.from_whitebox(lm)
    detectors = [make_detector(s).fit(head) for s in DEFAULT_DETECTORS]
    prompts = [
        lm.chat_prompt(generated_record_to_sample(r).input)
        for r in generate_records(n_prompts, seed=1)
    ]
    lm.generate(prompts[:1], 4, record=True)  # warm-up

    def plain() -> int:
        return sum(
            len(g.token_ids)
            for g in lm.generate(prompts, max_tokens, record=False, batch_size=batch)
        )

    def record() -> int:
        return sum(
            len(g.token_ids)
            for g in lm.generate(prompts, max_tokens, record=True, batch_size=batch)
        )

    score_time = [0.0]

    def detect() -> int:
        gens = lm.generate(prompts, max_tokens, record=True, batch_size=batch)
        t0 = time.process_time()
        for g in gens:
            score_all(detectors, TokenTrace.from_generation(g))
        score_time[0] += time.process_time() - t0
        return sum(len(g.token_ids) for g in gens)

    modes = {"plain": plain, "record": record, "detect": detect}
    per_token: dict[str, list[float]] = {m: [] for m in modes}
    cpu_per_token: dict[str, list[float]] = {m: [] for m in modes}
    tokens: dict[str, int] = {}
    score_per_token: list[float] = []
    for _ in range(repeats):
        for name, fn in modes.items():  # interleaved: load drifts hit every mode alike
            score_time[0] = 0.0
            t0, c0 = time.perf_counter(), time.process_time()
            n = fn()
            elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
            tokens[name] = n
            per_token[name].append(1000.0 * elapsed / n)
            cpu_per_token[name].append(1000.0 * cpu / n)
            if name == "detect":
                score_per_token.append(1000.0 * score_time[0] / n)
    if len(set(tokens.values())) != 1:
        raise SystemExit(f"greedy continuations differ between modes: {tokens}")
    med = {m: statistics.median(v) for m, v in per_token.items()}
    cpu = {m: statistics.median(v) for m, v in cpu_per_token.items()}
    score_med = statistics.median(score_per_token)
    print(
        f"prompts={n_prompts} max_new_tokens={max_tokens} batch={batch} repeats={repeats} "
        f"tokens/run={tokens['plain']} detectors={len(detectors)}"
    )
    for m in modes:
        print(
            f"  {m:7s} wall {med[m]:8.2f} ms/token  cpu {cpu[m]:8.2f} ms/token  "
            f"(wall runs: {', '.join(f'{x:.1f}' for x in per_token[m])})"
        )
    print(
        f"  detector maths alone (cpu): {score_med:.3f} ms/token "
        f"= {100.0 * score_med / cpu['plain']:+.2f} % of plain generation's cpu time"
    )
    print(
        f"ratio record/plain  wall {med['record'] / med['plain']:.3f}  cpu {cpu['record'] / cpu['plain']:.3f}"
    )
    print(
        f"ratio detect/plain  wall {med['detect'] / med['plain']:.3f}  cpu {cpu['detect'] / cpu['plain']:.3f}"
        "  (goal ≤ 1.02; paper 1.024 on GPU)"
    )


if __name__ == "__main__":
    main()
