"""The instance's call spec as the Hypothesis generators drive it: the argument strategies (the
declared domain, plus subclass instances of its built-in types), the *forms* of the call (as
written, and with each optional argument omitted, read from the callee's signature; then, checked
once each, with keyword arguments passed by position and with positional ones passed by name), its ``iter(...)`` calls counted, one call
observed with what its result shares and reads and the arguments' state after it, and the
regression test that pins an observation.
"""

from __future__ import annotations

import ast
import copy
import inspect
from typing import Any

from .values import COUNTING, Observation, expression, extra_of, outcome, subclassed


def strategies(spec: dict[str, Any], subclasses: bool = True) -> dict[str, Any]:
    """name → strategy: the declared one, or (drawn second, so examples shrink towards the
    declared values) the same values as instances of subclasses of their built-in types
    (``subclasses=False``: the declared one alone)."""
    from hypothesis import strategies as st

    env = {"st": st}
    out = {}
    for name, expr in spec["args"].items():
        declared = eval(expr, env)  # noqa: S307 - the instance's own spec
        out[name] = st.one_of(declared, declared.map(subclassed)) if subclasses else declared
    return out


def _signature(call: ast.Call, namespace: dict[str, Any]) -> inspect.Signature | None:
    """The signature of ``call``'s callee, evaluated in ``namespace``; None when it cannot be
    read (a name bound per example, a builtin) or when the call passes ``*args`` or
    ``**kwargs`` (which parameters they bind depends on the example)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    try:
        func = eval(compile(ast.Expression(call.func), "<callee>", "eval"), dict(namespace))  # noqa: S307
        return inspect.signature(func)
    except Exception:  # noqa: BLE001 - not a callee we can read
        return None


def _omissions(call: ast.Call, namespace: dict[str, Any]) -> list[ast.Call]:
    """Copies of ``call`` without an argument that binds a parameter with a default: each such
    keyword, the trailing positionals that bind defaulted parameters, and all of them at once."""
    sig = _signature(call, namespace)
    if sig is None:
        return []
    try:
        bound = sig.bind_partial(
            *range(len(call.args)), **{k.arg: 0 for k in call.keywords if k.arg}
        )
    except TypeError:
        return []
    optional = {
        name for name in bound.arguments if sig.parameters[name].default is not inspect.Parameter.empty
        and sig.parameters[name].kind is not inspect.Parameter.VAR_POSITIONAL
    }  # fmt: skip
    positional = list(bound.arguments)[: len(call.args)]
    trailing = 0
    for name in reversed(positional):
        if name not in optional:
            break
        trailing += 1
    out: list[ast.Call] = []
    keywords = [k for k in call.keywords if k.arg in optional]
    for kw in keywords:
        out.append(ast.Call(call.func, call.args, [k for k in call.keywords if k is not kw]))
    if trailing:
        out.append(ast.Call(call.func, call.args[: len(call.args) - trailing], call.keywords))
    if (trailing and keywords) or len(keywords) > 1:
        rest = [k for k in call.keywords if k.arg not in optional]
        out.append(ast.Call(call.func, call.args[: len(call.args) - trailing], rest))
    return out


def _positional(call: ast.Call, namespace: dict[str, Any]) -> list[ast.Call]:
    """A copy of ``call`` with the keywords that name the next positional-or-keyword parameters
    passed by position instead (a fix that makes such a parameter keyword-only fails it); none
    when there are none or the callee's signature cannot be read."""
    sig = _signature(call, namespace)
    if sig is None:
        return []
    params = list(sig.parameters.values())
    by_name = {k.arg: k for k in call.keywords}
    args = list(call.args)
    for param in params[len(call.args) :]:
        if param.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD or param.name not in by_name:
            break
        args.append(by_name.pop(param.name).value)
    if len(args) == len(call.args):
        return []
    return [ast.Call(call.func, args, [k for k in call.keywords if k.arg in by_name])]


def _by_keyword(call: ast.Call, namespace: dict[str, Any]) -> list[ast.Call]:
    """A copy of ``call`` with its positional arguments that bind positional-or-keyword
    parameters passed by name instead (a fix that renames such a parameter, or dispatches on
    the first positional argument, fails it); none when there are none, when an argument is
    starred or binds ``*args``, or when the callee's signature cannot be read."""
    sig = _signature(call, namespace)
    if sig is None or len(call.args) > len(sig.parameters):
        return []
    params = list(sig.parameters.values())
    kinds = [p.kind for p in params[: len(call.args)]]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return []
    named = {k.arg for k in call.keywords}
    keep = sum(kind is inspect.Parameter.POSITIONAL_ONLY for kind in kinds)
    rest = call.args[keep:]
    moved = [
        ast.keyword(p.name, a) for p, a in zip(params[keep : len(call.args)], rest, strict=True)
    ]
    if not moved or any(k.arg in named for k in moved):
        return []
    return [ast.Call(call.func, call.args[:keep], moved + list(call.keywords))]


def counted_call(call_text: str) -> str:
    """``call_text`` with every ``iter(x)`` replaced by ``_swe_abs_counted(x)``: an iterator over
    the same items whose reading the oracle and the emitted tests observe."""
    tree = ast.parse(call_text, mode="eval")
    counted = [0]

    class _Count(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:  # noqa: N802 - ast's visitor name
            self.generic_visit(node)
            if (isinstance(node.func, ast.Name) and node.func.id == "iter"
                    and len(node.args) == 1 and not node.keywords
                    and not isinstance(node.args[0], ast.Starred)):  # fmt: skip
                counted[0] += 1
                return ast.Call(ast.Name("_swe_abs_counted", ast.Load()), node.args, [])
            return node

    new = ast.fix_missing_locations(_Count().visit(tree))
    return ast.unparse(new) if counted[0] else call_text


def call_forms(
    call_text: str, namespace: dict[str, Any], positional: bool = False, keyword: bool = False
) -> list[str]:
    """The call as written, then the same call with optional arguments omitted (for every call
    in the expression whose callee's signature can be read in the set-up's namespace); with
    ``positional``, instead, the call with keyword arguments passed by position; with
    ``keyword``, the call with positional arguments passed by name."""
    tree = ast.parse(call_text, mode="eval")
    forms = [call_text]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    other_forms = _positional if positional else _by_keyword if keyword else _omissions
    for node in calls:
        for other in other_forms(node, namespace):
            new = _replace(tree, node, other)
            text = ast.unparse(new)
            if text not in forms:
                forms.append(text)
    return forms


def position(node: ast.expr) -> tuple[int, int, int | None, int | None]:
    """Where ``node`` stands in the call's text: what tells one call from another in copies of
    the parsed call (a transformer visits copies, not the nodes it was given)."""
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def _replace(tree: ast.Expression, old: ast.Call, new: ast.Call) -> ast.Expression:
    """A copy of ``tree`` with the call at ``old``'s position replaced by ``new``."""
    key = position(old)

    class _Swap(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:  # noqa: N802 - ast's visitor name
            if position(node) == key:
                return new
            self.generic_visit(node)
            return node

    return ast.fix_missing_locations(_Swap().visit(copy.deepcopy(tree)))


class Caller:
    """The spec's set-up run once; :meth:`observe` evaluates one form of the call on a deep
    copy of the arguments and observes its result and the arguments after it."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.namespace: dict[str, Any] = {}
        exec(spec.get("setup", ""), self.namespace)  # noqa: S102 - the instance's own harness code
        drawn = [counted_call(f) for f in call_forms(spec["call"], self.namespace)]
        by_position = call_forms(spec["call"], self.namespace, positional=True)[1:]
        by_keyword = call_forms(spec["call"], self.namespace, keyword=True)[1:]
        # Hypothesis draws the first `drawn` forms (:func:`form_strategy`); the ones after them
        # pass keyword arguments by position, or positional ones by name, and are checked once
        # each: a signature, not a domain
        self.drawn = len(dict.fromkeys(drawn))
        self.forms = list(dict.fromkeys(drawn + [counted_call(f) for f in by_position]))
        self.by_position = len(self.forms)  # forms before this index and from `drawn`: by position
        self.forms = list(dict.fromkeys(self.forms + [counted_call(f) for f in by_keyword]))
        self.namespace.update(COUNTING)
        self.codes = [compile(f, "<call>", "eval") for f in self.forms]
        self.names = list(spec["args"])

    def observe(self, kwargs: dict[str, Any], form: int, limit: float) -> Observation:
        return self.observe_code(kwargs, self.codes[form], limit)

    def observe_code(
        self, kwargs: dict[str, Any], code: Any, limit: float, on_raise: Any = None,
        names: dict[str, Any] | None = None,
    ) -> Observation:  # fmt: skip
        """One call of compiled ``code`` (a form of the call, or another expression over the
        same arguments) on fresh copies of the arguments; ``names`` are further names the
        expression may read (the emitted test module's helpers)."""
        env = {**(names or {}), **{k: fresh_copy(v) for k, v in kwargs.items()}}
        return outcome(
            lambda: eval(code, self.namespace, env),  # noqa: S307
            limit,
            lambda: {k: env[k] for k in self.names if _mutable(kwargs[k])},
            on_raise,
        )


def fresh_copy(value: Any) -> Any:
    """A deep copy for one call (a memoryview over a copy of its bytes; the value itself when
    it cannot be copied)."""
    if isinstance(value, memoryview):
        data = value.tobytes()
        return memoryview(data if value.readonly else bytearray(data))
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - an uncopyable value is shared between the calls
        return value


def _mutable(value: Any) -> bool:
    """Whether a call could change the value in place (what the state comparison looks at)."""
    if value is None or isinstance(value, bool | int | float | complex | str | bytes | range):
        return False
    if type(value) in (tuple, frozenset):
        return any(_mutable(v) for v in value)
    return True


def settings(job: dict[str, Any]) -> Any:
    from hypothesis import HealthCheck, Phase
    from hypothesis import settings as hsettings

    phases = [Phase.generate, Phase.shrink] if job.get("shrink", True) else [Phase.generate]
    return hsettings(
        max_examples=int(job.get("max_examples", 200)),
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=phases,
        report_multiple_bugs=False,
    )


def form_strategy(caller: Caller) -> Any:
    from hypothesis import strategies as st

    return st.integers(0, caller.drawn - 1)


class Unexpressible(Exception):
    """A drawn value (or an expected one) has no expression as test code."""

    def __init__(self, value: Any) -> None:
        super().__init__(type(value).__name__)
        self.type_name = type(value).__name__


def _expr(value: Any) -> str:
    text = expression(value)
    if text is None:
        raise Unexpressible(value)
    return text


def emit_test(
    spec: dict[str, Any], caller: Caller, kwargs: dict[str, Any], form: int, ref: Observation,
    name: str, call_text: str | None = None,
) -> str | None:  # fmt: skip
    """The regression test pinning ``ref`` (the reference's observation) on these arguments and
    form of the call (or ``call_text``, another expression over them); None for a timeout.
    Raises :class:`Unexpressible` when a value has no expression as code."""
    kind, value, state = ref[:3]
    extra = extra_of(ref)
    if kind not in ("ok", "raise"):
        return None
    lines = [f"def {name}():"]
    lines += [f"    {stmt}" for stmt in spec.get("setup", "").splitlines() if stmt.strip()]
    lines += [f"    {key} = {_expr(v)}" for key, v in kwargs.items()]
    call = caller.forms[form] if call_text is None else call_text
    steps = extra.get("steps") if kind == "ok" else None
    if "_swe_abs_counted(" in call:
        lines.append("    _SWE_ABS_COUNTED.clear()")
    shares = extra.get("shared") is not None and isinstance(state, dict)
    if kind == "ok" and (shares or steps is not None):
        # what the result shares is read before it is materialised, as the oracle read it
        lines.append(f"    _swe_abs_result = {call}")
        if shares:
            inputs = ", ".join(f"{k!r}: {k}" for k in sorted(state or {}))
            allowed = sorted(extra["shared"])
            lines.append(
                f"    assert _swe_abs_shared(_swe_abs_result, {{{inputs}}}) <= frozenset({allowed!r})"
            )
        if steps is not None:
            lines.append("    _swe_abs_steps = []")
            lines.append(
                f"    assert _swe_abs_eq(_swe_abs_norm(_swe_abs_result, _trace=_swe_abs_steps), {_expr(value)})"
            )
            lines.append(
                f"    assert _swe_abs_within(_swe_abs_steps, {[list(s) for s in steps]!r})"
            )
        else:
            lines.append(f"    assert _swe_abs_eq(_swe_abs_norm(_swe_abs_result), {_expr(value)})")
    elif kind == "ok":
        lines.append(f"    assert _swe_abs_eq(_swe_abs_norm({call}), {_expr(value)})")
    else:
        module, qualname = value
        exc = qualname if module == "builtins" else f"_swe_abs_exc({module!r}, {qualname!r})"
        if "<locals>" in qualname:
            exc = "Exception"
        if extra.get("lazy"):  # the call returns; reading what it returned raises
            lines.append(f"    _swe_abs_result = {call}")
            lines.append(f"    with pytest.raises({exc}):")
            lines.append("        _swe_abs_norm(_swe_abs_result)")
        else:
            lines.append(f"    with pytest.raises({exc}):")
            lines.append(f"        _swe_abs_norm({call})")
    for key, after in sorted((state or {}).items()):
        lines.append(f"    assert _swe_abs_eq(_swe_abs_norm({key}), {_expr(after)})")
    return "\n".join(lines) + "\n"


def show(out: Observation) -> str:
    text = f"{out[0]}: {out[1]!r}"
    if out[2]:
        text += f"; arguments after: {out[2]!r}"
    extra = extra_of(out)
    if extra.get("shared"):
        text += f"; shares: {', '.join(sorted(extra['shared']))}"
    if extra.get("steps") is not None:
        text += f"; read after the call: {list(extra['steps'][0])}"
    return text[:300]
