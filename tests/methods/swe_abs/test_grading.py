"""SWE-bench's resolution rule and SWE-ABS's strengthened-suite rule, hand-checked."""

from __future__ import annotations

from methods.swe_abs._grading import abs_failures, flaky_tests, swebench_grade


def test_swebench_counts_passed_and_xfail_as_pass_and_missing_as_fail():
    status = {"f1": "PASSED", "f2": "XFAIL", "p1": "PASSED", "p2": "SKIPPED"}
    assert swebench_grade(status, ["f1", "f2"], ["p1", "p2"]).resolved  # SKIPPED is neutral
    g = swebench_grade(status, ["f1", "f3"], ["p1"])
    assert not g.resolved and g.f2p_failed == ("f3",)  # missing from the log
    g = swebench_grade({"f1": "PASSED", "p1": "ERROR"}, ["f1"], ["p1"])
    assert not g.resolved and g.p2p_failed == ("p1",)
    assert swebench_grade({}, [], []).resolved  # empty lists count as success


def test_flaky_tests_are_excluded_from_grading():
    status = {"f1": "PASSED", "p1": "FAILED"}
    assert not swebench_grade(status, ["f1"], ["p1"]).resolved
    assert swebench_grade(status, ["f1"], ["p1"], exclude=["p1"]).resolved


def test_abs_rule_rejects_anything_but_ok_passed_skipped():
    status = {"a": "PASSED", "b": "SKIPPED", "c": "XFAIL", "d": "FAILED", "e": "OK"}
    assert abs_failures(status, ["a", "b", "c", "d", "e", "missing"]) == ["c", "d", "missing"]
    assert abs_failures(status, ["a", "d"], exclude=["d"]) == []


def test_flaky_detection_by_rerun():
    runs = [{"a": "PASSED", "b": "PASSED"}, {"a": "PASSED", "b": "FAILED"}, {"a": "PASSED"}]
    assert flaky_tests(runs) == ["b"]
    assert (
        flaky_tests([{"a": "FAILED"}, {"a": "FAILED"}]) == []
    )  # consistently failing is not flaky
    assert flaky_tests([]) == []
