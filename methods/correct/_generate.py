"""The model interface methods use: chat messages in, text out, sync or async.

A `generate` may also take the keyword `answer_format` (an `AnswerFormat`, declared next to the
parser of the reply): a caller that decodes under constraints enforces it; a `generate` without
that keyword is called without it.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from methods.common import AnswerFormat, takes_answer_format

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": str}
Generate = Callable[[list[Message]], str | Awaitable[str]]


@dataclass
class CallLog:
    """What one localisation spent: model calls, prompt/completion characters, wall seconds."""

    calls: int = 0
    prompt_chars: int = 0
    completion_chars: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


async def call_model(
    generate: Generate,
    messages: list[Message],
    log: CallLog | None = None,
    answer_format: AnswerFormat | None = None,
) -> str:
    """Call `generate` (plain function or coroutine function) and account for it in `log`;
    `answer_format` is passed on when `generate` takes it."""
    start = time.perf_counter()
    if answer_format is not None and takes_answer_format(generate):
        reply = generate(messages, answer_format=answer_format)  # type: ignore[call-arg]
    else:
        reply = generate(messages)
    if inspect.isawaitable(reply):
        reply = await reply
    if not isinstance(reply, str):
        raise TypeError(f"generate must return str, got {type(reply).__name__}")
    if log is not None:
        log.calls += 1
        log.prompt_chars += sum(len(m.get("content", "")) for m in messages)
        log.completion_chars += len(reply)
        log.seconds += time.perf_counter() - start
    return reply


def messages(user: str, system: str | None = None) -> list[Message]:
    out: list[Message] = []
    if system:
        out.append({"role": "system", "content": system})
    out.append({"role": "user", "content": user})
    return out
