import asyncio
import math

import pytest
from inspect_ai.scorer import SampleScore, Score
from scipy.stats import binomtest

from scorers.localisation import (
    agent_correct,
    agent_key,
    localisation_scorer,
    score_localisation,
    step_correct,
    wilson_high,
    wilson_low,
)


def test_step_exact_is_integer_not_substring():
    assert step_correct(1, 1)
    assert not step_correct(12, 1)  # Who&When's `"1" in "12"` would accept this
    assert not step_correct(None, 0)
    assert not step_correct(True, 1)  # a bool is not a step


def test_step_tolerance():
    assert step_correct(3, 5, tolerance=2) and step_correct(7, 5, tolerance=2)
    assert not step_correct(8, 5, tolerance=2)
    with pytest.raises(ValueError):
        step_correct(1, 1, tolerance=-1)


def test_agent_key_and_match():
    assert agent_key("Orchestrator (thought)") == "orchestrator"
    assert agent_correct("web_surfer", "WebSurfer")
    assert not agent_correct("Expert", "Verification_Expert")
    assert not agent_correct(None, "X") and not agent_correct("", "")


def _scores(values):
    return [SampleScore(score=Score(value=v), sample_id=i) for i, v in enumerate(values)]


def test_wilson_metrics_hand_computed_and_scipy():
    # 3/10 at 95%: centre (0.3 + 1.96²/20)/(1 + 1.96²/10), hand-computed bounds 0.1078, 0.6032
    lo, hi = wilson_low()(_scores([1, 1, 1] + [0] * 7)), wilson_high()(_scores([1, 1, 1] + [0] * 7))
    assert lo == pytest.approx(0.1078, abs=1e-4) and hi == pytest.approx(0.6032, abs=1e-4)
    ref = binomtest(3, 10).proportion_ci(method="wilson")
    assert (lo, hi) == pytest.approx((ref.low, ref.high), abs=1e-9)


def test_wilson_edges():
    assert wilson_low()(_scores([0] * 5)) == 0.0 and wilson_high()(
        _scores([0] * 5)
    ) == pytest.approx(0.4345, abs=1e-4)
    assert wilson_high()(_scores([1] * 5)) == 1.0
    assert math.isnan(wilson_low()(_scores([])))
    with pytest.raises(ValueError, match="0/1"):
        wilson_low()(_scores([0.5]))


def test_score_reasons_for_invalid_predictions():
    s = score_localisation(
        {
            "agent": None,
            "step": None,
            "step_error": "no step: x",
            "agent_error": "unknown agent: 'Q'",
        },
        "A",
        2,
        1,
    )
    assert s.value["step"] == 0 and s.value["agent"] == 0 and s.value["step_within_k"] == 0
    assert "step wrong: no step" in s.explanation and "agent wrong: unknown agent" in s.explanation
    s = score_localisation({"agent": "a", "step": 3, "tokens": 10, "seconds": 0.5}, "A", 2, 1)
    assert s.value == {
        "step": 0.0,
        "step_within_k": 1.0,
        "agent": 1.0,
        "tokens": 10.0,
        "seconds": 0.5,
    }
    assert "step 3 != gold 2" in s.explanation


def test_scorer_without_prediction_scores_wrong():
    class State:
        metadata = {"mistake_agent": "A", "mistake_step": 0}
        sample_id = "s"

    s = asyncio.run(localisation_scorer(tolerance=0)(State(), None))
    assert s.value["step"] == 0 and "no prediction" in s.explanation
