"""Generated tests are deduplicated by normalised body before they are counted or written
(issue 27, item 5): the name and the formatting do not make a test new."""

from __future__ import annotations

from methods.swe_abs._pipeline import InstanceOutcome, Strengthener


def _bare() -> Strengthener:
    s = Strengthener.__new__(Strengthener)
    s.out = InstanceOutcome("x")
    s.new_dir = "tests"
    return s


def test_duplicate_bodies_are_dropped_before_counting_and_writing():
    s = _bare()
    body = "    assert _swe_abs_norm(ensure_binary('', 'utf-8', 'strict')) == b''\n"
    s._add_test("differential", "def test_swe_abs_diff_m1():\n" + body, target="m1")
    s._add_test("differential", "def test_swe_abs_diff_m2():\n" + body, target="m2")
    s._add_test(
        "differential", "def test_swe_abs_diff_m3():\n" + body.replace("'', ", "'',  "), "m3"
    )
    s._add_test("explore", "def test_swe_abs_explore_4():\n    x = 1\n" + body, target="lines")
    assert [t.name for t in s.out.new_tests] == ["test_swe_abs_diff_m1", "test_swe_abs_explore_4"]
    module = "\n".join(s._new_modules().values())
    assert module.count("ensure_binary(") == 2
