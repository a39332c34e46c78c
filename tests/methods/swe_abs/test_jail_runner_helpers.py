"""Pure helpers of the in-sandbox runner (no candidate code runs here): output normalisation,
literal round trips, agreement, pytest status mapping, greedy test selection."""

from __future__ import annotations

from types import SimpleNamespace

from methods.swe_abs import jail_runner as jr


def test_normalise_materialises_iterators_and_keeps_values():
    assert jr.normalise(iter([1, 2])) == ("<iter>", [1, 2])
    assert jr.normalise(x for x in range(100))[1] == list(range(64))  # capped
    assert jr.normalise({"a": [1, (2,)]}) == {"a": [1, (2,)]}
    assert jr.normalise(object())[0] == "<obj>"  # address-bearing reprs are not compared


def test_literal_round_trip():
    assert jr.literal([1, "a", (None, 2.5)]) == "[1, 'a', (None, 2.5)]"
    assert jr.literal(b"\xff") == "b'\\xff'"
    assert jr.literal(object()) is None
    assert jr.literal(float("nan")) is None  # nan != nan: not a usable expected value


def test_same_treats_any_two_exceptions_as_agreement():
    assert jr.same(("raise", "TypeError"), ("raise", "ValueError"))
    assert not jr.same(("ok", 1), ("raise", "ValueError"))
    assert not jr.same(("ok", 1), ("ok", 1.0))  # types matter
    assert jr.same(("ok", [1]), ("ok", [1]))


def _report(nodeid, when, outcome, xfail=False):
    r = SimpleNamespace(nodeid=nodeid, when=when, failed=outcome == "failed",
                        skipped=outcome == "skipped", passed=outcome == "passed", longrepr="boom")  # fmt: skip
    if xfail:
        r.wasxfail = "reason"
    return r


def test_status_mapping_like_swebench():
    reports = [
        _report("t::a", "setup", "passed"), _report("t::a", "call", "passed"),
        _report("t::b", "setup", "failed"),
        _report("t::c", "call", "failed"),
        _report("t::d", "setup", "skipped"),
        _report("t::e", "call", "skipped", xfail=True),
        _report("t::f", "call", "passed", xfail=True),
        _report("t::g", "call", "passed"), _report("t::g", "teardown", "failed"),
        _report("t::h", "call", "failed"), _report("t::h", "call", "passed"),  # a failed subtest
    ]  # fmt: skip
    assert jr.status_of(reports) == {
        "t::a": "PASSED", "t::b": "ERROR", "t::c": "FAILED", "t::d": "SKIPPED",
        "t::e": "XFAIL", "t::f": "XPASS", "t::g": "ERROR", "t::h": "FAILED",
    }  # fmt: skip
    assert jr.details_of(reports) == {
        "t::b": "boom",
        "t::c": "boom",
        "t::g": "boom",
        "t::h": "boom",
    }


def test_greedy_selection_prefers_new_lines_then_new_features():
    found = [
        (set(), {"f1", "f2"}, {"test": "A"}),
        ({("p", 3)}, {"f1"}, {"test": "B"}),
        (set(), {"f1", "f2", "f3"}, {"test": "C"}),
        (set(), {"f1"}, {"test": "D"}),
    ]
    assert [t["test"] for t in jr._select(found, 10)] == ["B", "C"]
    assert [t["test"] for t in jr._select(found, 1)] == ["B"]


def test_emitted_tests_are_plain_code():
    spec = {"setup": "from m import f", "call": "f(x)", "args": {"x": "st.integers()"}}
    code = jr._emit_test(spec, {"x": 3}, ("ok", [1, 2]), "test_k")
    assert (
        code
        == "def test_k():\n    from m import f\n    x = 3\n    assert _swe_abs_norm(f(x)) == [1, 2]\n"
    )
    raising = jr._emit_test(spec, {"x": 3}, ("raise", "ValueError"), "test_r")
    assert "with pytest.raises(Exception):" in raising
    assert jr._emit_test(spec, {"x": object()}, ("ok", 1), "t") is None
