"""SWE-bench records → Instance: JSON-encoded test lists, candidates, clear errors."""

from __future__ import annotations

import json

import pytest

from methods.swe_abs._instance import InstanceFormatError, instance_from_record, instance_to_record

GOLD = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
TESTS = (
    "--- a/test_m.py\n+++ b/test_m.py\n@@ -1 +1,2 @@\n import m\n+def test_x(): assert m.x == 2\n"
)


def record(**over):
    base = {
        "instance_id": "o__r-1",
        "repo": "o/r",
        "base_commit": "abc",
        "patch": GOLD,
        "test_patch": TESTS,
        "problem_statement": "x should be 2",
        "FAIL_TO_PASS": json.dumps(["test_m.py::test_x"]),
        "PASS_TO_PASS": "[]",
    }
    base.update(over)
    return base


def test_swebench_record_round_trip():
    inst = instance_from_record(
        record(candidates=[{"system": "s", "patch": GOLD, "kind": "wrong"}])
    )
    assert inst.fail_to_pass == ("test_m.py::test_x",) and inst.pass_to_pass == ()
    assert inst.test_files() == ["test_m.py"]
    assert inst.candidates[0].kind == "wrong" and not inst.candidates[0].trusted
    back = instance_to_record(inst)
    assert json.loads(back["FAIL_TO_PASS"]) == ["test_m.py::test_x"]
    assert instance_from_record(back) == inst


def test_lists_may_be_real_lists():
    inst = instance_from_record(record(FAIL_TO_PASS=["a::b"], PASS_TO_PASS=["a::c"]))
    assert inst.pass_to_pass == ("a::c",)


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"patch": None}, "missing field 'patch'"),
        ({"patch": "   "}, r"gold patch\) is empty"),
        ({"patch": "not a diff"}, "'patch' is not a unified diff"),
        ({"FAIL_TO_PASS": "[not json"}, "not a JSON list"),
        ({"PASS_TO_PASS": [1, 2]}, "list of test ids"),
        ({"repo": 5}, "must be a string"),
        ({"candidates": [{"system": "s", "patch": GOLD, "kind": "maybe"}]}, "kind 'maybe'"),
        ({"differential": {"call": "f()"}}, "differential"),
    ],
)
def test_bad_records_name_the_field(over, message):
    with pytest.raises(InstanceFormatError, match=message) as err:
        instance_from_record(record(**over), where="file.jsonl:3")
    assert "file.jsonl:3" in str(err.value)
