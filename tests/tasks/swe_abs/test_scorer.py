"""The per-instance Score and the pooled run metrics, on hand-computed outcomes."""

from __future__ import annotations

import pytest
from inspect_ai.scorer import SampleScore

from tasks.swe_abs.scorer import (
    correct_rejected,
    coverage_after,
    rank_moves,
    rejected,
    score_outcome,
    solver_drop,
    solver_resolved,
    spearman,
    strengthened,
    wrong_rejected,
)


def cand(system, kind, orig, abs_, problem=None):
    return {"system": system, "kind": kind, "resolved_original": orig, "resolved_abs": abs_,
            "problem": problem, "detail": ""}  # fmt: skip


def outcome(cands, cov=(0.5, 1.0), mutants=()):
    return {
        "instance_id": "x",
        "candidates": cands,
        "strengthened": any(c["resolved_original"] and not c["resolved_abs"] for c in cands),
        "coverage_before": cov[0],
        "coverage_after": cov[1],
        "mutants": list(mutants),
        "new_tests": [{"accepted": True}, {"accepted": False}],
        "flaky_original": ["t1"],
        "flaky_new": [],
        "gold_resolved": True,
        "seconds": 1.0,
    }


def test_score_of_one_instance():
    o = outcome(
        [
            cand("refactor", "correct", True, True),
            cand("w1", "wrong", True, False),
            cand("w2", "wrong", False, False),
            cand("model:m", "model", True, True),
        ],  # fmt: skip
        mutants=[
            {"status": "killed_original"},
            {"status": "survived"},
            {"status": "killed_new"},
            {"status": "equivalent_search"},
        ],  # fmt: skip
    )
    s = score_outcome(o, solver={"format_failure": False})
    v = s.value
    assert v["strengthened"] == 1 and v["prev_resolved"] == 3 and v["rejected"] == 1
    assert (v["wrong_prev_resolved"], v["wrong_rejected"]) == (1, 1)
    assert (v["correct_prev_resolved"], v["correct_rejected"]) == (1, 0)
    assert v["solver_ran"] == 1 and v["solver_resolved"] == 1 and v["solver_resolved_abs"] == 1
    assert (v["mutants"], v["mutants_survived"], v["mutants_killed_new"]) == (3, 2, 1)
    assert v["new_tests"] == 1 and v["flaky"] == 1
    assert v["sys:w1:orig"] == 1 and v["sys:w1:abs"] == 0
    assert "solver_failure" not in s.metadata


def test_malformed_solver_patch_is_a_scored_failure():
    o = outcome([cand("model:m", "model", False, False, problem="does_not_apply")])
    s = score_outcome(o, solver={"format_failure": False})
    assert s.metadata["solver_failure"].startswith("does_not_apply")
    s = score_outcome(outcome([cand("model:m", "model", False, False, problem="empty")]),
                      solver={"format_failure": True})  # fmt: skip
    assert s.metadata["solver_failure"].startswith("format")


def test_pooled_metrics():
    a = score_outcome(outcome([cand("r", "correct", True, True), cand("w", "wrong", True, False),
                               cand("model:m", "model", True, False)]), solver={})  # fmt: skip
    b = score_outcome(outcome([cand("r", "correct", True, True), cand("w", "wrong", True, True),
                               cand("model:m", "model", False, False)], cov=(0.0, 0.5)),
                      solver={})  # fmt: skip
    scores = [SampleScore(score=a, sample_id=1), SampleScore(score=b, sample_id=2)]
    assert strengthened()(scores) == 0.5
    assert rejected()(scores) == pytest.approx(2 / 5)
    assert wrong_rejected()(scores) == pytest.approx(1 / 2)
    assert correct_rejected()(scores) == 0.0
    assert solver_resolved()(scores) == 0.5 and solver_drop()(scores) == 0.5
    assert coverage_after()(scores) == pytest.approx(0.75)
    # systems: r 2→2, w 2→1, model 1→0: ranks r1 w2 m3 before; r1 w2 m3 after
    assert rank_moves()(scores) == 0.0 and spearman()(scores) == pytest.approx(1.0)


def test_rejection_rate_on_every_candidate_set_beside_strengthened():
    """Issue 27, item 6: "strengthened" depends on which candidates were graded, so the new
    tests' rejection rate is reported per candidate set (own, outside, model) beside it."""
    from tasks.swe_abs.scorer import (
        correct_rejected_outside,
        rejected_model,
        rejected_outside,
        rejected_own,
        wrong_rejected_outside,
    )

    def c(system, kind, orig, abs_, origin):
        return {**cand(system, kind, orig, abs_), "origin": origin}

    a = score_outcome(outcome([c("o1", "wrong", True, False, "own"),
                               c("x1", "wrong", True, True, "outside"),
                               c("x2", "wrong", True, False, "outside"),
                               c("x3", "correct", True, True, "outside"),
                               cand("model:m", "model", True, False)]), solver={})  # fmt: skip
    v = a.value
    assert (v["set_own_prev_resolved"], v["set_own_rejected"]) == (1, 1)
    assert (v["set_outside_wrong_prev_resolved"], v["set_outside_wrong_rejected"]) == (2, 1)
    assert (v["set_outside_correct_prev_resolved"], v["set_outside_correct_rejected"]) == (1, 0)
    assert (v["set_model_prev_resolved"], v["set_model_rejected"]) == (1, 1)  # no origin: its kind
    scores = [SampleScore(score=a, sample_id=1)]
    assert strengthened()(scores) == 1.0
    assert rejected_own()(scores) == 1.0 and rejected_model()(scores) == 1.0
    assert rejected_outside()(scores) == pytest.approx(1 / 3)
    assert wrong_rejected_outside()(scores) == 0.5 and correct_rejected_outside()(scores) == 0.0
