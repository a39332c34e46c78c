"""M1-TTS: verify → (on False) edit the flagged region → verify …, at most ``max_rounds`` rounds;
and best-of-N with the same generation budget, the parallel test-time-scaling baseline.

The loop is generic: a *generator* makes a candidate from the prompt and edits a candidate given
the verifier's feedback (boxes = spatial action, ``EditAction`` = semantic action); a *verifier*
judges a candidate. Both are async callables, so a model behind inspect, a renderer, or a plain
function can sit behind them. A round = one generator call (generate or edit) + one verifier
call; ``max_rounds=10`` is the paper's cap. A candidate whose generation failed (``failure`` set)
is not shown to the verifier: the round counts, and the next round generates afresh.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from methods.omniverifier._parse import VerifierOutput

__all__ = [
    "MAX_ROUNDS",
    "Candidate",
    "Generator",
    "Round",
    "TTSResult",
    "Verify",
    "best_of_n",
    "m1_tts",
]

MAX_ROUNDS = 10


@dataclass
class Candidate:
    """A generated output (e.g. a scene and its image); ``failure`` when generation failed."""

    payload: Any
    failure: str | None = None
    text: str = ""  # what the generator wrote (for logs)


class Generator(Protocol):
    async def generate(self, prompt: str) -> Candidate: ...

    async def edit(
        self, prompt: str, previous: Candidate, feedback: VerifierOutput | None
    ) -> Candidate: ...


Verify = Callable[[str, Candidate], Awaitable[VerifierOutput]]


@dataclass
class Round:
    """One round: the candidate and the verifier's verdict on it (None if generation failed)."""

    candidate: Candidate
    verdict: VerifierOutput | None
    kind: str  # "generate" or "edit"


@dataclass
class TTSResult:
    """The final candidate, whether the verifier accepted it, and every round."""

    final: Candidate
    accepted: bool
    rounds: list[Round] = field(default_factory=list)

    @property
    def generator_calls(self) -> int:
        return len(self.rounds)

    @property
    def verifier_calls(self) -> int:
        return sum(r.verdict is not None for r in self.rounds)


def _check_rounds(max_rounds: int) -> None:
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be ≥ 1, got {max_rounds}")


async def m1_tts(
    prompt: str, generator: Generator, verify: Verify, *, max_rounds: int = MAX_ROUNDS
) -> TTSResult:
    """Generate, then verify and edit the flagged region until the verifier says True."""
    _check_rounds(max_rounds)
    rounds: list[Round] = []
    last_good: Candidate | None = None
    feedback: VerifierOutput | None = None
    for _ in range(max_rounds):
        if last_good is None:
            candidate, kind = await generator.generate(prompt), "generate"
        else:
            candidate, kind = await generator.edit(prompt, last_good, feedback), "edit"
        if candidate.failure is not None:
            rounds.append(Round(candidate, None, kind))
            continue
        verdict = await verify(prompt, candidate)
        rounds.append(Round(candidate, verdict, kind))
        last_good, feedback = candidate, verdict
        if verdict.answer is True:
            return TTSResult(candidate, True, rounds)
    final = last_good if last_good is not None else rounds[-1].candidate
    return TTSResult(final, False, rounds)


async def best_of_n(prompt: str, generator: Generator, verify: Verify, *, n: int) -> TTSResult:
    """Independent samples until the verifier accepts one, at most ``n`` (the same budget).

    With no accepted sample, the final one is the sample with the lowest verifier ``score``
    (higher = more likely wrong) when the verifier gives scores, else the first drawable one.
    Stopping at the first accepted sample selects the same way as drawing all ``n`` and taking
    any accepted one (the samples are exchangeable), at fewer generator calls.
    """
    _check_rounds(n)
    rounds: list[Round] = []
    for _ in range(n):
        candidate = await generator.generate(prompt)
        if candidate.failure is not None:
            rounds.append(Round(candidate, None, "generate"))
            continue
        verdict = await verify(prompt, candidate)
        rounds.append(Round(candidate, verdict, "generate"))
        if verdict.answer is True:
            return TTSResult(candidate, True, rounds)
    judged = [r for r in rounds if r.verdict is not None]
    if not judged:
        return TTSResult(rounds[0].candidate, False, rounds)
    scored = [
        (r.verdict.score, i, r)
        for i, r in enumerate(judged)
        if r.verdict is not None and r.verdict.score is not None
    ]
    best = min(scored, key=lambda t: (t[0], t[1]))[2] if scored else judged[0]
    return TTSResult(best.candidate, False, rounds)
