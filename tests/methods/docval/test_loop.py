"""The feedback loop (methods.docval._loop) on its own: checks, appliers, rounds and history."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from methods.docval import (
    Prediction,
    ValConfig,
    Validator,
    Verdict,
    Word,
    feedback_loop,
    gold_free_checker,
    history_entry,
    lines_from_words,
    oracle_checker,
)

WORDS = [
    Word("TOTAL:", (10, 100, 70, 112), 1.0, 0),
    Word("9.00", (300, 100, 340, 112), 1.0, 0),
    Word("CASH", (10, 130, 50, 142), 1.0, 1),
    Word("50.00", (300, 130, 350, 142), 1.0, 1),
]
REGIONS = lines_from_words(WORDS)
GOOD = Prediction("9.00", (298, 99, 342, 113), ["box [298, 99, 342, 113]"])
ON_OTHER_TEXT = Prediction("9.00", (300, 130, 350, 142))


class _Model:
    """A re-ask that replies from a list, recording the feedback it was given."""

    def __init__(self, replies: list[Prediction]) -> None:
        self.replies, self.seen = list(replies), []

    async def __call__(self, feedback: list[str]) -> tuple[Prediction, dict[str, Any]]:
        self.seen.append(feedback)
        return self.replies.pop(0), {"reply_status": "ok"}


def _run(first: Prediction, **kwargs: Any) -> tuple[Prediction, list[dict[str, Any]]]:
    history = [history_entry(first, round=0)]
    final = asyncio.run(feedback_loop(first, history, words=WORDS, **kwargs))
    return final, history


def test_a_passing_prediction_ends_the_loop_with_the_check_noted_on_its_entry() -> None:
    model = _Model([])
    check = gold_free_checker(WORDS, REGIONS, ValConfig())
    final, history = _run(GOOD, check=check, reask=model, applier="model", rounds=3)
    assert final == GOOD and model.seen == [] and len(history) == 1
    assert history[0]["gold_free"]["passed"] is True


def test_the_rule_applier_snaps_the_box_onto_the_predictions_own_answer() -> None:
    check = gold_free_checker(WORDS, REGIONS, ValConfig())
    final, history = _run(ON_OTHER_TEXT, check=check, reask=_Model([]), applier="rule", rounds=1)
    assert final.bbox == (300, 100, 340, 112)
    assert history[1]["applied"] == "snap box to own answer text" and history[1]["round"] == 1
    assert history[0]["gold_free"]["passed"] is False


def test_the_model_applier_asks_again_with_the_feedback_at_most_rounds_times() -> None:
    model = _Model([ON_OTHER_TEXT, ON_OTHER_TEXT, GOOD])
    check = gold_free_checker(WORDS, REGIONS, ValConfig())
    final, history = _run(ON_OTHER_TEXT, check=check, reask=model, applier="model", rounds=2)
    assert len(model.seen) == 2 and all(model.seen)  # the check's feedback, twice
    assert final == ON_OTHER_TEXT and [h["round"] for h in history] == [0, 1, 2]
    assert history[2]["reply_status"] == "ok"


def test_the_oracle_with_the_rule_applier_takes_vals_corrected_output() -> None:
    check = oracle_checker(
        Validator(ValConfig(), mode="verifier"), ["9.00"], (300, 100, 340, 112), REGIONS
    )
    wrong = Prediction("50.00", (300, 130, 350, 142), ["the cash line"])
    final, history = _run(wrong, check=check, reask=_Model([]), applier="rule", rounds=1)
    assert final.answer == "9.00" and final.bbox == (300, 100, 340, 112)
    assert history[0]["oracle_fixes"] and history[1]["applied"] == "oracle corrected output"


def test_a_check_without_feedback_stops_even_when_it_fails() -> None:
    def silent(_: Prediction) -> Verdict:
        return Verdict(passed=False, feedback=[])

    model = _Model([GOOD])
    final, history = _run(ON_OTHER_TEXT, check=silent, reask=model, applier="model", rounds=3)
    assert final == ON_OTHER_TEXT and model.seen == [] and len(history) == 1


def test_rounds_below_one_is_an_error_naming_the_option() -> None:
    with pytest.raises(ValueError, match="feedback_rounds must be at least 1"):
        _run(GOOD, check=lambda p: Verdict(True, []), reask=_Model([]), applier="rule", rounds=0)
