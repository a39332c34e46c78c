"""The task on the real embedded SmolLM2 (a few samples; slow on CPU)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from methods.ood import DEFAULT_DETECTORS
from tasks.ood_hallucination.solver import _teacher_forced_trace
from tasks.ood_hallucination.task import ood_hallucination

pytestmark = pytest.mark.embedded


def _run(task, limit: int):
    log = inspect_eval(task, model="harness/default", limit=limit, display="none", log_dir=None)[0]
    assert log.status == "success", log.error
    return log


def test_embedded_generated_questions(embedded_dir) -> None:
    log = _run(ood_hallucination(n_boot=20), limit=3)
    for s in log.samples:
        value = s.scores["hallucination_detection"].value
        assert value["correct"] + value["hallucinated"] == 1.0
        assert all(math.isfinite(value[d]) for d in DEFAULT_DETECTORS)
        assert s.output.completion and s.metadata["ood"]["n_tokens"] > 0
        # NCI of a bias-free head is a cosine times ‖w‖: bounded by the largest row norm.
        assert abs(value["nci"]) < 50
    assert 0.0 <= log.results.scores[0].metrics["accuracy"].value <= 1.0


def test_gsm8k_data_end_to_end(data_dir, embedded_dir) -> None:
    log = _run(ood_hallucination(dataset="gsm8k", max_new_tokens=40, n_boot=20), limit=2)
    assert [s.target for s in log.samples] == ["18", "3"]
    assert all(
        s.scores["hallucination_detection"].answer is not None
        or "counted wrong" in s.scores["hallucination_detection"].explanation
        for s in log.samples
    )


def test_teacher_forced_features_match_generation(embedded_dir) -> None:
    from harness.models import WhiteBoxLM

    # float32: in bf16 the cached (generation) and uncached (teacher-forced) paths round
    # differently, and features differ by up to ~2 % of their scale though tokens agree.
    lm = WhiteBoxLM.shared("default", dtype="float32")
    prompt = lm.chat_prompt("What is 7 times 6?\nEnd your reply with 'The answer is N'.")
    gen = lm.generate([prompt], 16, record=True, batch_size=1)[0]
    trace, _ = _teacher_forced_trace(lm, prompt, gen.text)
    n = min(trace.length, len(gen.token_ids))
    assert n >= 4
    assert list(trace.token_ids[:n]) == gen.token_ids[:n]
    assert np.allclose(trace.features[:n], gen.features[:n], atol=2e-3, rtol=1e-3)
