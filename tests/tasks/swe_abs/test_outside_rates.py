"""The outside sets' rates from a log (``tasks/swe_abs/outside_rates.py``): the judgement calls read
from the helpers' notes, the set of each candidate, and every rate on hand-counted instances; and
that the judgement calls the shipped notes name are the counts ``results.json`` records."""

from __future__ import annotations

from typing import Any

import pytest

from tasks.swe_abs.outside_rates import (
    GradedInstance,
    judgement_calls,
    outside_rates,
    set_key,
    shipped_judgement_calls,
)
from tasks.swe_abs.results import load_results

_NOTES = """# Set 9, helper X

## Judgement calls

Wrong ones a reviewer could argue for:

- `o9X-a-w1`: differs only on malformed input.
- `o9X-b-w1` and `o9X-b-w2`: both reject what gold accepts; see `o9X-c-w1` for the contrast.
- `o9X-d-w1`: not a judgement call on correctness, but a note on distinctness.
- `o9X-correct-c1`: a correct one named here is not a wrong patch.

`o9X-e-w1` is not a judgement call: it is the reported bug.

## Dropped

- `o9X-f-w1`: failed the instance's own tests.
"""
_WRONG = {f"o9X-{x}" for x in ("a-w1", "b-w1", "b-w2", "c-w1", "d-w1", "e-w1", "f-w1")}


def test_judgement_calls_are_the_bullets_heads_under_their_heading():
    assert judgement_calls([_NOTES], _WRONG) == {"o9X-a-w1", "o9X-b-w1", "o9X-b-w2"}


def test_notes_without_the_heading_name_no_judgement_call():
    assert judgement_calls(["# Set 2\n\n- `o9X-a-w1`: wrong.\n"], _WRONG) == frozenset()
    assert judgement_calls([], _WRONG) == frozenset()


@pytest.mark.parametrize(
    ("system", "key"),
    [("outside:o12AG-six-w1-x", "outside_12"), ("outside:o2A-w1", "outside_2"),
     ("outside:tabulate-format-w3-x", "outside"), ("hand_wrong_1", "own")],
)  # fmt: skip
def test_each_candidate_belongs_to_its_set(system, key):
    assert set_key(system) == key


def _cand(
    system: str, kind: str, orig: bool, abs_: bool, failed: tuple[str, ...] = ()
) -> dict[str, Any]:
    return {"system": system, "kind": kind, "resolved_original": orig, "resolved_abs": abs_,
            "new_failed": list(failed)}  # fmt: skip


def _instance(repo: str, project: str, candidates: list[dict[str, Any]]) -> GradedInstance:
    tests = [{"nodeid": "t::near", "origin": "near", "accepted": True},
             {"nodeid": "t::foreign", "origin": "foreign", "accepted": True},
             {"nodeid": "t::explore", "origin": "explore", "accepted": True},
             {"nodeid": "t::refused", "origin": "near", "accepted": False}]  # fmt: skip
    return GradedInstance(repo, project, {"new_tests": tests, "strengthened": bool(candidates),
                                          "candidates": candidates})  # fmt: skip


def test_every_rate_on_hand_counted_instances():
    dev = _instance("mahmoud/boltons", "boltons", [
        _cand("outside:o5Z-a-w1", "wrong", True, False, ("t::near",)),  # rejected by near alone
        _cand("outside:o5Z-a-w2", "wrong", True, True),  # survives (a judgement call)
        _cand("outside:o5Z-a-w3", "wrong", False, False),  # its own tests reject it: apart
        _cand("outside:o5Z-a-c1", "correct", True, True),
    ])  # fmt: skip
    test = _instance("pytoolz/toolz", "toolz", [
        _cand("outside:o5Z-b-w1", "wrong", True, False, ("t::foreign", "t::explore")),
        _cand("outside:o5Z-b-w2", "wrong", True, False, ("t::foreign",)),  # foreign alone
        _cand("outside:o5Z-b-c1", "correct", False, False),  # rejected by its own tests: counts
        _cand("own_wrong", "wrong", True, False, ("t::explore",)),
    ])  # fmt: skip
    empty = _instance("pytoolz/toolz", "toolz", [])
    sides = {"mahmoud/boltons": "dev", "pytoolz/toolz": "test"}
    got = outside_rates([dev, test, empty], frozenset({"o5Z-a-w2"}), sides.__getitem__)
    assert got["strengthened"] == [2, 3]
    assert (got["new_tests"], got["near_tests"], got["foreign_tests"]) == (9, 3, 3)
    five = got["sets"]["outside_5"]
    assert five["wrong_rejected"] == [3, 4]
    assert five["correct_rejected"] == [1, 2]
    assert five["wrong_failing_original_tests"] == 1
    assert five["wrong_rejected_without_near_tests"] == [2, 4]
    assert five["wrong_rejected_without_foreign_tests"] == [2, 4]
    assert five["wrong_rejected_without_judgement_calls"] == [3, 3]
    assert five["per_project_wrong_rejected"] == {"boltons": [1, 2], "toolz": [2, 2]}
    assert five["dev_projects_wrong_rejected"] == [1, 2]
    assert five["test_projects_wrong_rejected"] == [2, 2]
    assert five["survivors"] == ["o5Z-a-w2"] and five["survivors_judgement_calls"] == 1
    assert got["sets"]["own"]["wrong_rejected"] == [1, 1]


def test_a_set_with_only_correct_patches_has_no_wrong_rates():
    only = _instance("a/b", "b", [_cand("outside:o3Q-x-c1", "correct", True, True)])
    got = outside_rates([only], frozenset(), lambda repo: "test")["sets"]["outside_3"]
    assert got == {"correct_rejected": [0, 1]}


def test_the_shipped_notes_name_the_judgement_calls_results_json_records():
    shipped = shipped_judgement_calls()
    results = load_results()
    checked = 0
    for key, record in results.items():
        if not (key.startswith("outside_") and isinstance(record, dict)):
            continue
        if "judgement_calls" not in record:
            continue
        named = {c for c in shipped if set_key(f"outside:{c}") == key}
        assert len(named) == record["judgement_calls"], key
        wrong_n = record["wrong_rejected"][1]
        without_n = record["wrong_rejected_without_judgement_calls"][1]
        if key != "outside_7":  # its figure left out one more (results.json's note says which)
            assert wrong_n - without_n == len(named), key
        else:
            assert wrong_n - without_n == len(named) + 1 and "judgement_calls_note" in record
        checked += 1
    assert checked >= 11
