"""constrained=on on the real embedded SmolLM2: every verifier reply is in the M1 format."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval

from harness.constrained import CONSTRAINED_ENV
from tasks.omniverifier.solver import TTS_KEY
from tasks.omniverifier.task import omniverifier

pytestmark = pytest.mark.embedded


def _run(task):
    log = inspect_eval(task, model="harness/default", display="none", log_dir=None)[0]
    assert log.status == "success", log.error
    return log


def test_constrained_verify_replies_all_have_the_m1_format(embedded_dir, monkeypatch) -> None:
    monkeypatch.setenv(CONSTRAINED_ENV, "on")  # read when the task builds its solver
    log = _run(omniverifier(n=2, max_tokens=128))
    for s in log.samples:
        score = s.scores["verification_scorer"]
        assert score.value["format"] == 1.0, s.output.completion
        assert score.answer in ("true", "false"), s.output.completion
        assert s.output.completion.startswith("<think>")


def test_constrained_tts_verifier_calls_always_give_a_verdict(embedded_dir, monkeypatch) -> None:
    monkeypatch.setenv(CONSTRAINED_ENV, "on")
    log = _run(
        omniverifier(
            mode="tts", n=1, verifier="model", generator="simulated", max_rounds=2, max_tokens=128
        )
    )
    counts = log.samples[0].metadata[TTS_KEY]["verifier"]
    calls = counts["tp"] + counts["fp"] + counts["fn"] + counts["tn"] + counts["no_verdict"]
    assert calls >= 2 and counts["no_verdict"] == 0, counts
