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

    real_enter = jr._enter_own_group

    def late_enter():  # the child is slow to run its first lines
        time.sleep(1.0)
        real_enter()

    def stuck(_signum, _frame):
        raise TimeoutError("run_child did not return: the looping job was not killed")

    forked: list[int] = []
    real_fork = jr._fork

    def fork():
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setitem(jr.JOBS, "spin", spin)
    monkeypatch.setattr(jr, "_enter_own_group", late_enter)
    monkeypatch.setattr(jr, "_fork", fork)
    previous = signal.signal(signal.SIGALRM, stuck)
    signal.setitimer(signal.ITIMER_REAL, 20)
    result: dict = {}
    try:
        started = time.monotonic()
        result = jr.run_child(None, {"id": "m", "kind": "spin", "timeout": 0.2})
        elapsed = time.monotonic() - started
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        for pid in forked if not result else ():  # the runner did not: no loop outlives the test
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert result["timed_out"] and jr.killed(result)  # a timeout counts as killed
    assert 0.2 <= result["seconds"] and elapsed < 6
