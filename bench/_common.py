"""Shared pieces of the benchmarks: the workload and a vLLM server on the embedded model."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PROMPTS = [f"Write one sentence about the number {n}." for n in range(1, 65)]
MAX_TOKENS = 64


def start_embedded_server(dtype: str | None = None):
    """vLLM on the embedded model; `dtype` None leaves the choice to `start_vllm_server`."""
    from harness.models.embedded import EMBEDDED_NAME, embedded_model_dir
    from harness.models.vllm_server import start_vllm_server

    options = {} if dtype is None else {"dtype": dtype}
    return start_vllm_server(
        embedded_model_dir(), served_model_name=EMBEDDED_NAME, max_model_len=2048, **options
    )


def prompt_task(prompts: list[str]):
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import Score, mean, scorer
    from inspect_ai.solver import generate

    @scorer(metrics=[mean()])
    def _tokens():
        async def score(state, target):  # noqa: ARG001
            return Score(value=state.output.usage.output_tokens if state.output.usage else 0)

        return score

    return Task(
        dataset=[Sample(id=i, input=p) for i, p in enumerate(prompts)],
        solver=[generate()],
        scorer=_tokens(),
    )


def inspect_throughput(
    model, prompts: list[str], concurrency: int, log_dir: str
) -> tuple[float, int, float]:
    """(tokens/s over the sample span, completion tokens, seconds) of one inspect eval."""
    from inspect_ai import eval

    [log] = eval(
        prompt_task(prompts),
        model=model,
        max_connections=concurrency,
        max_samples=concurrency,
        max_tokens=MAX_TOKENS,
        temperature=0.0,
        log_dir=log_dir,
        display="none",
    )
    assert log.status == "success", log.error
    tokens = sum(s.output.usage.output_tokens for s in log.samples)
    starts = [s.started_at for s in log.samples]
    ends = [s.completed_at for s in log.samples]
    from datetime import datetime

    span = (
        max(datetime.fromisoformat(e) for e in ends)
        - min(datetime.fromisoformat(s) for s in starts)
    ).total_seconds()
    return tokens / span, tokens, span
