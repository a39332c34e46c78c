"""Over every bundled instance, one run of the model-free strengthening (small budgets for the
mutants and the characterisation search; the near inputs and the foreign probe at their
defaults), shared by the tests below: the gold patch resolves its instance and the base does
not, no correct candidate patch the project ships (its own and every outside set's,
``candidates=all_correct``) is ever rejected — by the original tests or by the strengthened
ones — and the strengthened tests do reject wrong patches (the own ones). A scripted solver
answers every instance: a correct fix for the clamp instance (graded before and after the
strengthening), prose elsewhere (a format failure, scored with its reason)."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import CLAMP, GOOD, run_swe_abs

# One run over 31 instances grading every own candidate and every outside correct patch (~280
# patches): longer than the suite's default per-test limit on a loaded 2-core machine, and heavy
# integration: `make test-full` (and CI) runs it, not `make test`.
pytestmark = [pytest.mark.timeout(2400), pytest.mark.full]

# Small budgets: the defaults (40 mutants, 200/150 Hypothesis examples, 3 gold reruns) are what
# the README's full run uses; the guarantee is the same rule applied to fewer generated tests.
BUDGET: dict[str, Any] = {
    "max_mutants": 8,
    "differential_examples": 30,
    "explore_examples": 30,
    "explore_tests": 4,
    "flaky_reruns": 2,
    # own candidates and every outside set's correct patches: the outside wrong ones (graded in
    # fresh trees, most of the time) are measured by the outside-set runs the README reports
    "candidates": "all_correct",
    "split": "all",  # every instance, dev and test projects
}


def _solver_reply(messages: Any) -> str:
    prompt = messages[-1].text
    return GOOD if "boltons/mathutils.py" in prompt else "I would rewrite the function."


@pytest.fixture(scope="module")
def all_run(tmp_path_factory, swe_abs_ready):  # noqa: ARG001 - the fixture skips when not set up
    from inspect_ai.model import get_model

    log, samples = run_swe_abs(
        tmp_path_factory.mktemp("swe_abs_all"),
        get_model("scripted/all_instances_solver", responder=_solver_reply),
        max_samples=4,
        **BUDGET,
    )
    return log, {s.id: s for s in samples}


def test_every_instance_ran_gold_resolves_base_fails(all_run):
    from tasks.swe_abs.dataset import BUNDLED, load_instances

    _, samples = all_run
    assert sorted(samples) == sorted(i.instance_id for i in load_instances(BUNDLED))
    problems = []
    for sid, s in samples.items():
        out = s.metadata["swe_abs"]["outcome"]
        if not out["gold_resolved"] or not out["base_fails_f2p"]:
            problems.append((sid, out["notes"]))
    assert problems == []


def test_no_correct_candidate_is_ever_rejected(all_run):
    log, samples = all_run
    problems = []
    n_correct = 0
    for sid, s in samples.items():
        for c in s.metadata["swe_abs"]["outcome"]["candidates"]:
            if c["kind"] != "correct":
                continue
            n_correct += 1
            if not (c["resolved_original"] and c["resolved_abs"]):
                problems.append((sid, c["system"], c["problem"], c["new_failed"],
                                 c["f2p_failed"], c["p2p_failed"]))  # fmt: skip
    assert problems == [] and n_correct >= len(samples)
    from tasks.swe_abs.outside import IN_ALL, OUTSIDE, load_outside, set_files

    every = [OUTSIDE, *(f for n in IN_ALL for f in set_files(n))]
    shipped = sum(c.kind == "correct" for f in every
                  for cands in load_outside(f).values() for c in cands)  # fmt: skip
    graded = sum(c["kind"] == "correct" and c.get("origin") == "outside"
                 for s in samples.values() for c in s.metadata["swe_abs"]["outcome"]["candidates"])  # fmt: skip
    assert graded == shipped
    assert log.results.scores[0].metrics["correct_rejected"].value == 0.0


def test_the_strengthened_tests_reject_wrong_patches(all_run):
    log, samples = all_run
    metrics = log.results.scores[0].metrics
    assert metrics["strengthened"].value > 0 and metrics["wrong_rejected"].value > 0
    accepted = sum(
        t["accepted"]
        for s in samples.values()
        for t in s.metadata["swe_abs"]["outcome"]["new_tests"]
    )
    assert accepted > len(samples)  # new tests on (nearly) every instance


def test_model_patch_resolved_before_and_after(all_run):
    _, samples = all_run
    s = samples[CLAMP]
    score = s.scores["swe_abs_scorer"]
    assert score.value["solver_resolved"] == 1 and score.value["solver_resolved_abs"] == 1
    assert "solver_failure" not in (score.metadata or {})
    out = s.metadata["swe_abs"]["outcome"]
    assert any(t["accepted"] for t in out["new_tests"])  # graded under a strengthened suite
    [model] = [c for c in out["candidates"] if c["kind"] == "model"]
    assert model["resolved_original"] and model["resolved_abs"]
    # prose instead of a fix: a scored format failure
    other = samples["pytoolz__toolz-interpose-empty"].scores["swe_abs_scorer"]
    assert other.value["solver_resolved"] == 0
    assert other.metadata["solver_failure"].startswith("format")
