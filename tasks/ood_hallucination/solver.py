"""Solver: answer through the white-box handle and score every detector on the answer's tokens.

Two ways to get the per-token features (``features=``):

- ``"generate"`` (the paper): greedy generation through ``WhiteBoxLM.generate(record=True)``,
  which records the LM head's input and logits at each generated token. inspect's ``generate``
  is not called; the answer is written into ``state.output``/``state.messages`` for the log.
- ``"teacher_forced"``: the answer comes from the model under test through inspect (e.g. served
  by vLLM), and the white-box copy of the same weights re-reads prompt + answer in one forward
  pass. For greedy decoding with the same weights the features are the same up to numerics.
- ``"greybox"``: no weights at all; the answer and its top-k logprobs come from the model under
  test through inspect (an API, vLLM), and only the grey-box baselines (perplexity, MSP,
  truncated entropy) are computed.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import numpy as np
from inspect_ai.model import ChatMessageAssistant, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from harness.models import whitebox_for_model
from methods.common import MicroBatcher
from methods.ood import HallucinationDetector, LMHead, TokenTrace, greybox_scores, score_all

__all__ = ["FeatureMode", "OOD_KEY", "whitebox_answer"]

FeatureMode = Literal["generate", "teacher_forced", "greybox"]
OOD_KEY = "ood"  # state.metadata[OOD_KEY] holds the detector results for the scorer

_HEADS: dict[int, LMHead] = {}


_BATCHERS: dict[tuple[int, int, int], MicroBatcher[str, Any]] = {}


def _batcher_for(lm: Any, max_new_tokens: int, batch_size: int) -> MicroBatcher[str, Any]:
    """Concurrent samples' prompts generated as one batch (recording features).

    ``batch_size=1`` generates each prompt alone, at once (no padding: features exactly as a
    single request would give); larger batches wait 50 ms for company and left-pad, which
    changes features only by float noise and is 2–3× faster on CPU.
    """
    key = (id(lm), max_new_tokens, batch_size)
    b = _BATCHERS.get(key)
    if b is None or not b.serves_running_loop():

        def run(prompts: list[str]) -> list[Any]:
            return lm.generate(prompts, max_new_tokens, record=True, batch_size=len(prompts))

        b = _BATCHERS[key] = MicroBatcher(run, batch_size=batch_size, wait_s=0.05, wait_alone=False)
    return b


def _head_for(lm: Any) -> LMHead:
    # z* needs a least-squares solve when the head has a bias: do it once per model.
    key = id(lm)
    if key not in _HEADS:
        _HEADS[key] = LMHead.from_whitebox(lm)
    return _HEADS[key]


def _teacher_forced_trace(lm: Any, prompt: str, answer: str) -> tuple[TokenTrace, int]:
    """Trace of ``answer`` (+ EOS, as generation would emit it) after ``prompt``."""
    eos = lm.tokenizer.eos_token or ""
    n_prompt = len(lm.tokenizer(prompt, add_special_tokens=False)["input_ids"])
    out = lm.forward([prompt + answer + eos])[0]
    ids = np.asarray(out.token_ids)
    # Row t of logits/features predicts token t+1.
    return TokenTrace(
        out.features[n_prompt - 1 : -1], out.logits[n_prompt - 1 : -1], ids[n_prompt:]
    ), n_prompt


@solver
def whitebox_answer(
    detectors: list[HallucinationDetector],
    max_new_tokens: int = 64,
    features: FeatureMode = "generate",
    system_prompt: str | None = None,
    batch_size: int = 1,
    top_logprobs: int = 20,
) -> Solver:
    """Answer the sample and store each detector's confidence in ``state.metadata["ood"]``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if features == "greybox":
            return await _solve_greybox(state, generate, detectors, max_new_tokens, top_logprobs)
        model_name = str(get_model())
        lm = await asyncio.to_thread(whitebox_for_model, model_name)
        head = _head_for(lm)
        for d in detectors:
            if d.head is not head:
                d.fit(head)
        prompt = lm.chat_prompt(state.input_text, system=system_prompt)
        result: dict[str, Any] = {"features": features, "whitebox": lm.name}
        if features == "generate":
            gen = await _batcher_for(lm, max_new_tokens, batch_size).submit(prompt)
            text = gen.text
            trace = TokenTrace.from_generation(gen)
            result.update(finish_reason=gen.finish_reason, prompt_tokens=gen.prompt_tokens)
            state.output = ModelOutput.from_content(
                model=model_name,
                content=text,
                stop_reason="stop" if gen.finish_reason == "stop" else "max_tokens",
            )
            state.messages.append(ChatMessageAssistant(content=text, model=model_name))
        elif features == "teacher_forced":
            state = await generate(state, max_tokens=max_new_tokens)
            text = state.output.completion
            trace, n_prompt = await asyncio.to_thread(_teacher_forced_trace, lm, prompt, text)
            result.update(finish_reason=state.output.stop_reason, prompt_tokens=n_prompt)
        else:
            raise ValueError(
                f"unknown features mode {features!r}; expected 'generate', "
                "'teacher_forced' or 'greybox'"
            )
        result["n_tokens"] = trace.length
        if trace.length == 0:
            result["confidence"] = {d.name: None for d in detectors}
            result["error"] = "the model generated no tokens; no detector score"
        else:
            result["confidence"] = await asyncio.to_thread(score_all, detectors, trace)
        state.metadata[OOD_KEY] = result
        return state

    return solve


async def _solve_greybox(
    state: TaskState,
    generate: Generate,
    detectors: list[HallucinationDetector],
    max_new_tokens: int,
    top_logprobs: int,
) -> TaskState:
    state = await generate(
        state, logprobs=True, top_logprobs=top_logprobs, max_tokens=max_new_tokens
    )
    choice = state.output.choices[0] if state.output and state.output.choices else None
    content = choice.logprobs.content if choice is not None and choice.logprobs else []
    result: dict[str, Any] = {
        "features": "greybox",
        "finish_reason": state.output.stop_reason,
        "n_tokens": len(content),
    }
    missing_top = [i for i, lp in enumerate(content) if not lp.top_logprobs]
    if not content or missing_top:
        why = (
            "the model returned no logprobs"
            if not content
            else f"the model returned no top_logprobs at token {missing_top[0]}"
        )
        result["confidence"] = {d.name: None for d in detectors}
        result["error"] = f"{why} (grey-box detectors need logprobs=True, top_logprobs=k)"
    else:
        k = max(len(lp.top_logprobs or []) for lp in content)
        top = np.full((len(content), k), -np.inf)
        for i, lp in enumerate(content):
            vals = [t.logprob for t in lp.top_logprobs or []]
            top[i, : len(vals)] = vals
        chosen = np.array([lp.logprob for lp in content])
        scores = greybox_scores(
            chosen, top, aggregation=detectors[0].aggregation, last_k=detectors[0].last_k
        )
        result["confidence"] = {d.name: scores[d.name] for d in detectors}
        result["top_logprobs"] = k
    state.metadata[OOD_KEY] = result
    return state
