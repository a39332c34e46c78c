"""The warm test runner that runs *inside* the sandbox (never on the host).

    python3 jail_runner.py plan.json

It collects the plan's test files once with pytest, then runs each job in a forked child of that
warm process, so a job costs a fork and the tests it runs — no interpreter start, no pytest
start-up, no re-import (mutmut's fork-server idea, at line granularity). A job names a *variant*:
new contents for some source files. The child swaps them in place: the changed functions get the
new code objects (``__code__``), so every reference to them — ``from m import f`` in a test
module, wrappers such as ``curry(f)`` — runs the variant; changes beyond function bodies fall back
to executing the new module source and moving the changed objects over. Modules not yet imported
are served from the variant's text by the import system.

Jobs:

- ``tests``: run test node ids (all collected when ``tests`` is null), per-test status
  (PASSED/FAILED/ERROR/SKIPPED/XFAIL/XPASS), optionally line coverage per test (coverage.py
  contexts switched to each node id), stopping at the first failure when asked.
- ``differential``: Hypothesis drives a reference and a variant through the same call on the
  same generated inputs; the first (shrunk) disagreement becomes a regression test.
- ``explore``: Hypothesis drives the reference alone with a line tracer; every input that reaches
  a not yet covered target line becomes a characterisation test.

Each child runs under a wall-clock limit; on expiry its whole process group is killed (again and
again until none is left, so a fork bomb cannot outrun it) and the job reports ``timed_out``.
Results go to the plan's ``result_path`` as JSON. Only the standard library, pytest, coverage and
Hypothesis are needed (they come from the sandbox's package folder).
"""

from __future__ import annotations

import copy
import gc
import io
import json
import os
import select
import signal
import struct
import sys
import time
import traceback
import types
from typing import Any

STATUS_PASSED = "PASSED"
ITER_LIMIT = 64  # items taken from a returned iterator when comparing outputs

# --------------------------------------------------------------------------- output normalisation
NORMALISE_SOURCE = '''
def _swe_abs_norm(value, _depth=0):
    """Comparable form of a value: iterators are materialised (first 64 items)."""
    import itertools as _it
    if _depth > 8:
        return repr(value)
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_swe_abs_norm(v, _depth + 1) for v in value) if type(value) in (list, tuple) else ("<seq>", type(value).__name__, [_swe_abs_norm(v, _depth + 1) for v in value])
    if isinstance(value, dict):
        items = [(_swe_abs_norm(k, _depth + 1), _swe_abs_norm(v, _depth + 1)) for k, v in value.items()]
        return dict(items) if type(value) is dict else ("<map>", type(value).__name__, items)
    if isinstance(value, (set, frozenset)):
        return value
    if hasattr(value, "__next__") or isinstance(value, (range, map, filter, zip)):
        return ("<iter>", [_swe_abs_norm(v, _depth + 1) for v in _it.islice(iter(value), 64)])
    text = repr(value)
    if " at 0x" in text:
        return ("<obj>", type(value).__name__)
    return ("<obj>", type(value).__name__, text)
'''
_ns: dict[str, Any] = {}
exec(NORMALISE_SOURCE, _ns)  # one definition, used here and pasted into emitted tests
normalise = _ns["_swe_abs_norm"]


class _CallTimeout(BaseException):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise _CallTimeout()


def outcome(call: Any, limit: float) -> tuple[str, Any]:
    """("ok", normalised value) or ("raise", exception type name); ("timeout", None)."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return "ok", normalise(call())
    except _CallTimeout:
        return "timeout", None
    except RecursionError:
        return "raise", "RecursionError"
    except Exception as exc:  # noqa: BLE001 - the candidate's exception is the observation
        return "raise", type(exc).__name__
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def same(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """Agreement as the generator judges it: both raised (any types) or equal values."""
    if a[0] == "raise" and b[0] == "raise":
        return True
    if a[0] != b[0]:
        return False
    try:
        return bool(a[1] == b[1]) and type(a[1]) is type(b[1])
    except Exception:  # noqa: BLE001
        return repr(a[1]) == repr(b[1])


def literal(value: Any) -> str | None:
    """A Python literal that evaluates back to ``value`` (None when there is none)."""
    text = repr(value)
    try:
        back = eval(text, {"__builtins__": {}}, {"inf": float("inf")})  # noqa: S307 - own repr
    except Exception:  # noqa: BLE001
        return None
    try:
        if back != value or type(back) is not type(value):
            return None
    except Exception:  # noqa: BLE001
        return None
    return text


# ------------------------------------------------------------------------------- variant swapping
def code_key(code: types.CodeType, mask: bool = False) -> tuple:
    """Everything of a code object that affects behaviour (not line numbers or file names);
    with ``mask``, nested code objects count by name only (their bodies are compared apart).
    Also the host's equivalent-mutant filter (``mutation.bytecode_equivalent``)."""
    consts = []
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            consts.append(("<code>", c.co_qualname) if mask else code_key(c))
        else:
            consts.append((type(c).__name__, repr(c)))
    return (
        code.co_code,
        tuple(consts),
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        code.co_exceptiontable,
    )


class Unsupported(Exception):
    pass


_FUNCTION_FLAGS = 0x1 | 0x2  # CO_OPTIMIZED | CO_NEWLOCALS: a function body, not a class body


def _changed_code(old: types.CodeType, new: types.CodeType, out: list) -> None:
    if code_key(old, mask=True) != code_key(new, mask=True):
        raise Unsupported(f"{old.co_qualname}: change outside function bodies")
    olds = [c for c in old.co_consts if isinstance(c, types.CodeType)]
    news = [c for c in new.co_consts if isinstance(c, types.CodeType)]
    if [c.co_qualname for c in olds] != [c.co_qualname for c in news]:
        raise Unsupported(f"{old.co_qualname}: functions added or removed")
    for o, n in zip(olds, news, strict=True):
        if o.co_flags & _FUNCTION_FLAGS == _FUNCTION_FLAGS:
            if code_key(o) != code_key(n):
                if o.co_freevars != n.co_freevars:
                    raise Unsupported(f"{o.co_qualname}: closure changed")
                out.append((o, n))
        else:
            _changed_code(o, n, out)


class Runner:
    """Everything the warm process keeps: collected items, the function index, the plan."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.repo = plan["repo"]
        self.items: list[Any] = []
        self.by_id: dict[str, Any] = {}
        self.collect_errors: list[str] = []
        self.reports: list[Any] = []
        self.overrides: dict[str, str] = {}
        self._functions: dict[tuple[str, str, int], list[types.FunctionType]] | None = None
        self.swap_modes: list[str] = []  # how the last variant went in: code / exec / import

    # -- function index (built in the warm parent once, inherited by every child) -----------
    def functions(self) -> dict[tuple[str, str, int], list[types.FunctionType]]:
        if self._functions is None:
            index: dict[tuple[str, str, int], list[types.FunctionType]] = {}
            for obj in gc.get_objects():
                if isinstance(obj, types.FunctionType):
                    c = obj.__code__
                    if c.co_filename.startswith(self.repo):
                        key = (c.co_filename, c.co_qualname, c.co_firstlineno)
                        index.setdefault(key, []).append(obj)
            self._functions = index
        return self._functions

    def module_for(self, path: str) -> types.ModuleType | None:
        for mod in list(sys.modules.values()):
            f = getattr(mod, "__file__", None)
            if f and os.path.abspath(f) == path:
                return mod
        return None

    # -- applying a variant (in a child) ----------------------------------------------------
    def apply(self, variant: dict[str, Any] | None) -> list[tuple[Any, str, Any, Any, Any]]:
        """Swap the variant in; returns the changes [(target, kind, key, old, new)] so callers
        can toggle between reference and variant. Raises Unsupported / SyntaxError."""
        changes: list[tuple[Any, str, Any, Any, Any]] = []
        self.swap_modes = []
        if not variant:
            return changes
        files = variant.get("files", {})
        if variant.get("functions"):
            try:
                for fn_spec in variant["functions"]:
                    changes += self._swap_function(fn_spec)
                self.swap_modes.append("function")
                files = {}
            except (Unsupported, SyntaxError):
                changes = []  # nothing applied yet: fall back to the whole files
        for rel, text in files.items():
            path = os.path.join(self.repo, rel)
            mod = self.module_for(path)
            if mod is None:
                self.overrides[path] = text
                self.swap_modes.append("import")
                continue
            with open(path, encoding="utf-8") as fh:
                on_disk = fh.read()
            if on_disk == text:
                continue
            try:
                changes += self._swap_code(path, on_disk, text)
                self.swap_modes.append("code")
            except Unsupported:
                changes += self._swap_exec(mod, path, text)
                self.swap_modes.append("exec")
        for target, kind, key, _old, new in changes:
            _set(target, kind, key, new)
        return changes

    def _swap_function(self, spec: dict[str, Any]) -> list:
        """Fast path for a change inside one function body: compile just that function (in a
        class statement when it is a method, so its qualified name and ``__class__`` cell match)
        at its own line numbers, and swap its code into the live function objects."""
        import ast

        path = os.path.join(self.repo, spec["path"])
        source, cls, first = spec["source"], spec.get("class"), int(spec["first_line"])
        if cls:
            body = "".join(
                "    " + line if line.strip() else line for line in source.splitlines(True)
            )
            text, shift = f"class {cls}:\n" + body, first - 2
        else:
            text, shift = source, first - 1
        tree = ast.parse(text)
        ast.increment_lineno(tree, shift)
        module_code = compile(tree, path, "exec", dont_inherit=True)
        stack, new = [module_code], None
        while stack and new is None:
            code = stack.pop()
            for c in code.co_consts:
                if isinstance(c, types.CodeType):
                    if c.co_qualname == spec["qualname"]:
                        new = c
                        break
                    stack.append(c)
        if new is None:
            raise Unsupported(f"{spec['qualname']}: not found in the function source")
        live = self.functions().get((path, spec["qualname"], new.co_firstlineno), [])
        if not live:
            raise Unsupported(f"{spec['qualname']}: no live function object at line {first}")
        changes = []
        for fn in live:
            if fn.__code__.co_freevars != new.co_freevars:
                raise Unsupported(f"{spec['qualname']}: closure mismatch")
            changes.append((fn, "attr", "__code__", fn.__code__, new))
        return changes

    def _swap_code(self, path: str, old_text: str, new_text: str) -> list:
        old_code = compile(old_text, path, "exec", dont_inherit=True)
        new_code = compile(new_text, path, "exec", dont_inherit=True)
        pairs: list[tuple[types.CodeType, types.CodeType]] = []
        _changed_code(old_code, new_code, pairs)
        changes = []
        index = self.functions()
        for o, n in pairs:
            live = index.get((path, o.co_qualname, o.co_firstlineno), [])
            if not live:
                raise Unsupported(f"{o.co_qualname}: no live function object")
            for fn in live:
                if len(fn.__code__.co_freevars) != len(n.co_freevars):
                    raise Unsupported(f"{o.co_qualname}: closure mismatch")
                changes.append((fn, "attr", "__code__", fn.__code__, n))
        return changes

    def _swap_exec(self, mod: types.ModuleType, path: str, text: str) -> list:
        code = compile(text, path, "exec", dont_inherit=True)
        scratch = dict(mod.__dict__)
        exec(code, scratch)  # noqa: S102 - the variant, inside the sandbox
        old_funcs = _functions_of(mod.__dict__)
        new_funcs = _functions_of(scratch)
        changes: list = []
        matched_new: set[int] = set()
        for key, old in old_funcs.items():
            new = new_funcs.get(key)
            if new is None or len(old.__code__.co_freevars) != len(new.__code__.co_freevars):
                continue
            matched_new.add(id(new))
            for attr in ("__code__", "__defaults__", "__kwdefaults__"):
                changes.append((old, "attr", attr, getattr(old, attr), getattr(new, attr)))
        old_dict = mod.__dict__
        for name, value in scratch.items():
            if name.startswith("__") and name.endswith("__"):
                continue
            old_value = old_dict.get(name, _MISSING)
            if old_value is value:
                continue
            if isinstance(value, type) and isinstance(old_value, type):
                if value.__qualname__ == old_value.__qualname__:
                    for attr, v in vars(value).items():
                        if attr in ("__dict__", "__weakref__", "__module__", "__doc__"):
                            continue
                        ov = vars(old_value).get(attr, _MISSING)
                        if isinstance(v, types.FunctionType) and id(v) in matched_new:
                            continue
                        if ov is _MISSING or not _same_member(ov, v):
                            changes.append((old_value, "attr", attr, ov, v))
                    continue
            if isinstance(value, types.FunctionType) and id(value) in matched_new:
                continue
            changes.append((old_dict, "item", name, old_value, value))
        return changes


_MISSING = object()


def _same_member(a: Any, b: Any) -> bool:
    fa, fb = getattr(a, "__func__", a), getattr(b, "__func__", b)
    if isinstance(fa, types.FunctionType) and isinstance(fb, types.FunctionType):
        return False  # a method whose function was not matched by name: take the new one
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def _functions_of(namespace: dict[str, Any]) -> dict[tuple[str, int], types.FunctionType]:
    """Functions whose globals are ``namespace``, keyed by (qualname, occurrence)."""
    out: dict[tuple[str, int], types.FunctionType] = {}
    counts: dict[str, int] = {}
    found = [
        o
        for o in gc.get_objects()
        if isinstance(o, types.FunctionType) and o.__globals__ is namespace
    ]
    found.sort(key=lambda f: (f.__code__.co_qualname, f.__code__.co_firstlineno))
    for fn in found:
        q = fn.__code__.co_qualname
        n = counts.get(q, 0)
        counts[q] = n + 1
        out[(q, n)] = fn
    return out


def _set(target: Any, kind: str, key: str, value: Any) -> None:
    if kind == "attr":
        if value is _MISSING:
            try:
                delattr(target, key)
            except AttributeError:
                pass
        else:
            setattr(target, key, value)
    elif value is _MISSING:
        target.pop(key, None)
    else:
        target[key] = value


def toggle(changes: list, to_variant: bool) -> None:
    for target, kind, key, old, new in changes:
        _set(target, kind, key, new if to_variant else old)


def install_overrides(runner: Runner) -> None:
    """Serve variant text for modules imported after the swap (read by the import system)."""
    if not runner.overrides:
        return
    import importlib.machinery as machinery

    original = machinery.SourceFileLoader.get_data
    overrides = runner.overrides

    def get_data(self: Any, path: str) -> bytes:
        if path in overrides:
            return overrides[path].encode("utf-8")
        if path.endswith(".pyc"):
            raise OSError("bytecode cache disabled for variant sources")
        return original(self, path)

    machinery.SourceFileLoader.get_data = get_data  # type: ignore[method-assign]
    sys.dont_write_bytecode = True


# ------------------------------------------------------------------------------------ pytest glue
def details_of(reports: list[Any], limit: int = 1500) -> dict[str, str]:
    """Failure text per failed/errored test (the end of pytest's report)."""
    out: dict[str, str] = {}
    for r in reports:
        if r.failed:
            out[r.nodeid] = (out.get(r.nodeid, "") + str(r.longrepr))[-limit:]
    return out


def status_of(reports: list[Any]) -> dict[str, str]:
    """Per node id: the status SWE-bench's pytest parser would report."""
    out: dict[str, str] = {}
    for r in reports:
        nodeid, when = r.nodeid, r.when
        xfail = hasattr(r, "wasxfail")
        prev = out.get(nodeid)
        if when == "setup":
            if r.failed:
                out[nodeid] = "ERROR"
            elif r.skipped:
                out[nodeid] = "XFAIL" if xfail else "SKIPPED"
        elif when == "call":
            if r.failed:
                out[nodeid] = "FAILED"
            elif prev == "FAILED":
                continue  # a failed subtest keeps the test failed
            elif r.skipped:
                out[nodeid] = "XFAIL" if xfail else "SKIPPED"
            elif r.passed:
                out[nodeid] = "XPASS" if xfail else STATUS_PASSED
        elif when == "teardown" and r.failed and prev in (STATUS_PASSED, None):
            out[nodeid] = "ERROR"
    return out


class Plugin:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.runner.collect_errors.append(f"{report.nodeid}: {str(report.longrepr)[-2000:]}")

    def pytest_collection_finish(self, session: Any) -> None:
        self.runner.items = list(session.items)
        self.runner.by_id = {item.nodeid: item for item in session.items}

    def pytest_runtest_logreport(self, report: Any) -> None:
        self.runner.reports.append(report)

    def pytest_runtestloop(self, session: Any) -> bool:  # noqa: ARG002 - pytest's hook signature
        run_jobs(self.runner)
        return True


# --------------------------------------------------------------------------------------- the jobs
def job_tests(runner: Runner, job: dict[str, Any]) -> dict[str, Any]:
    ids = job.get("tests")
    items = runner.items if ids is None else [runner.by_id[i] for i in ids if i in runner.by_id]
    missing = [] if ids is None else [i for i in ids if i not in runner.by_id]
    result: dict[str, Any] = {"missing": missing}
    try:
        runner.apply(job.get("variant"))
    except SyntaxError as exc:
        return {**result, "error": f"variant does not compile: {exc}", "status": {}}
    result["swap"] = ",".join(runner.swap_modes) or "none"
    install_overrides(runner)
    cov = None
    contexts: dict[str, dict[str, list[int]]] = {}
    targets = [os.path.join(runner.repo, p) for p in runner.plan.get("target_files", [])]
    if job.get("coverage"):
        import coverage

        cov = coverage.Coverage(data_file=None, include=targets, config_file=False)
        # a project's pytest config may turn warnings into errors: coverage's are not its concern
        cov.set_option(
            "run:disable_warnings",
            ["no-data-collected", "module-not-measured", "module-not-imported", "already-imported"],
        )
        cov.start()
    statuses: dict[str, str] = {}
    details: dict[str, str] = {}
    durations: dict[str, float] = {}
    for i, item in enumerate(items):
        if cov is not None:
            cov.switch_context(item.nodeid)
        runner.reports = []
        nextitem = items[i + 1] if i + 1 < len(items) else None
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        statuses.update(status_of(runner.reports))
        if job.get("durations"):
            durations[item.nodeid] = round(sum(r.duration for r in runner.reports), 5)
        if job.get("details"):
            details.update(details_of(runner.reports))
        if job.get("stop_first") and statuses.get(item.nodeid) in ("FAILED", "ERROR"):
            break
    if details:
        result["details"] = details
    if durations:
        result["durations"] = durations
    if cov is not None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cov.stop()
            data = cov.get_data()
        for path in targets:
            for line, ctxs in (data.contexts_by_lineno(path) or {}).items():  # noqa: B007
                for ctx in ctxs:
                    rel = os.path.relpath(path, runner.repo)
                    contexts.setdefault(ctx, {}).setdefault(rel, []).append(line)
    result.update(status=statuses, coverage=contexts or None)
    return result


def _strategies(spec: dict[str, Any]) -> dict[str, Any]:
    from hypothesis import strategies as st

    env = {"st": st}
    return {name: eval(expr, env) for name, expr in spec["args"].items()}  # noqa: S307


def _caller(spec: dict[str, Any]) -> Any:
    namespace: dict[str, Any] = {}
    exec(spec.get("setup", ""), namespace)  # noqa: S102 - the instance's own harness code
    call_code = compile(spec["call"], "<call>", "eval")

    def call(kwargs: dict[str, Any]) -> Any:
        return eval(call_code, namespace, copy.deepcopy(kwargs))  # noqa: S307

    return call


def _settings(job: dict[str, Any]) -> Any:
    from hypothesis import HealthCheck, Phase, settings

    phases = [Phase.generate, Phase.shrink] if job.get("shrink", True) else [Phase.generate]
    return settings(
        max_examples=int(job.get("max_examples", 200)),
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=phases,
        report_multiple_bugs=False,
    )


class _Disagree(Exception):
    pass


def job_differential(runner: Runner, job: dict[str, Any]) -> dict[str, Any]:
    from hypothesis import given

    spec = job["spec"]
    # The reference is the tree on disk (the gold tree); `changes` toggles the variant in and out.
    changes = runner.apply(job.get("variant"))
    if runner.overrides:
        return {"error": "the variant changes a module that is not imported: no toggling"}
    call = _caller(spec)
    limit = float(job.get("call_timeout", 1.0))
    seen: list[dict[str, Any]] = []
    examples = [0]

    @_settings(job)
    @given(**_strategies(spec))
    def probe(**kwargs: Any) -> None:
        examples[0] += 1
        toggle(changes, False)
        a = outcome(lambda: call(kwargs), limit)
        toggle(changes, True)
        b = outcome(lambda: call(kwargs), limit)
        toggle(changes, False)
        if a[0] == "timeout":
            return  # the reference itself is too slow on this input: not a usable test
        if not same(a, b):
            seen.append({"kwargs": copy.deepcopy(kwargs), "reference": a, "variant": b})
            raise _Disagree()

    try:
        probe()
    except _Disagree:
        pass
    except Exception as exc:  # noqa: BLE001 - Hypothesis errors (e.g. a bad strategy) are reported
        if not seen:
            return {"error": f"{type(exc).__name__}: {exc}"[:500], "examples": examples[0]}
    if not seen:
        return {"disagreement": None, "examples": examples[0]}
    found = seen[-1]
    test = _emit_test(spec, found["kwargs"], found["reference"], job.get("test_name", "test_x"))
    return {
        "disagreement": {
            "kwargs": {k: repr(v) for k, v in found["kwargs"].items()},
            "reference": _show(found["reference"]),
            "variant": _show(found["variant"]),
        },
        "test": test,
        "examples": examples[0],
    }


def _show(out: tuple[str, Any]) -> str:
    return f"{out[0]}: {out[1]!r}"[:300]


def _emit_test(
    spec: dict[str, Any], kwargs: dict[str, Any], ref: tuple[str, Any], name: str
) -> str | None:
    lines = [f"def {name}():"]
    for stmt in spec.get("setup", "").splitlines():
        if stmt.strip():
            lines.append(f"    {stmt}")
    for key, value in kwargs.items():
        lit = literal(value)
        if lit is None:
            return None
        lines.append(f"    {key} = {lit}")
    if ref[0] == "ok":
        expected = literal(ref[1])
        if expected is None:
            return None
        lines.append(f"    assert _swe_abs_norm({spec['call']}) == {expected}")
    elif ref[0] == "raise":
        lines.append("    with pytest.raises(Exception):")
        lines.append(f"        _swe_abs_norm({spec['call']})")
    else:
        return None
    return "\n".join(lines) + "\n"


def _shape(value: Any) -> tuple[Any, ...]:
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


def _select(
    found: list[tuple[set[Any], set[Any], dict[str, Any]]], limit: int
) -> list[dict[str, Any]]:
    """Greedy choice of at most ``limit`` tests: first those reaching slice lines no test
    covered yet (the coverage-driven stage), then, one at a time, the test that adds the most
    not yet covered features (lines executed, each argument's class, each pair of argument
    classes, the outcome's class); ties go to the earlier (simpler) example."""
    chosen: list[dict[str, Any]] = []
    lines_done: set[Any] = set()
    feats_done: set[Any] = set()
    pool = list(found)
    while pool and len(chosen) < limit:
        gains = [(len(item[0] - lines_done), len(item[1] - feats_done)) for item in pool]
        best = max(range(len(pool)), key=lambda i: (gains[i], -i))
        if gains[best] == (0, 0):
            break
        fresh, feats, test = pool.pop(best)
        lines_done |= fresh
        feats_done |= feats
        chosen.append(test)
    return chosen


def job_explore(runner: Runner, job: dict[str, Any]) -> dict[str, Any]:
    """Characterisation tests of the reference: Hypothesis inputs, each kept when it brings a
    new (slice lines executed, input classes, outcome class) combination, up to ``max_tests``;
    inputs reaching a not yet covered slice line come first (the coverage-driven stage)."""
    from hypothesis import given

    runner.apply(job.get("variant"))
    spec = job["spec"]
    call = _caller(spec)
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

    def tracer(frame: Any, _event: str, _arg: Any) -> Any:
        path = frame.f_code.co_filename
        if path not in targets:
            return None

        def local(frame: Any, event: str, _arg: Any) -> Any:
            if event == "line":
                hit.add((frame.f_code.co_filename, frame.f_lineno))
            return local

        return local

    @_settings({**job, "shrink": False})
    @given(**_strategies(spec))
    def probe(**kwargs: Any) -> None:
        hit.clear()
        sys.settrace(tracer)
        try:
            out = outcome(lambda: call(kwargs), limit)
        finally:
            sys.settrace(None)
        if out[0] == "timeout":
            return
        lines = frozenset((p, ln) for p, ln in hit if ln in targets.get(p, ()))
        result_class = out[1] if out[0] == "raise" else _shape(out[1])
        key = (
            lines,
            tuple(sorted((k, _shape(v)) for k, v in kwargs.items())),
            out[0],
            result_class,
        )
        if key in seen_keys:
            return
        seen_keys.add(key)
        fresh = {(p, ln) for p, ln in lines if ln in uncovered.get(p, ())}
        name = f"{job.get('test_name', 'test_explore')}_{len(seen_keys)}"
        test = _emit_test(spec, kwargs, out, name)
        if test is None:
            return
        shapes = sorted((k, _shape(v)) for k, v in kwargs.items())
        features = {("lines", lines), ("out", out[0], repr(result_class))}
        features |= {("in", k, repr(v)) for k, v in shapes}
        features |= {
            ("pair", a[0], repr(a[1]), b[0], repr(b[1]))
            for i, a in enumerate(shapes)
            for b in shapes[i + 1 :]
        }
        kept.append(
            (
                fresh,
                features,
                {
                    "test": test,
                    "lines": sorted({ln for _, ln in lines}),
                    "new_lines": sorted({ln for _, ln in fresh}),
                },
            )
        )

    try:
        probe()
    except Exception as exc:  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {exc}"[:500], "tests": []}
    tests = _select(kept, max_tests)
    covered = {}
    for p in targets:
        rel = os.path.relpath(p, runner.repo)
        covered[rel] = sorted({ln for t in tests for ln in t["lines"]})
    return {"tests": tests, "covered": covered, "classes": len(seen_keys)}


JOBS = {"tests": job_tests, "differential": job_differential, "explore": job_explore}


# --------------------------------------------------------------------------------- fork and wait
def _send(fd: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload, default=repr).encode("utf-8")
    os.write(fd, struct.pack(">Q", len(data)))
    view = memoryview(data)
    while view:
        n = os.write(fd, view[:65536])
        view = view[n:]


def _kill_group(pid: int, reaped: bool = False) -> bool:
    """SIGKILL the child and its process group until the group is empty, reaping the child
    (unless ``reaped`` already); True when the child is reaped. The child is also killed by
    pid: one not yet scheduled since the fork may not have joined its group."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not reaped:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            if reaped:
                break
        if not reaped:
            try:
                reaped = os.waitpid(pid, os.WNOHANG)[0] == pid
            except ChildProcessError:
                reaped = True
        time.sleep(0.005)
    return reaped


def _enter_own_group() -> None:
    """In the child: lead a process group of its own (the parent sets it too, see run_child)."""
    os.setpgid(0, 0)


def _fork() -> int:
    for attempt in range(50):
        try:
            return os.fork()
        except BlockingIOError:  # process limit reached (a fork bomb being cleaned up)
            time.sleep(0.05 * (attempt + 1))
    return os.fork()


def run_child(runner: Runner, job: dict[str, Any]) -> dict[str, Any]:
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    pid = _fork()
    if pid == 0:  # the child
        os.close(read_fd)
        try:
            _enter_own_group()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            result = JOBS[job["kind"]](runner, job)
        except BaseException as exc:  # noqa: BLE001 - whatever happens, report it
            result = {
                "error": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc()[-3000:],
            }
        try:
            _send(write_fd, result)
        finally:
            os._exit(0)
    # The parent sets the child's group too: a child not yet scheduled when its limit expires
    # would otherwise not be in the group that is killed, and the wait below would never end.
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child already did it (or has exited)
    os.close(write_fd)
    timeout = float(job.get("timeout", 60))
    chunks: list[bytes] = []
    timed_out = False
    while True:
        left = timeout - (time.monotonic() - started)
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([read_fd], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(read_fd)
    if not (timed_out and _kill_group(pid)):
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    _kill_group(pid, reaped=True)  # leftovers of the child's process group (none, usually)
    elapsed = round(time.monotonic() - started, 4)
    if timed_out:
        return {"timed_out": True, "seconds": elapsed, "status": {}}
    raw = b"".join(chunks)
    if len(raw) < 8:
        return {
            "error": "the job's process died without a result",
            "seconds": elapsed,
            "status": {},
        }
    (size,) = struct.unpack(">Q", raw[:8])
    try:
        result = json.loads(raw[8 : 8 + size].decode("utf-8"))
    except ValueError:
        return {"error": "truncated result", "seconds": elapsed, "status": {}}
    result["seconds"] = elapsed
    return result


def killed(result: dict[str, Any]) -> bool:
    return bool(result.get("timed_out")) or any(
        s in ("FAILED", "ERROR") for s in (result.get("status") or {}).values()
    )


def resolve(job: dict[str, Any], results: dict[str, Any]) -> dict[str, Any] | None:
    """Fill a job's dependencies on earlier results; a dict result means "do not run"."""
    gate = job.get("skip_if_killed")
    if gate is not None and gate in results and killed(results[gate]):
        return {"skipped": "killed", "status": {}}
    sel = job.get("select_from")
    if sel is not None:
        base = results.get(sel["job"]) or {}
        contexts = base.get("coverage") or {}
        passed = {t for t, s in (base.get("status") or {}).items() if s == STATUS_PASSED}
        chosen = set()
        for ctx, files in contexts.items():
            if ctx not in passed:
                continue
            for path, lines in sel["lines"].items():
                if set(lines) & set(files.get(path, ())):
                    chosen.add(ctx)
        order = [item.nodeid for item in RUNNER.items if item.nodeid in chosen]
        if not order:
            return {"no_tests": True, "status": {}}
        job["tests"] = order
        clean = sum((base.get("durations") or {}).get(t, 0.0) for t in order)
        factor = float(sel.get("timeout_factor", 10.0))
        job["timeout"] = min(
            float(job.get("timeout", 60)), factor * clean + float(sel.get("timeout_base", 1.0))
        )
    budget = job.get("timeout_from")
    if budget is not None:  # factor x the clean time of these tests on the reference, + base
        base = results.get(budget["job"]) or {}
        if budget.get("whole_job"):  # the reference job's wall time (it ran the same tests)
            clean = float(base.get("seconds") or 0.0)
        else:
            durations = base.get("durations") or {}
            tests = job.get("tests") or list(durations)
            clean = sum(durations.get(t, 0.0) for t in tests)
        scaled = float(budget.get("factor", 10.0)) * clean + float(budget.get("base", 1.0))
        current = float(job.get("timeout", 60))
        # "at_least": a slow machine must not turn a correct candidate into a timeout
        job["timeout"] = max(current, scaled) if budget.get("at_least") else min(current, scaled)
    unc = job.get("uncovered_from")
    if unc is not None:
        job.setdefault("targets", unc["targets"])
        base = results.get(unc["job"]) or {}
        seen: dict[str, set[int]] = {}
        for files in (base.get("coverage") or {}).values():
            for path, lines in files.items():
                seen.setdefault(path, set()).update(lines)
        job["lines"] = {p: sorted(set(ls) - seen.get(p, set())) for p, ls in unc["targets"].items()}
    return None


RUNNER: Runner


def run_jobs(runner: Runner) -> None:
    global RUNNER
    RUNNER = runner
    runner.functions()  # index once, in the warm parent
    if any(job["kind"] in ("differential", "explore") for job in runner.plan.get("jobs", [])):
        import hypothesis  # noqa: F401 - imported once here, not in every child

    results: dict[str, Any] = {}
    for job in runner.plan.get("jobs", []):
        early = resolve(job, results)
        results[job["id"]] = early if early is not None else run_child(runner, job)
        if "select_from" in job and early is None:  # which covering tests were selected
            results[job["id"]].setdefault("ran", job["tests"])
    payload = {
        "collected": [item.nodeid for item in runner.items],
        "collect_errors": runner.collect_errors,
        "jobs": results,
    }
    with open(runner.plan["result_path"], "w", encoding="utf-8") as fh:
        json.dump(payload, fh, default=repr)


def main(plan_path: str) -> int:
    with open(plan_path, encoding="utf-8") as fh:
        plan = json.load(fh)
    runner = Runner(plan)
    os.chdir(plan["repo"])
    for p in reversed(plan.get("sys_path", [])):
        sys.path.insert(0, p)
    sys.dont_write_bytecode = True
    import pytest

    args = [
        *plan["test_files"],
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "--continue-on-collection-errors",
        *plan.get("pytest_args", []),
    ]
    sink = io.StringIO()
    real_stdout = sys.stdout
    sys.stdout = sink
    try:
        code = pytest.main(args, plugins=[Plugin(runner)])
    finally:
        sys.stdout = real_stdout
    if not os.path.exists(plan["result_path"]):  # pytest stopped before the jobs (usage error)
        with open(plan["result_path"], "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "collected": [],
                    "collect_errors": runner.collect_errors or [sink.getvalue()[-3000:]],
                    "jobs": {},
                    "pytest_exit": int(code),
                },
                fh,
            )
    print(json.dumps({"pytest_exit": int(code), "jobs": len(plan.get("jobs", []))}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
