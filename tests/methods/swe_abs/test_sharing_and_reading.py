"""What the oracle observes beyond values (:mod:`methods.swe_abs._jail.values`,
:mod:`methods.swe_abs._jail.calls`): what a result shares with the arguments, how far a call
reads the iterators it is given, and a keyword argument passed by position. Each is checked in
both places it lives: the oracle's agreement (:func:`values.same`) and the emitted test, run
against the reference, a wrong fix and a correct fix that differs from the reference."""

from __future__ import annotations

from typing import Any

import pytest

from methods.swe_abs._jail import calls, values

# three implementations of one function each: the reference, a wrong fix, a correct fix that
# shares less or reads lazier than the reference
_UPDATE = {
    "reference": "def update(d, k, v):\n    out = dict(d)\n    out[k] = v\n    return out\n",
    # returns the caller's dict when nothing changes: later writes to the result change it
    "wrong": (
        "def update(d, k, v):\n    if d.get(k, object()) == v:\n        return d\n"
        "    out = dict(d)\n    out[k] = v\n    return out\n"
    ),
    "correct": (
        "import copy\ndef update(d, k, v):\n    out = copy.deepcopy(d)\n    out[k] = v\n"
        "    return out\n"
    ),
}
_PAIRS = {
    "reference": (
        "def pairs(seq):\n    it = iter(seq)\n    for a in it:\n        b = next(it, None)\n"
        "        yield (a, b)\n"
    ),
    # a snapshot of the input: the same pairs, but a long or endless input is read at the call
    "wrong": (
        "def pairs(seq):\n    items = list(seq)\n"
        "    return iter([(items[i], items[i + 1] if i + 1 < len(items) else None)"
        " for i in range(0, len(items), 2)])\n"
    ),
    # reads one item at a time, never further than the reference
    "correct": (
        "def pairs(seq):\n    it = iter(seq)\n    while True:\n        try:\n"
        "            a = next(it)\n        except StopIteration:\n            return\n"
        "        yield (a, next(it, None))\n"
    ),
}
_CODEC = {
    "reference": "def codec(s, encoding='utf-8', errors='strict'):\n    return (s, encoding, errors)\n",
    # `errors` made keyword-only: a caller passing it by position now fails
    "wrong": "def codec(s, encoding='utf-8', *, errors='strict'):\n    return (s, encoding, errors)\n",
    "correct": "def codec(s, encoding='utf-8', errors='strict'):\n    return tuple([s, encoding, errors])\n",
}


def _spec(source: str, call: str, args: dict[str, str]) -> dict[str, Any]:
    return {"setup": source, "call": call, "args": args}


def _observe(source: str, call: str, kwargs: dict[str, Any], form: int = 0) -> values.Observation:
    caller = calls.Caller(_spec(source, call, {k: "st.none()" for k in kwargs}))
    return caller.observe(kwargs, form, 2.0)


def _run_emitted(test: str, source: str) -> bool:
    """Whether the emitted test passes with ``source`` defining the function under test."""
    ns: dict[str, Any] = {}
    exec("import pytest\n" + values.NORMALISE_SOURCE + source + "\n" + test, ns)  # noqa: S102
    name = test.split("(")[0].removeprefix("def ")
    try:
        ns[name]()
    except AssertionError:
        return False
    return True


def _emitted(impls: dict[str, str], call: str, kwargs: dict[str, Any], form: int = 0) -> str:
    """The test the reference's observation emits, without the set-up (each run below defines
    the function under test at module level instead)."""
    spec = _spec(impls["reference"], call, {k: "st.none()" for k in kwargs})
    caller = calls.Caller(spec)
    ref = caller.observe(kwargs, form, 2.0)
    test = calls.emit_test(_spec("", call, spec["args"]), caller, kwargs, form, ref, "test_x")
    assert test is not None
    return test


def test_a_result_that_is_the_callers_container_is_observed_and_rejected():
    kwargs = {"d": {"a": [1], "b": 2}, "k": "b", "v": 2}
    ref = _observe(_UPDATE["reference"], "update(d, k, v)", kwargs)
    wrong = _observe(_UPDATE["wrong"], "update(d, k, v)", kwargs)
    correct = _observe(_UPDATE["correct"], "update(d, k, v)", kwargs)
    assert ref[:3] == wrong[:3] == correct[:3]  # the values and states alone agree
    assert values.extra_of(ref)["shared"] == {"result['a'] is d['a']"}
    assert "result is d" in values.extra_of(wrong)["shared"]
    assert values.extra_of(correct)["shared"] == frozenset()
    assert not values.same(ref, wrong)  # shares what the reference does not
    assert values.same(ref, correct)  # shares less: allowed
    test = _emitted(_UPDATE, "update(d, k, v)", kwargs)
    assert "_swe_abs_shared(" in test
    assert _run_emitted(test, _UPDATE["reference"])
    assert not _run_emitted(test, _UPDATE["wrong"])
    assert _run_emitted(test, _UPDATE["correct"])


def test_how_far_a_lazy_result_reads_its_iterator_is_observed_and_rejected():
    kwargs = {"seq": [1, 2, 3, 4, 5]}
    call = "pairs(iter(seq))"
    ref = _observe(_PAIRS["reference"], call, kwargs)
    wrong = _observe(_PAIRS["wrong"], call, kwargs)
    correct = _observe(_PAIRS["correct"], call, kwargs)
    assert ref[1] == wrong[1] == correct[1] == ("<iter>", [(1, 2), (3, 4), (5, None)])
    assert values.extra_of(ref)["steps"] == [(0,), (2,), (4,), (5,)]
    assert values.extra_of(wrong)["steps"][0] == (5,)  # read whole at the call
    assert not values.same(ref, wrong)
    assert values.same(ref, correct)
    assert values.same(wrong, ref)  # lazier than an eager reference: allowed
    test = _emitted(_PAIRS, call, kwargs)
    assert "_swe_abs_counted(seq)" in test and "_swe_abs_within(" in test
    assert _run_emitted(test, _PAIRS["reference"])
    assert not _run_emitted(test, _PAIRS["wrong"])
    assert _run_emitted(test, _PAIRS["correct"])


def test_only_iter_calls_with_one_argument_are_counted():
    assert (
        calls.counted_call("f(iter(x) if lazy else x)") == "f(_swe_abs_counted(x) if lazy else x)"
    )
    assert calls.counted_call("f(iter(x, None))") == "f(iter(x, None))"  # a sentinel form
    assert calls.counted_call("f(x)") == "f(x)"
    # a call that builds no counted iterator observes no reading
    out = _observe(_PAIRS["reference"], "pairs(seq)", {"seq": [1, 2]})
    assert "steps" not in values.extra_of(out)


def test_a_keyword_argument_is_also_passed_by_position():
    namespace: dict[str, Any] = {}
    exec(_CODEC["reference"], namespace)  # noqa: S102
    call = "codec(s, encoding=enc, errors=err)"
    assert calls.call_forms(call, namespace, positional=True) == [call, "codec(s, enc, err)"]
    assert "codec(s, enc, err)" not in calls.call_forms(call, namespace)  # not an omission
    # a keyword-only parameter of the reference is never moved
    exec(_CODEC["wrong"], namespace)  # noqa: S102
    assert calls.call_forms(call, namespace, positional=True) == [call, "codec(s, enc, errors=err)"]
    kwargs = {"s": "a", "enc": "ascii", "err": "ignore"}
    caller = calls.Caller(_spec(_CODEC["reference"], "codec(s, encoding=enc, errors=err)",
                                {k: "st.none()" for k in kwargs}))  # fmt: skip
    form = caller.forms.index("codec(s, enc, err)")
    assert form >= caller.drawn  # checked once, never drawn: the domain's draws are unchanged
    test = _emitted(_CODEC, "codec(s, encoding=enc, errors=err)", kwargs, form)
    assert _run_emitted(test, _CODEC["reference"])
    assert _run_emitted(test, _CODEC["correct"])
    with pytest.raises(TypeError):
        _run_emitted(test, _CODEC["wrong"])


def test_a_raise_carries_no_sharing_or_reading():
    source = "def boom(d):\n    raise ValueError(d)\n"
    out = _observe(source, "boom(d)", {"d": {"a": 1}})
    assert out[0] == "raise" and values.extra_of(out) == {}
    timeout = values.outcome(lambda: [x for x in iter(int, 1)], 0.05)
    assert timeout == ("timeout", None, None, {})


# issue 27, fourteenth round: a positional argument passed by name (a renamed parameter, a
# function that dispatches on its first positional argument) and an error raised at the call
# where the reference raises while its lazy result is read
_RENAMED = {
    "reference": "def join(items, separator='-'):\n    return separator.join(items)\n",
    # the parameter renamed: a caller passing `separator=` now fails
    "wrong": "def join(items, sep='-'):\n    return sep.join(items)\n",
    "correct": "def join(items, separator='-'):\n    return ''.join(separator + x for x in items)[len(separator):]\n",
}
_LAZY = {
    "reference": (
        "def steps(start, stop):\n    if stop < start:\n        raise ValueError('stop < start')\n"
        "    yield from range(start, stop)\n"
    ),
    # validated at the call: the error comes before anything is read
    "wrong": (
        "def steps(start, stop):\n    if stop < start:\n        raise ValueError('stop < start')\n"
        "    return iter(range(start, stop))\n"
    ),
    "correct": (
        "def steps(start, stop):\n    n = start\n    if not stop >= start:\n"
        "        raise ValueError('bad')\n    while n < stop:\n        yield n\n        n += 1\n"
    ),
}


def test_a_positional_argument_is_also_passed_by_name():
    namespace: dict[str, Any] = {}
    exec(_RENAMED["reference"], namespace)  # noqa: S102
    call = "join(items, sep)"
    assert calls.call_forms(call, namespace, keyword=True) == [
        call, "join(items=items, separator=sep)"]  # fmt: skip
    assert "join(items=items, separator=sep)" not in calls.call_forms(call, namespace)
    # positional-only parameters stay positional; a call that fills *args is left alone
    exec("def po(a, /, b):\n    return a\ndef va(a, *rest):\n    return a\n", namespace)  # noqa: S102
    assert calls.call_forms("po(x, y)", namespace, keyword=True) == ["po(x, y)", "po(x, b=y)"]
    assert calls.call_forms("va(x, y)", namespace, keyword=True) == ["va(x, y)"]
    kwargs = {"items": ["a", "b"], "sep": "+"}
    caller = calls.Caller(_spec(_RENAMED["reference"], call, {k: "st.none()" for k in kwargs}))
    form = caller.forms.index("join(items=items, separator=sep)")
    assert form >= caller.by_position >= caller.drawn  # checked once, after the by-position ones
    test = _emitted(_RENAMED, call, kwargs, form)
    assert _run_emitted(test, _RENAMED["reference"])
    assert _run_emitted(test, _RENAMED["correct"])
    with pytest.raises(TypeError):
        _run_emitted(test, _RENAMED["wrong"])


def test_raising_at_the_call_where_the_reference_raises_when_read_is_rejected():
    kwargs = {"start": 3, "stop": 1}
    call = "steps(start, stop)"
    ref = _observe(_LAZY["reference"], call, kwargs)
    wrong = _observe(_LAZY["wrong"], call, kwargs)
    correct = _observe(_LAZY["correct"], call, kwargs)
    assert ref[:2] == wrong[:2] == correct[:2] == ("raise", ("builtins", "ValueError"))
    assert values.extra_of(ref) == {"lazy": True} and values.extra_of(wrong) == {}
    assert not values.same(ref, wrong)  # raises earlier than the reference
    assert values.same(ref, correct)
    assert values.same(wrong, ref)  # later than an eager reference: allowed
    test = _emitted(_LAZY, call, kwargs)
    assert "_swe_abs_result = steps(start, stop)" in test
    assert _run_emitted(test, _LAZY["reference"])
    assert _run_emitted(test, _LAZY["correct"])
    with pytest.raises(ValueError):
        _run_emitted(test, _LAZY["wrong"])
    # an eager reference's test accepts a lazy fix (the error still comes when read)
    eager = _emitted({"reference": _LAZY["wrong"]}, call, kwargs)
    assert _run_emitted(eager, _LAZY["reference"]) and _run_emitted(eager, _LAZY["wrong"])
    # a call that raises before returning anything carries no `lazy`
    assert values.extra_of(_observe("def f(x):\n    raise KeyError(x)\n", "f(x)", {"x": 1})) == {}
