"""The ``differential`` job: Hypothesis drives a reference (the tree on disk) and a variant
through the same call, in every form (optional arguments omitted too), on the same generated
arguments (the declared domain and subclass instances of its built-in types); they disagree when
one raises and the other returns, when they raise different exception types, return different
values or types, or leave the arguments in different states. The first (shrunk) disagreement
becomes a regression test pinning the reference's observation."""

from __future__ import annotations

from typing import Any

from .calls import (
    Caller,
    Unexpressible,
    emit_test,
    form_strategy,
    fresh_copy,
    settings,
    show,
    strategies,
)
from .swap import Runner, toggle
from .values import same


class _Disagree(Exception):
    pass


def job_differential(runner: Runner, job: dict[str, Any]) -> dict[str, Any]:
    from hypothesis import given

    spec = job["spec"]
    # The reference is the tree on disk (the gold tree); `changes` toggles the variant in and out.
    changes = runner.apply(job.get("variant"))
    if runner.overrides:
        return {"error": "the variant changes a module that is not imported: no toggling"}
    toggle(changes, False)
    caller = Caller(spec)
    limit = float(job.get("call_timeout", 1.0))
    seen: list[dict[str, Any]] = []
    examples = [0]

    @settings(job)
    @given(_form=form_strategy(caller), **strategies(spec))
    def probe(_form: int, **kwargs: Any) -> None:
        examples[0] += 1
        toggle(changes, False)
        a = caller.observe(kwargs, _form, limit)
        toggle(changes, True)
        b = caller.observe(kwargs, _form, limit)
        toggle(changes, False)
        if a[0] == "timeout":
            return  # the reference itself is too slow on this input: not a usable test
        if not same(a, b):
            seen.append(
                {
                    "kwargs": {k: fresh_copy(v) for k, v in kwargs.items()},
                    "form": _form,
                    "reference": a,
                    "variant": b,
                }
            )
            raise _Disagree()

    try:
        probe()
    except _Disagree:
        pass
    except Exception as exc:  # noqa: BLE001 - Hypothesis errors (e.g. a bad strategy) are reported
        if not seen:
            return {"error": f"{type(exc).__name__}: {exc}"[:500], "examples": examples[0]}
    if not seen:
        return {"disagreement": None, "examples": examples[0], "forms": caller.forms}
    found = seen[-1]
    unexpressible: dict[str, int] = {}
    try:
        test = emit_test(spec, caller, found["kwargs"], found["form"], found["reference"],
                         job.get("test_name", "test_x"))  # fmt: skip
    except Unexpressible as exc:
        test, unexpressible = None, {exc.type_name: 1}
    return {
        "disagreement": {
            "kwargs": {k: repr(v) for k, v in found["kwargs"].items()},
            "call": caller.forms[found["form"]],
            "reference": show(found["reference"]),
            "variant": show(found["variant"]),
        },
        "test": test,
        "examples": examples[0],
        "unexpressible": unexpressible,
    }
