"""The LLM stages on scripted roles: a model-written mutant judged valid, survives the original
tests and is killed by a model-written test that passes on gold; unusable mutant and judge replies
are recorded with their reason; the new test also rejects the hand-written wrong patch it covers."""

from __future__ import annotations

from .conftest import CLAMP, run_swe_abs

STRICT_MUTANT = '''```python
def clamp(x, lower=float('-inf'), upper=float('inf')):
    """Limit a value to a given range."""
    if upper <= lower:
        raise ValueError('expected upper bound (%r) >= lower bound (%r)' % (upper, lower))
    return min(max(x, lower), upper)
```'''
KILLING_TEST = """```python
from boltons.mathutils import clamp


def test_equal_bounds_are_allowed():
    assert clamp(7, 2, 2) == 2
```"""
USELESS_TEST = """```python
from boltons.mathutils import clamp


def test_nothing_new():
    assert clamp(1, 0, 2) == 1
```"""


def test_model_mutant_judge_and_killing_test(tmp_path, swe_abs_ready):
    from inspect_ai.model import get_model

    mutator = get_model("scripted/mutator", replies=[STRICT_MUTANT, "I cannot think of one."])
    judge = get_model("scripted/judge", replies=["Relevance: Yes\nMutation Validity: Yes"])
    calls: list[int] = []

    def tester_reply(messages):  # the first test kills nothing; every later one kills the mutant
        calls.append(1)
        return USELESS_TEST if len(calls) == 1 else KILLING_TEST

    tester = get_model("scripted/tester", responder=tester_reply)
    log, [sample] = run_swe_abs(
        tmp_path,
        get_model("scripted/solver", reply="no idea"),
        roles={"mutator": mutator, "judge": judge, "tester": tester},
        instances=CLAMP,
        solver="none",
        tests_from="model",
        mutants_from="model",
        model_mutants=2,
        retries=2,
        flaky_reruns=2,
    )
    assert sample.error is None, sample.error.message if sample.error else None
    out = sample.metadata["swe_abs"]["outcome"]
    mutants = {m["id"]: m for m in out["mutants"]}
    assert mutants["model-0"]["status"] == "killed_new", mutants["model-0"]
    assert mutants["model-1"]["status"] == "does_not_apply"
    assert out["coverage_before"] == 1.0  # the slice is covered: stage 1 asks nothing
    tests = {(t["name"], t["origin"]): t for t in out["new_tests"]}
    assert set(tests) == {("test_equal_bounds_are_allowed", "model_mutant")}
    killing = tests[("test_equal_bounds_are_allowed", "model_mutant")]
    assert killing["accepted"] and killing["kills"] == ["model-0"]
    # the first test written for the mutant did not kill it: the retry was prompted with why
    phases = [(e["role"], e["phase"], e.get("failure")) for e in out["model_events"]]
    assert ("tester", "mutant", "mutant") in phases and ("judge", "equivalence", None) in phases
    candidates = {c["system"]: c for c in out["candidates"]}
    strict = candidates["hand_wrong_1"]  # the spec's "strict" patch: also rejects equal bounds
    assert strict["resolved_original"] and not strict["resolved_abs"]
    assert candidates["hand_correct"]["resolved_abs"]
    assert sample.scores["swe_abs_scorer"].value["strengthened"] == 1
