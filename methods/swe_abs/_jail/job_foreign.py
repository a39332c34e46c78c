"""The ``foreign`` job: the reference's outcomes on foreign inputs, pinned as tests where a fix must
keep them. Hypothesis draws examples of the declared domain; in each, every argument of the call
to the function under test that the example reaches (a call in a conditional's branch not
taken is left alone) is replaced in turn by each foreign value (:mod:`.foreign`). Where the
reference (the gold tree on disk) raises, the rule follows from where the exception came from and
from the tree before the fix (the job's ``base_variant``): ``explicit`` and ``propagated`` pin
the exception type and the arguments' state after the call, ``raised_before`` only that the call
raises. Where it returns on a value read alike, ``read_alike`` pins the whole observation, and
where it returns on a value without behaviour what the tree before the fix returned,
``unchanged`` does. On the first examples the declared call is also tried whole, twice with
what the first call returned emptied in between (``fresh_result``) and followed by a reading of
interpreter-wide settings (``settings``): pinned where gold returns as declared, as the tree
before the fix did.
At most ``per_kind`` tests per (argument, foreign kind, outcome, rule), ``max_tests`` in
all; a call that overruns ``call_timeout`` is skipped, and after ``max_timeouts`` of them, or
``budget_s`` seconds, the search stops with what it has."""

from __future__ import annotations

import ast
import functools
import os
import time
from collections.abc import Callable
from typing import Any

from .calls import (
    Caller,
    Unexpressible,
    counted_call,
    emit_test,
    fresh_copy,
    settings,
    strategies,
)
from .foreign import (
    REACH,
    READ_ALIKE_KINDS,
    UNCHANGED_KINDS,
    argument_slots,
    marked,
    rejection_site,
    replaced,
    replacements,
    target_calls,
)
from .swap import Runner, toggle
from .values import HELPERS, SPOILED, Extra, Observation, extra_of, outcome_class


class _Enough(Exception):
    pass


FRESH_RESULT = "fresh_result"
"""The rule (and kind) of a test that calls twice, emptying what the first call returned in
between (``_swe_abs_spoil``): where gold returns the declared value again, and so did the tree
before the fix, a fix that hands out one object to every caller (a memoised list) fails it."""
SETTINGS = "settings"
"""The rule (and kind) of a test that reads interpreter-wide settings after the declared call
(``_swe_abs_settings``: the integer-text digit limit, the decimal context, the locale, the
garbage collector ...): where gold leaves them as the tree before the fix did, a fix that
changes them for every other module of the process, at import or at the call, fails it."""
_WHOLE_CALL_EXAMPLES = 10
"""The first examples on which the declared call is tried whole under those two rules."""


def _trivial(value: Any) -> bool:
    """An empty container or text, or the integer zero (not a flag)."""
    if type(value) is int:
        return value == 0
    return isinstance(value, list | tuple | dict | set | frozenset | str | bytes) and not value


_FAILURE_NOT_PINNED_KINDS = frozenset(
    {"index", "index_items", "unhashable", "unhashable_items", "no_truth", "none_item",
     "none_items", "labelled"}
)  # fmt: skip
"""Foreign kinds on which gold's failed operation is never pinned: where gold fails on an
integer that is no ``int`` (a check of its type), a fix that reads it as the integer returns;
where gold hashes a value (a set, a cache, a dictionary lookup) or reads its truth, a fix that
does not returns; where gold fails on a ``None`` in the data, a fix may skip it; where gold
fails on a text whose ``str()`` is a label, a fix that reads its value returns."""


def _may_return_early(kind: str, value: Any, others: list[Any]) -> bool:
    """Whether a correct fix may return, not fail, where gold fails by a failed operation on
    this foreign input: beside an empty or zero argument it may return before it touches the
    foreign one (the first outside set's correct ``partition(None, [])``, ``topk(0, None)``);
    ``None`` for an integer is Python's "no bound" (``islice(it, None)``: a correct ``partition``
    reads ``partition(None, seq)`` as one whole tuple where gold fails); and the kinds of
    :data:`_FAILURE_NOT_PINNED_KINDS`."""
    return (
        any(_trivial(v) for v in others)
        or (kind == "none" and type(value) is int)
        or kind in _FAILURE_NOT_PINNED_KINDS
    )


def _observed_alike(a: Observation, b: Observation) -> bool:
    """Equal values of equal types returned, or exceptions of one type raised."""
    if a[0] == b[0] == "raise":
        return tuple(a[1]) == tuple(b[1])
    return _returns_alike(a, b)


def _returns_alike(a: Observation, b: Observation) -> bool:
    """Both returned, equal values of equal types (NaN never agrees: nothing pinned on it)."""
    try:
        return a[0] == b[0] == "ok" and bool(a[1] == b[1])
    except Exception:  # noqa: BLE001 - a value whose comparison fails is no agreement
        return False


def job_foreign(runner: Runner, job: dict[str, Any]) -> dict[str, Any]:
    from hypothesis import given

    spec = job["spec"]
    changes = runner.apply(job.get("base_variant"))  # the tree before the fix, toggled in below
    if runner.overrides:
        return {"error": "the fix changes a module that is not imported: no toggling", "tests": []}
    toggle(changes, False)
    caller = Caller(spec)
    targets = {os.path.abspath(os.path.join(runner.repo, p)) for p in job.get("targets", [])}
    tree = ast.parse(spec["call"], mode="eval")
    calls = target_calls(tree, caller.namespace, targets)
    if not calls:
        return {"tests": [], "note": "the call reaches no function of the target files by name"}
    limit = float(job.get("call_timeout", 0.5))
    max_tests = int(job.get("max_tests", 40))
    per_kind = int(job.get("per_kind", 2))
    max_timeouts = int(job.get("max_timeouts", 5))
    deadline = time.monotonic() + float(job.get("budget_s", 60.0))
    compiled: dict[str, Any] = {}
    counts: dict[tuple[Any, ...], int] = {}
    tests: list[dict[str, Any]] = []
    stats = {"examples": 0, "probes": 0, "timeouts": 0, "returned": 0, "not_pinned": 0,
             "unreached": 0}  # fmt: skip
    unexpressible: dict[str, int] = {}

    def observe(kwargs: dict[str, Any], text: str, base: bool) -> tuple[Any, BaseException | None]:
        if text not in compiled:
            compiled[text] = compile(text, "<call>", "eval")
        raised: list[BaseException] = []
        toggle(changes, base)
        try:
            out = caller.observe_code(kwargs, compiled[text], limit, raised.append, HELPERS)
        finally:
            toggle(changes, False)
        return out, (raised[0] if raised else None)

    def rule_for(
        ref: Observation,
        exc: BaseException | None,
        kind: str,
        kwargs: dict[str, Any],
        text: str,
        declared: Observation,
        before_declared: Callable[[], Observation],
        failure_pinnable: bool,
    ) -> tuple[str | None, Observation]:
        """The rule that pins ``ref`` on this foreign input (None: not pinned), and what it
        pins. ``declared`` is gold's observation of the call as declared on this example,
        ``before_declared()`` the tree's before the fix; ``failure_pinnable`` is False where a
        correct fix may return instead of failing (:func:`_may_return_early`)."""
        if ref[0] == "ok":
            # the declared value's content in another form, read alike by gold and before the fix
            # (where the fix changed the declared call's outcome, before the fix alike with it)
            if kind in READ_ALIKE_KINDS and _returns_alike(declared, ref):
                before = observe(kwargs, text, base=True)[0]
                if _returns_alike(before, ref) or _observed_alike(before, before_declared()):
                    return "read_alike", ref
            # a value without behaviour, which the fix left as the tree before it handled it
            elif kind in UNCHANGED_KINDS:
                if _returns_alike(observe(kwargs, text, base=True)[0], ref):
                    return "unchanged", ref
            return None, ref
        if ref[0] != "raise" or exc is None:
            return None, ref
        site = rejection_site(exc, targets)
        if site == "explicit":
            return "explicit", ref
        if site != "propagated" and not failure_pinnable:
            return None, ref
        before = observe(kwargs, text, base=True)[0]
        if site == "propagated":
            same_type = before[0] == "raise" and tuple(before[1]) == tuple(ref[1])
            return ("propagated" if same_type else None), ref
        if before[0] == "raise":
            # a failed operation, before the fix too: a fix may fail otherwise, not return, nor
            # fail at the call where gold's iterator fails when read
            lazy = Extra(lazy=True) if extra_of(ref).get("lazy") else Extra()
            return "raised_before", ("raise", ("builtins", "Exception"), {}, lazy)
        return None, ref

    reach_code = compile(marked(tree, calls), "<call>", "eval")
    declared_text = ast.unparse(tree)
    whole_calls = (
        (FRESH_RESULT, f"(_swe_abs_spoil({declared_text}), {declared_text})[1]"),
        (SETTINGS, f"({declared_text}, _swe_abs_settings())[1]"),
    )

    def probe_example(kwargs: dict[str, Any]) -> None:
        env = {**caller.namespace, **{k: fresh_copy(v) for k, v in kwargs.items()}}
        reached: set[int] = set()

        def reach(i: int, callee: Any) -> Any:
            reached.add(i)
            return callee

        # gold's observation of the call as declared (the marks return the callee unchanged)
        declared = caller.observe_code(kwargs, reach_code, limit, None, {**HELPERS, REACH: reach})
        if declared[0] == "timeout":
            stats["timeouts"] += 1
            return

        @functools.cache
        def before_declared() -> Observation:
            """The tree before the fix on the declared call (read once, where a rule needs it)."""
            return observe(kwargs, declared_text, base=True)[0]

        if declared[0] == "ok" and stats["examples"] <= _WHOLE_CALL_EXAMPLES:
            for whole, whole_text in whole_calls:
                if counts.get((whole,), 0) >= (1 if whole == SETTINGS else per_kind):
                    continue
                pinned = whole_call_rule(whole, kwargs, whole_text, declared, before_declared)
                if pinned is not None:
                    add_test(kwargs, whole_text, pinned, (whole,), rule=whole, slot="call",
                             kind=whole)  # fmt: skip

        for n, call in enumerate(calls):
            if n not in reached:
                stats["unreached"] += 1
                continue
            values: dict[str, Any] = {}
            for slot, node in argument_slots(call):
                try:
                    values[slot] = eval(compile(ast.Expression(node), "<arg>", "eval"), env)  # noqa: S307
                except Exception:  # noqa: BLE001 - an argument that fails on its own
                    continue
            for slot, value in values.items():
                others = [v for s, v in values.items() if s != slot]
                for kind, code in replacements(value, subject=slot == "arg0"):
                    if time.monotonic() > deadline or stats["timeouts"] >= max_timeouts:
                        raise _Enough()
                    # a one-shot iterator is counted: how far the call reads it ahead shows
                    text = replaced(tree, call, slot, code)
                    text = counted_call(text) if kind == "iterator" else text
                    stats["probes"] += 1
                    ref, exc = observe(kwargs, text, base=False)
                    if ref[0] == "timeout":
                        stats["timeouts"] += 1
                        continue
                    pinnable = not _may_return_early(kind, value, others)
                    rule, pinned = rule_for(
                        ref, exc, kind, kwargs, text, declared, before_declared, pinnable
                    )
                    if ref[0] == "ok" and rule is None:
                        stats["returned"] += 1
                        continue
                    key = (n, slot, kind, tuple(ref[1]) if ref[0] == "raise" else "ok", rule)
                    if rule is None or counts.get(key, 0) >= per_kind:
                        stats["not_pinned"] += rule is None
                        continue
                    add_test(kwargs, text, pinned, key, rule=rule, slot=slot, kind=kind)

    def add_test(
        kwargs: dict[str, Any], text: str, pinned: Observation, key: tuple[Any, ...], **about: str
    ) -> None:
        """Emit the test pinning ``pinned`` on ``text`` (counted under ``key``)."""
        name = f"{job.get('test_name', 'test_foreign')}_{len(tests) + 1}"
        try:
            test = emit_test(spec, caller, kwargs, 0, pinned, name, call_text=text)
        except Unexpressible as err:
            unexpressible[err.type_name] = unexpressible.get(err.type_name, 0) + 1
            return
        if test is None:
            return
        counts[key] = counts.get(key, 0) + 1
        tests.append({"test": test, **about, "outcome": outcome_class(pinned)})
        if len(tests) >= max_tests:
            raise _Enough()

    def whole_call_rule(
        rule: str, kwargs: dict[str, Any], text: str, declared: Observation,
        before_declared: Callable[[], Observation],
    ) -> Observation | None:  # fmt: skip
        """What ``text`` (the declared call inside :data:`FRESH_RESULT`'s or :data:`SETTINGS`'s
        expression) pins on this example, or None: gold's observation of it, where gold returns
        the declared call's value there, and the tree before the fix, where it returned on the
        declared call, does so too (a result it shared between calls, settings it changed, are
        no fix's to keep)."""
        SPOILED.clear()
        ref = observe(kwargs, text, base=False)[0]
        if ref[0] != "ok":
            return None
        # nothing mutable came back, or gold itself shares it between calls: nothing to pin
        if rule == FRESH_RESULT and not (SPOILED[:1] == [True] and _returns_alike(ref, declared)):
            return None
        before = before_declared()
        if before[0] == "ok":
            again = observe(kwargs, text, base=True)[0]
            if not _returns_alike(again, before if rule == FRESH_RESULT else ref):
                return None
        return ref

    done = [False]

    @settings({**job, "shrink": False})
    @given(**strategies(spec, subclasses=False))
    def draw(**kwargs: Any) -> None:
        # the search ends by returning early: an exception would make Hypothesis replay it
        if done[0]:
            return
        stats["examples"] += 1
        try:
            probe_example(kwargs)
        except _Enough:
            done[0] = True

    try:
        draw()
    except Exception as exc:  # noqa: BLE001 - Hypothesis errors (e.g. a bad strategy) are reported
        return {"error": f"{type(exc).__name__}: {exc}"[:500], "tests": tests, **stats}
    return {"tests": tests, "unexpressible": unexpressible, **stats}
