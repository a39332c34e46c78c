"""The real embedded model as the solver on one instance (bwrap, one short attempt, no
strengthening): the run completes and the model's patch is graded or scored as a failure with
its reason."""

from __future__ import annotations

import pytest

from .conftest import CLAMP, run_swe_abs

pytestmark = pytest.mark.embedded


def test_embedded_model_solves_and_is_graded(tmp_path, swe_abs_ready, embedded_dir):
    from inspect_ai.model import get_model

    log, [sample] = run_swe_abs(
        tmp_path,
        get_model("harness/default"),
        instances=CLAMP,
        max_tokens=64,  # a short reply: the model under test is what is exercised here
        tests_from="none",  # the strengthening has its own tests (test_all_instances.py)
        max_mutants=0,
        flaky_reruns=1,
    )
    assert sample.error is None
    score = sample.scores["swe_abs_scorer"]
    assert score.value["solver_ran"] == 1
    model = [c for c in sample.metadata["swe_abs"]["outcome"]["candidates"] if c["kind"] == "model"]
    assert len(model) == 1
    if score.value["solver_resolved"] == 0:  # the 135M model mostly fails: with a stated reason
        assert (
            score.metadata.get("solver_failure") or model[0]["f2p_failed"] or model[0]["p2p_failed"]
        )
    attempts = sample.metadata["swe_abs"]["solver"]["attempts"]
    assert len(attempts) == 1 and attempts[0]["reply"]
    assert log.results.scores[0].metrics["solver_resolved"].value == score.value["solver_resolved"]
    assert score.value["correct_prev_resolved"] >= 1  # the hand-written candidates were graded
