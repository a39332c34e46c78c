"""The task on the real embedded SmolLM2 (text-only: the detector's object list; a few samples)."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval

from tasks.omniverifier.task import omniverifier

pytestmark = pytest.mark.embedded


def _run(task):
    log = inspect_eval(task, model="harness/default", display="none", log_dir=None)[0]
    assert log.status == "success", log.error
    return log


def test_embedded_verify_scores_every_reply(embedded_dir) -> None:
    log = _run(omniverifier(n=2, max_tokens=48))
    for s in log.samples:
        assert s.output.completion  # the model wrote something
        score = s.scores["verification_scorer"]
        value = score.value
        # Either a usable verdict, or a scored failure with its reason — never an error.
        assert (score.answer in ("true", "false")) or score.metadata["failure"]
        assert value["judgment"] in (0.0, 1.0) and value["format"] in (0.0, 1.0)
        assert "Detected objects" in s.messages[0].text


def test_embedded_yes_no_and_tts_loop_end_to_end(embedded_dir) -> None:
    log = _run(omniverifier(n=2, reply_format="yes_no", max_tokens=8))
    assert all(s.scores["verification_scorer"].value["format"] == 0.0 for s in log.samples)
    tts = _run(
        omniverifier(mode="tts", n=1, verifier="classical", max_rounds=2, generator_max_tokens=96)
    )
    value = tts.samples[0].scores["tts_scorer"].value
    assert 1 <= value["tts_calls"] <= 2 and 1 <= value["bon_calls"] <= 2
    assert value["tts_success"] in (0.0, 1.0)
