"""Pure helpers of the in-sandbox runner (no candidate code runs here): output normalisation,
literal round trips, agreement, pytest status mapping, greedy test selection."""

from __future__ import annotations

from types import SimpleNamespace

from methods.swe_abs._jail import child, glue, job_explore, plan, swap, values


def test_normalise_materialises_iterators_and_keeps_values():
    assert values.normalise(iter([1, 2])) == ("<iter>", [1, 2])
    assert values.normalise(x for x in range(100))[1] == list(range(64))  # capped
    assert values.normalise({"a": [1, (2,)]}) == {"a": [1, (2,)]}
    assert values.normalise(object())[0] == "<obj>"  # address-bearing reprs are not compared
    assert values.normalise(bytearray(b"a")) == ("<buffer>", "bytearray", b"a")
    assert values.normalise(values.subclassed(b"a")) == ("<sub>", "_SweAbsBytes", b"a")


def test_expression_round_trip():
    assert values.expression([1, "a", (None, 2.5)]) == "[1, 'a', (None, 2.5)]"
    assert values.expression(b"\xff") == "b'\\xff'"
    assert values.expression(object()) is None
    assert values.expression(float("nan")) == "float('nan')"  # equal to itself in the tests
    assert values.expression((1,)) == "(1,)"
    assert values.expression(values.subclassed([1])) == "_SweAbsList([1])"


def test_same_compares_exception_types_states_and_nested_types():
    te, ae = ("builtins", "TypeError"), ("builtins", "AttributeError")
    assert values.same(("raise", te, None), ("raise", te, None))
    assert not values.same(("raise", te, None), ("raise", ae, None))
    assert not values.same(("raise", te, None), ("raise", ("mymod", "TypeError"), None))
    assert not values.same(("ok", 1, None), ("raise", te, None))
    assert not values.same(("ok", 1, None), ("ok", 1.0, None))  # types matter
    assert not values.same(("ok", [1], None), ("ok", [1.0], None))  # at every depth
    assert values.same(("ok", {"a": 1, "b": 2}, None), ("ok", {"b": 2, "a": 1}, None))
    assert not values.same(("ok", 1, {"d": {}}), ("ok", 1, {"d": {"k": 1}}))  # input changed


def test_a_lazy_attribute_is_not_resolved_when_members_are_compared():
    """six's lazy attributes import their module on any attribute access (``_gdbm``, missing in
    the sandbox): comparing class members while swapping a whole module must not touch them."""

    class Lazy:
        def __getattr__(self, name):
            raise ImportError("No module named '_gdbm'")

    assert swap._same_member(Lazy(), Lazy()) is False


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
    assert glue.status_of(reports) == {
        "t::a": "PASSED", "t::b": "ERROR", "t::c": "FAILED", "t::d": "SKIPPED",
        "t::e": "XFAIL", "t::f": "XPASS", "t::g": "ERROR", "t::h": "FAILED",
    }  # fmt: skip
    assert glue.details_of(reports) == {
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
    assert [t["test"] for t in job_explore.select(found, 2)] == ["B", "C"]
    assert [t["test"] for t in job_explore.select(found, 1)] == ["B"]


def test_greedy_selection_fills_the_budget_in_draw_order():
    # issue 27: once no example adds a feature, the rest (each a class of its own) fill the
    # budget; before, the choice stopped at the greedy cover and dropped them
    found = [
        (set(), {"f1", "f2"}, {"test": "A"}),
        ({("p", 3)}, {"f1"}, {"test": "B"}),
        (set(), {"f1", "f2", "f3"}, {"test": "C"}),
        (set(), {"f1"}, {"test": "D"}),
    ]
    assert [t["test"] for t in job_explore.select(found, 10)] == ["B", "C", "A", "D"]
    assert [t["test"] for t in job_explore.select(found, 3)] == ["B", "C", "A"]


def test_greedy_selection_keeps_each_documented_edit_first_after_new_lines():
    # issue 27, fifth round: documented (argument, kind) edits were drawn but lost to examples
    # with more new facets; one test per (argument, kind) comes right after the new lines
    found = [
        (set(), {"f1", "f2", "f3"}, {"test": "A"}),
        (set(), {"f1", ("documented", "n", "zero")}, {"test": "B"}),
        ({("p", 3)}, {"f1"}, {"test": "C"}),
        (set(), {"f2", ("documented", "n", "zero")}, {"test": "D"}),
        (set(), {("documented", "seq", "none_items")}, {"test": "E"}),
    ]
    # D before B: both bring (n, zero), D a new facet besides; A's three facets come after
    assert [t["test"] for t in job_explore.select(found, 3)] == ["C", "D", "E"]
    assert [t["test"] for t in job_explore.select(found, 5)] == ["C", "D", "E", "A", "B"]


def test_greedy_selection_keeps_each_kind_of_edit_after_the_documented_ones():
    # issue 27, seventh round: a drawn edit ("1 0-12", a space between two digits) lost to
    # texts with more new character facets; one test per (argument, label) comes next
    found = [
        (set(), {"f1", "f2", "f3", ("edit", "s", "upper")}, {"test": "A"}),
        (set(), {"f1", ("edit", "s", "digits ' '")}, {"test": "B"}),
        (set(), {"f4", ("documented", "n", "zero"), ("edit", "n", "zero")}, {"test": "C"}),
        (set(), {"f5", ("edit", "s", "upper")}, {"test": "D"}),
    ]
    # C (documented) first; then the two labels not yet kept, A before B for its facets; D's
    # label is A's and its one new facet comes last
    assert [t["test"] for t in job_explore.select(found, 3)] == ["C", "A", "B"]
    assert [t["test"] for t in job_explore.select(found, 4)] == ["C", "A", "B", "D"]


def test_emitted_tests_are_plain_code():
    from methods.swe_abs._jail.calls import Caller, Unexpressible, emit_test

    spec = {"setup": "import math", "call": "math.floor(x)", "args": {"x": "st.integers()"}}
    caller = Caller(spec)
    code = emit_test(spec, caller, {"x": 3}, 0, ("ok", [1, 2], None), "test_k")
    assert code == (
        "def test_k():\n    import math\n    x = 3\n"
        "    assert _swe_abs_eq(_swe_abs_norm(math.floor(x)), [1, 2])\n"
    )
    raising = emit_test(spec, caller, {"x": 3}, 0, ("raise", ("builtins", "ValueError"), None), "t")
    assert "with pytest.raises(ValueError):" in raising
    other = emit_test(spec, caller, {"x": 3}, 0, ("raise", ("json", "JSONDecodeError"), None), "t")
    assert "pytest.raises(_swe_abs_exc('json', 'JSONDecodeError'))" in other
    try:
        emit_test(spec, caller, {"x": object()}, 0, ("ok", 1, None), "t")
    except Unexpressible as exc:
        assert exc.type_name == "object"
    else:
        raise AssertionError("an object() argument has no expression: it must be counted")


def test_a_job_that_loops_is_killed_at_its_limit_even_before_its_child_ran(monkeypatch):
    """The runner's per-job limit holds when the forked child has not yet been scheduled to
    enter its own process group (a loaded machine): the parent puts it there and kills it by
    pid too, instead of waiting on it for ever. No candidate code: the job is a bare loop."""
    import os
    import signal
    import time

    def spin(_runner, _job):
        while True:
            pass

    real_enter = child._enter_own_group

    def late_enter():  # the child is slow to run its first lines
        time.sleep(1.0)
        real_enter()

    def stuck(_signum, _frame):
        raise TimeoutError("run_child did not return: the looping job was not killed")

    forked: list[int] = []
    real_fork = child._fork

    def fork():
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

        monkeypatch.setattr(child, "_enter_own_group", late_enter)

    monkeypatch.setattr(child, "_fork", fork)
    previous = signal.signal(signal.SIGALRM, stuck)
    signal.setitimer(signal.ITIMER_REAL, 20)
    result: dict = {}
    try:
        started = time.monotonic()
        result = child.run_child(None, {"id": "m", "kind": "spin", "timeout": 0.2}, spin)
        elapsed = time.monotonic() - started
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        for pid in forked if not result else ():  # the runner did not: no loop outlives the test
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert result["timed_out"] and plan.killed(result)  # a timeout counts as killed
    assert 0.2 <= result["seconds"] and elapsed < 6
