"""The feedback loop: check the prediction, and while a check fails, apply its feedback.

Generic over two small protocols, so the loop runs without inspect: a *check* judges a
prediction (label-free: :func:`gold_free_checker`; VAL's gold verifier, a leakage control:
:func:`oracle_checker`), and a *re-ask* hands the feedback to the model and returns its next
prediction (the task wires a model behind it). With ``applier="rule"`` no model is asked: the box
is snapped onto the prediction's own answer text, or, when the check carries a corrected output
(the oracle), that output replaces the prediction.

Every round leaves an entry in ``history`` (the first prediction's entry is the caller's): the
prediction, its round, and what was applied or how the reply was classed; each check's notes
(``gold_free`` report, ``oracle_fixes``) are added to the entry of the prediction it checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from methods.docval._gold_free import gold_free_check, snap_to_answer
from methods.docval._types import Prediction, Region, Word
from methods.docval._validator import ValConfig, Validator

Applier = Literal["model", "rule"]


@dataclass(frozen=True)
class Verdict:
    """A check's result: whether the prediction passed, the feedback to apply, what the history
    records of the check, and (oracle only) the corrected prediction."""

    passed: bool
    feedback: list[str]
    notes: dict[str, Any] = field(default_factory=dict)
    corrected: Prediction | None = None


class Check(Protocol):
    def __call__(self, prediction: Prediction) -> Verdict: ...


class Reask(Protocol):
    async def __call__(self, feedback: list[str]) -> tuple[Prediction, dict[str, Any]]:
        """The model's next prediction given ``feedback``, and fields for its history entry."""
        ...


def history_entry(prediction: Prediction, **extra: Any) -> dict[str, Any]:
    """One history entry: the prediction as a dict and the round's fields."""
    return {**prediction.to_dict(), **extra}


def gold_free_checker(words: Sequence[Word], regions: Sequence[Region], config: ValConfig) -> Check:
    """Label-free checks only (:func:`~methods.docval._gold_free.gold_free_check`)."""

    def check(prediction: Prediction) -> Verdict:
        report = gold_free_check(prediction, words, regions, config=config)
        return Verdict(report.passed, report.feedback, {"gold_free": report.to_dict()})

    return check


def oracle_checker(
    validator: Validator,
    answers: list[str],
    gold_box: tuple[float, float, float, float],
    regions: Sequence[Region],
) -> Check:
    """VAL's verifier against the gold answer and box: its feedback leaks the label (a control)."""

    def check(prediction: Prediction) -> Verdict:
        report = validator.validate(prediction, answers, gold_box, regions)
        co = None if report.passed else report.corrected_output
        corrected = (
            None
            if co is None
            else Prediction(co["answer"], tuple(co["bbox"]), list(co["reasoning"]))
        )
        fixes = report.priority_fixes
        return Verdict(report.passed, fixes, {"oracle_fixes": fixes}, corrected)

    return check


async def feedback_loop(
    prediction: Prediction,
    history: list[dict[str, Any]],
    *,
    check: Check,
    reask: Reask,
    applier: Applier,
    rounds: int,
    words: Sequence[Word],
) -> Prediction:
    """At most ``rounds`` rounds of check → apply; returns the final prediction. ``history``
    holds the first prediction's entry and gains one per applied round."""
    if rounds < 1:
        raise ValueError(f"feedback_rounds must be at least 1, got {rounds}")
    for r in range(1, rounds + 1):
        verdict = check(prediction)
        history[-1].update(verdict.notes)
        if applier == "rule" and verdict.corrected is not None:
            prediction = verdict.corrected
            history.append(history_entry(prediction, round=r, applied="oracle corrected output"))
            continue
        if verdict.passed or not verdict.feedback:
            break
        if applier == "rule":
            prediction = snap_to_answer(prediction, words)
            history.append(
                history_entry(prediction, round=r, applied="snap box to own answer text")
            )
            continue
        prediction, fields = await reask(verdict.feedback)
        history.append(history_entry(prediction, round=r, **fields))
    return prediction
