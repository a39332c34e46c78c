"""The ``explore`` job: characterisation tests of the reference. Hypothesis drives it alone,
with a line tracer, over every form of the call and the whole declared domain (subclass
instances included); every input that brings a new combination of (slice lines executed,
argument classes and facets (:mod:`.facets`), call form, outcome class and facets, arguments
changed or not) is a candidate test, and a greedy choice keeps at most ``max_tests``: first
those reaching slice lines no test covered yet (the coverage-driven stage), then those adding
the most new classes, then the rest in the order drawn. Every drawn value must be expressible
as test code; the ones that are not are counted by type and reported. With ``domain: near`` the
calls are the declared ones with one argument edited (:mod:`.near`)."""

from __future__ import annotations

import ast
import os
import sys
from typing import Any

from .calls import Caller, Unexpressible, emit_test, form_strategy, settings, strategies
from .facets import facets, relations
from .literals import harvest
from .near import DOCUMENTED_KEY, EDIT_KEY, near_calls
from .swap import Runner
from .values import equal, extra_of, normalise, outcome_class


def shape(value: Any) -> tuple[Any, ...]:
    """A coarse class of a value: its type, a size bucket (0, 1, many) or sign, bool values."""
    if isinstance(value, bool) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, int | float):
        return (type(value).__name__, (value > 0) - (value < 0))
    try:
        n = len(value)
    except TypeError:
        return (type(value).__name__,)
    return (type(value).__name__, min(n, 2))


def select(
    found: list[tuple[set[Any], set[Any], dict[str, Any]]], limit: int
) -> list[dict[str, Any]]:
    """Greedy choice of at most ``limit`` tests: first those reaching slice lines no test
    covered yet (the coverage-driven stage), then those with a documented edit (an argument and
    a kind of its documented domain, :mod:`.near`) no test has yet, then those with an edit (an
    argument, what was done to it: ``newline after``, ``item upper``, and the outcome class:
    ``returns``, ``raises builtins.LookupError``) no test has yet, then,
    one at a time, the test that adds the most not yet covered features (lines executed, each
    argument's class, each pair of argument classes, the call's form, the outcome's class, the
    values' facets); ties go to the earlier (simpler) example. When no example adds anything,
    the budget is filled with the remaining examples in the order they were drawn (each of a
    class of its own, see :func:`_features`): a wrong patch may differ from the reference on
    one input of many alike."""
    chosen: list[dict[str, Any]] = []
    lines_done: set[Any] = set()
    feats_done: set[Any] = set()
    # each example with its documented features and its edit's, found once
    pool = [
        (
            *item,
            {f for f in item[1] if f[0] == "documented"},
            {f for f in item[1] if f[0] == "edit"},
        )
        for item in found
    ]
    while pool and len(chosen) < limit:
        gains = [
            (
                len(item[0] - lines_done),
                len(item[3] - feats_done),
                len(item[4] - feats_done),
                len(item[1] - feats_done),
            )  # fmt: skip
            for item in pool
        ]
        best = max(range(len(pool)), key=lambda i: (gains[i], -i))
        if gains[best] == (0, 0, 0, 0):
            break
        fresh, feats, test, _, _ = pool.pop(best)
        lines_done |= fresh
        feats_done |= feats
        chosen.append(test)
    chosen += [item[2] for item in pool[: max(limit - len(chosen), 0)]]
    return chosen


def used_names(form: str) -> set[str]:
    """The names a form of the call reads (an argument it omits is not among them)."""
    return {n.id for n in ast.walk(ast.parse(form, mode="eval")) if isinstance(n, ast.Name)}


def _features(
    kwargs: dict[str, Any], form: int, out: tuple, lines: frozenset, used: set[str] | None = None
) -> set[Any]:
    """The example's features; the arguments' classes, facets and relations count only for the
    arguments the form of the call passes (``used``; all when None)."""
    passed = {k: v for k, v in kwargs.items() if used is None or k in used}
    shapes = sorted((k, shape(v)) for k, v in passed.items())
    result_class = out[1] if out[0] == "raise" else shape(out[1])
    features = {("lines", lines), ("out", out[0], repr(result_class)), ("form", form)}
    before = {k: normalise(kwargs[k]) for k in (out[2] or {})}
    features.add(("changed", not equal(out[2] or {}, before)))
    features |= {("in", k, repr(v)) for k, v in shapes}
    features |= {("facet", k, *f) for k, v in passed.items() for f in facets(v)}
    features |= relations(passed)
    if out[0] == "ok":
        features |= {("out_facet", *f) for f in facets(out[1])}
        extra = extra_of(out)
        if extra.get("shared") is not None:  # the result is (part of) an argument, or not
            features.add(("shares", bool(extra["shared"])))
        if extra.get("steps"):  # how far the call itself read its iterators: none, one, more
            features.add(("read_at_call", tuple(min(n, 2) for n in extra["steps"][0])))
    features |= {
        ("pair", a[0], repr(a[1]), b[0], repr(b[1]))
        for i, a in enumerate(shapes)
        for b in shapes[i + 1 :]
    }
    return features


def _by_position(
    spec: dict[str, Any], caller: Caller, kwargs: dict[str, Any], limit: float, name: str
) -> list[dict[str, Any]]:
    """One test per form of the call that passes keyword arguments by position (a fix that
    makes such a parameter keyword-only fails it) or positional arguments by name (a fix that
    renames the parameter fails it), on the first example drawn."""
    out = []
    for form in range(caller.drawn, len(caller.forms)):
        how = "position" if form < caller.by_position else "keyword"
        ref = caller.observe(kwargs, form, limit)
        try:
            test = emit_test(spec, caller, kwargs, form, ref, f"{name}_by_{how}_{form}")
        except Unexpressible:
            continue
        if test is not None:
            out.append({"test": test, "lines": [], "new_lines": [],
                        "target": f"by {how}: {caller.forms[form]}"})  # fmt: skip
    return out


def job_explore(runner: Runner, job: dict[str, Any]) -> dict[str, Any]:
    from hypothesis import given

    runner.apply(job.get("variant"))
    spec = job["spec"]
    caller = Caller(spec)
    used = [used_names(form) for form in caller.forms]
    limit = float(job.get("call_timeout", 1.0))
    max_tests = int(job.get("max_tests", 10))
    targets = {
        os.path.join(runner.repo, p): set(lines) for p, lines in job.get("targets", {}).items()
    }
    uncovered = {
        os.path.join(runner.repo, p): set(lines) for p, lines in job.get("lines", {}).items()
    }
    hit: set[tuple[str, int]] = set()
    kept: list[tuple[set[Any], set[Any], dict[str, Any]]] = []
    seen_keys: set[Any] = set()
    unexpressible: dict[str, int] = {}
    first: list[dict[str, Any]] = []  # the first example of the call as written

    def tracer(frame: Any, _event: str, _arg: Any) -> Any:
        if frame.f_code.co_filename not in targets:
            return None

        def local(frame: Any, event: str, _arg: Any) -> Any:
            if event == "line":
                hit.add((frame.f_code.co_filename, frame.f_lineno))
            return local

        return local

    near = job.get("domain") == "near"
    if near:  # near inputs (:mod:`.near`) in place of the declared ones: one edited argument
        constants = harvest(targets)  # the literals on the target lines (built above)
        domain = {"_near": near_calls(spec, constants)}
    else:
        domain = strategies(spec)

    @settings({**job, "shrink": False})
    @given(_form=form_strategy(caller), **domain)
    def probe(_form: int, **drawn: Any) -> None:
        kwargs = dict(drawn["_near"]) if near else drawn
        tag = kwargs.pop(DOCUMENTED_KEY, None)
        edit = kwargs.pop(EDIT_KEY, None)
        hit.clear()
        sys.settrace(tracer)
        try:
            out = caller.observe(kwargs, _form, limit)
        finally:
            sys.settrace(None)
        if out[0] == "timeout":
            return
        if _form == 0 and not first:
            first.append(dict(kwargs))
        lines = frozenset((p, ln) for p, ln in hit if ln in targets.get(p, ()))
        features = _features(kwargs, _form, out, lines, used[_form])
        # an edit of an argument this form of the call omits did nothing: no tag
        if tag is not None and tag[0] in used[_form]:  # kept first by :func:`select`, once
            features.add(("documented", *tag))  # per (argument, kind)
        if edit is not None and edit[0] in used[_form]:  # kept next, once per (argument,
            # label of the edit, outcome): an edit whose effect needs another argument's value
            # (an error handler's name upper-cased, beside bytes that fail to decode) is kept
            # where it raised as well as where it returned
            edit = (*edit, outcome_class(out))
            features.add(("edit", *edit))
        else:
            edit = None
        key = frozenset(f for f in features if f[0] != "pair")
        if key in seen_keys:
            return
        seen_keys.add(key)
        fresh = {(p, ln) for p, ln in lines if ln in uncovered.get(p, ())}
        name = f"{job.get('test_name', 'test_explore')}_{len(seen_keys)}"
        try:
            test = emit_test(spec, caller, kwargs, _form, out, name)
        except Unexpressible as exc:
            unexpressible[exc.type_name] = unexpressible.get(exc.type_name, 0) + 1
            return
        if test is None:
            return
        item = {"test": test, "lines": sorted({ln for _, ln in lines}),
                "new_lines": sorted({ln for _, ln in fresh})}  # fmt: skip
        if edit is not None:
            item["edit"] = f"{edit[0]}: {edit[1]}, {edit[2]}"
        kept.append((fresh, features, item))

    try:
        probe()
    except Exception as exc:  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {exc}"[:500], "tests": [],
                "unexpressible": unexpressible}  # fmt: skip
    tests = select(kept, max_tests)
    if not near and first:
        tests += _by_position(spec, caller, first[0], limit, job.get("test_name", "test_explore"))
    edits_drawn = {f for _, features, _ in kept for f in features if f[0] == "edit"}
    edits_kept = {t["edit"] for t in tests if "edit" in t}
    covered = {}
    for p in targets:
        rel = os.path.relpath(p, runner.repo)
        covered[rel] = sorted({ln for t in tests for ln in t["lines"]})
    return {"tests": tests, "covered": covered, "classes": len(seen_keys),
            "forms": caller.forms, "unexpressible": unexpressible,
            "edits": {"drawn": len(edits_drawn), "kept": len(edits_kept)}}  # fmt: skip
