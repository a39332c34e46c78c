"""The inspect solver: run one localisation method on a sample's trajectory."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from harness.constrained import check_formats, generate_args, reply_status
from methods.common import AnswerFormat
from methods.correct import (
    CorrectLocaliser,
    Localisation,
    LocaliserConfig,
    Trajectory,
    all_at_once,
    binary_search,
    first_step_baseline,
    most_frequent_agent_baseline,
    random_baseline,
    step_by_step,
)
from scorers.localisation import LOCALISATION_KEY

Method = Literal[
    "correct",
    "all_at_once",
    "step_by_step",
    "binary_search",
    "random",
    "first_step",
    "most_frequent_agent",
]
# Methods that need no model: what guessing gives.
_NO_MODEL = {
    "random": random_baseline,
    "first_step": first_step_baseline,
    "most_frequent_agent": most_frequent_agent_baseline,
}


def _to_chat(messages: list[dict[str, str]]) -> list[ChatMessage]:
    kinds = {
        "system": ChatMessageSystem,
        "user": ChatMessageUser,
        "assistant": ChatMessageAssistant,
    }
    return [kinds[m["role"]](content=m["content"]) for m in messages]


def check_answer_formats(formats: list[AnswerFormat]) -> int:
    """Validate every format a run decodes under, at task load, by the decoding engine's rules: a
    malformed one is an `AnswerFormatError` naming it before any model call (not a server 400
    mid-run). Returns how many distinct formats were checked."""
    return check_formats(formats)


class ModelGenerate:
    """Adapts an inspect Model to the methods' `generate(messages) -> str`, counting tokens.

    With `constrained=on` a reply with an answer format is decoded under it; either way each such
    reply is classed ok / truncated (cut by max_tokens) / format_failure in `reply_status`.
    """

    def __init__(self, model: Model, max_tokens: int) -> None:
        self.model = model
        self.config = GenerateConfig(max_tokens=max_tokens, temperature=0.0)
        self.tokens = 0
        self.calls = 0
        self.seconds = 0.0
        self.last_output: ModelOutput | None = None
        self.reply_status: dict[str, int] = {}

    async def __call__(
        self, messages: list[dict[str, str]], answer_format: AnswerFormat | None = None
    ) -> str:
        start = time.perf_counter()
        config = self.config.merge(GenerateConfig(**generate_args(answer_format)))
        output = await self.model.generate(_to_chat(messages), config=config)
        if answer_format is not None:
            status = reply_status(answer_format, output)
            self.reply_status[status] = self.reply_status.get(status, 0) + 1
        self.seconds += time.perf_counter() - start
        self.calls += 1
        if output.usage is not None:
            self.tokens += int(output.usage.total_tokens or 0)
        self.last_output = output
        return output.completion


@solver
def localise(
    method: Method,
    trajectories: Mapping[str, Trajectory],
    config: LocaliserConfig,
    localisers: Callable[[Trajectory], CorrectLocaliser] | None = None,
    max_new_tokens: int = 256,
    step_max_calls: int | None = None,
    schema_costs: Mapping[str, Mapping[str, Any]] = {},
) -> Solver:
    if method == "correct" and localisers is None:
        raise ValueError("method 'correct' needs the schema localisers")

    async def solve(state: TaskState, generate: Generate) -> TaskState:  # noqa: ARG001
        trajectory = trajectories[str(state.sample_id)]
        model_gen = ModelGenerate(get_model(), max_new_tokens)
        start = time.perf_counter()
        result: Localisation
        if method == "correct":
            assert localisers is not None
            localiser = localisers(trajectory)
            # Schemata are distilled lazily on first retrieval (teacher role); that offline-stage
            # cost stays out of the per-trajectory localisation time and tokens.
            for group, _ in localiser.neighbours(trajectory):
                for source in group:
                    await localiser.schema(source)
            start = time.perf_counter()
            result = await localiser.localise(trajectory, model_gen, config)
            distil = {"schema_costs": {s: dict(schema_costs.get(s, {})) for s in result.retrieved}}
        elif method == "all_at_once":
            result, distil = await all_at_once(trajectory, model_gen, config), {}
        elif method == "step_by_step":
            result, distil = (
                await step_by_step(trajectory, model_gen, config, max_calls=step_max_calls),
                {},
            )
        elif method == "binary_search":
            result, distil = await binary_search(trajectory, model_gen, config), {}
        else:
            result, distil = await _NO_MODEL[method](trajectory, None, config), {}
        seconds = time.perf_counter() - start
        p = result.prediction
        state.metadata[LOCALISATION_KEY] = {
            "agent": p.agent,
            "step": p.step,
            "agent_error": p.agent_error,
            "step_error": p.step_error,
            "reason": p.reason[:2000],
            "tokens": model_gen.tokens,
            "token_counter": getattr(
                config.count_tokens, "name", getattr(config.count_tokens, "__name__", "custom")
            ),
            "seconds": round(seconds, 4),
            "reply_status": dict(model_gen.reply_status),
            **distil,
            **result.summary(),
        }
        text = p.raw or f"Agent Name: {p.agent}\nStep Number: {p.step}"
        state.output = model_gen.last_output or ModelOutput.from_content(model="none", content=text)
        state.messages.append(ChatMessageAssistant(content=text))
        state.completed = True
        return state

    return solve
