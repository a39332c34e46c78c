"""What the differential oracle observes about one call, and how a value becomes test code.

An *observation* is ``(kind, value, state, extra)``: ``kind`` is ``ok``, ``raise`` or
``timeout``; ``value`` the normalised return value, or the exception's ``(module, qualified
name)``; ``state`` the normalised arguments after the call (a call that mutates its caller's input
differs there); ``extra`` what the call shares and reads (:class:`Extra`): the places where the
returned value *is* a mutable container of the arguments, and how far each iterator the call
builds with ``iter(...)`` had been read after the call and after each item taken from a lazy
result. A variant agrees with the reference when the kinds, the exception types (class and
module) or the values (types compared at every depth), and the states agree, and it shares no
container the reference does not share, reads no iterator further ahead and raises no earlier
(at the call, where the reference returned an iterator that raised when read): sharing less,
reading lazier or raising later is allowed (a generator or a fuller copy is as often a correct
fix), the reverse is not (the caller's data changes through the result; an input is consumed).

``NORMALISE_SOURCE`` is pasted at the top of every generated test module: normalisation, the
typed comparison, the subclasses of built-in types the generator draws, the lookup of a
non-built-in exception class (and :mod:`.whole_call`'s helpers): the tests check what the oracle
compared."""

from __future__ import annotations

import signal
from typing import Any

from .labelled import LABELLED_SOURCE
from .whole_call import WHOLE_CALL_SOURCE

NORMALISE_SOURCE = '''
import collections as _swe_abs_collections


class _SweAbsBytes(bytes):
    pass


class _SweAbsStr(str):
    pass


class _SweAbsInt(int):
    pass


class _SweAbsFloat(float):
    pass


class _SweAbsList(list):
    pass


class _SweAbsTuple(tuple):
    pass


class _SweAbsDict(dict):
    pass


class _SweAbsByteArray(bytearray):
    pass


_SWE_ABS_SUBCLASSES = {bytes: _SweAbsBytes, str: _SweAbsStr, int: _SweAbsInt,
                       float: _SweAbsFloat, list: _SweAbsList, tuple: _SweAbsTuple,
                       dict: _SweAbsDict, bytearray: _SweAbsByteArray}
_SWE_ABS_SCALARS = (bool, int, float, complex, str, bytes)


def _swe_abs_base(value):
    """The value as its built-in base type (a subclass instance loses its class)."""
    for base in (bool, int, float, complex, str, bytes):
        if isinstance(value, base):
            return {bool: bool, int: int.__int__, float: float.__float__, complex: complex,
                    str: str.__str__, bytes: lambda v: bytes(memoryview(v))}[base](value)
    return value


_SWE_ABS_COUNTED = []


def _swe_abs_read():
    """How far each iterator the call built with ``_swe_abs_counted`` has been read."""
    return tuple(it.position for it in _SWE_ABS_COUNTED)


def _swe_abs_norm(value, _depth=0, _trace=None):
    """Comparable form of a value: iterators are materialised (first 64 items), subclasses of
    built-in types and byte buffers keep their type's name. ``_trace`` (a list) receives how far
    the call's counted iterators were read before the value is touched, and after each item
    taken from it."""
    import itertools as _it
    if _trace is not None and _depth == 0:
        _trace.append(_swe_abs_read())
        if hasattr(value, "__next__") or isinstance(value, (range, map, filter, zip)):
            items, source = [], iter(value)
            for _ in range(64):
                try:
                    item = next(source)
                except StopIteration:
                    break
                items.append(_swe_abs_norm(item, 1))
                _trace.append(_swe_abs_read())
            return ("<iter>", items)
    if _depth > 8:
        return repr(value)
    if value is None or type(value) in _SWE_ABS_SCALARS:
        return value
    if isinstance(value, _SWE_ABS_SCALARS):
        return ("<sub>", type(value).__name__, _swe_abs_base(value))
    if isinstance(value, (bytearray, memoryview)):
        return ("<buffer>", type(value).__name__, bytes(value))
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


def _swe_abs_eq(a, b):
    """Equal values of the same types at every depth (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_swe_abs_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_swe_abs_eq(a[k], b[k]) for k in a)
    if isinstance(a, float) and a != a:
        return b != b
    try:
        return bool(a == b)
    except Exception:
        return repr(a) == repr(b)


class _SweAbsBoom(Exception):
    """Raised by the foreign probe's failing callables and iterables: a caller's own error."""


class _SweAbsFailingIterable:
    """An iterable that yields its items, then raises (each iteration starts afresh)."""

    def __init__(self, items, error=_SweAbsBoom):
        self.items, self.error = list(items), error

    def __iter__(self):
        yield from self.items
        raise self.error("_swe_abs")

    def __repr__(self):
        return f"_SweAbsFailingIterable({self.items!r}, {self.error.__name__})"

    def __eq__(self, other):
        return type(other) is type(self) and (other.items, other.error) == (self.items, self.error)


class _SweAbsIterator:
    """A one-shot iterator over its items (what a generator passed in would give)."""

    def __init__(self, items):
        self.items, self.position = list(items), 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.position >= len(self.items):
            raise StopIteration
        self.position += 1
        return self.items[self.position - 1]

    def __repr__(self):
        return f"_SweAbsIterator({self.items[self.position:]!r})"

    def __eq__(self, other):
        return type(other) is type(self) and other.items[other.position:] == self.items[self.position:]


class _SweAbsSequence:
    """A sequence readable only by index (``__getitem__`` until IndexError: the old iteration
    protocol that ``for`` and ``list()`` follow), without ``__iter__`` or ``__len__``."""

    def __init__(self, items):
        self.items = list(items)

    def __getitem__(self, index):
        return self.items[index]

    def __repr__(self):
        return f"_SweAbsSequence({self.items!r})"

    def __eq__(self, other):
        return type(other) is type(self) and other.items == self.items


class _SweAbsIndex:
    """An integer that is no ``int``: every operation of ``int`` on its value (``__index__``,
    comparisons, hashing, arithmetic), as NumPy's integers; only a check of its type tells."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"_SweAbsIndex({self.value!r})"


for _op in ("index int float bool hash eq ne lt le gt ge neg pos abs invert add radd sub rsub mul "
            "rmul floordiv rfloordiv truediv rtruediv mod rmod pow rpow and rand or ror xor rxor "
            "lshift rlshift rshift rrshift").split():  # fmt: skip
    setattr(_SweAbsIndex, f"__{_op}__", (lambda op: lambda self, *args: op(self.value, *(
        a.value if type(a) is _SweAbsIndex else a for a in args)))(getattr(int, f"__{_op}__")))


class _SweAbsPath:
    """A path-like object (``__fspath__`` alone) whose path is a text: what ``open`` and
    ``os.fspath`` read, not a ``str``."""

    def __init__(self, path):
        self.path = path

    def __fspath__(self):
        return self.path

    def __repr__(self):
        return f"_SweAbsPath({self.path!r})"

    def __eq__(self, other):
        return type(other) is type(self) and other.path == self.path

    def __hash__(self):
        return hash(("_SweAbsPath", self.path))


class _SweAbsOpaque:
    """A value with no behaviour of its own: every opaque value equals every other and hashes
    alike; calling it raises the caller's own error. What a function that only stores, returns
    or compares a value passes through untouched."""

    def __call__(self, *args, **kwargs):
        raise _SweAbsBoom("_swe_abs opaque value called")

    def __repr__(self):
        return "_SweAbsOpaque()"

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash("_SweAbsOpaque")


class _SweAbsNoTruth:
    """A value whose truth cannot be read (``bool()`` raises the caller's own error, as numpy
    arrays and ``pandas.NA`` do); otherwise without behaviour, like :class:`_SweAbsOpaque`."""

    def __bool__(self):
        raise _SweAbsBoom("_swe_abs value without a truth value")

    def __repr__(self):
        return "_SweAbsNoTruth()"

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash("_SweAbsNoTruth")


# A value of a built-in type as an instance of an unhashable subclass: equal content, which a
# function that reads it reads alike, and which a cache or a set keyed on it cannot hold.
_SWE_ABS_UNHASHABLE = {t: type("_SweAbsUnhashable" + t.__name__.capitalize(), (t,), {"__hash__": None})
                       for t in (str, bytes, int, float)}
globals().update({c.__name__: c for c in _SWE_ABS_UNHASHABLE.values()})


class _SweAbsFailingCallable:
    """A callable that raises whatever it is called with (``once``: on its first call only, then
    it returns its first argument, so that code which catches the error and calls again goes on)."""

    def __init__(self, error=_SweAbsBoom, once=False):
        self.error = error
        self.once = once
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.once and self.calls > 1:
            return args[0] if args else None
        raise self.error("_swe_abs")

    def __repr__(self):
        once = ", once=True" if self.once else ""
        return f"_SweAbsFailingCallable({self.error.__name__}{once})"

    def __eq__(self, other):
        return type(other) is type(self) and (other.error, other.once) == (self.error, self.once)

    def __hash__(self):
        return hash((self.error, self.once))


def _swe_abs_counted(items):
    """A one-shot iterator over ``items`` whose reading the test observes (what the call's
    ``iter(...)`` becomes)."""
    counted = _SweAbsIterator(items)
    _SWE_ABS_COUNTED.append(counted)
    return counted


def _swe_abs_within(steps, reference):
    """Whether no counted iterator was read further ahead than in ``reference``, step by step
    (reading lazier is allowed)."""
    return all(len(a) == len(b) and all(x <= y for x, y in zip(a, b))
               for a, b in zip(steps, reference))


_SWE_ABS_MUTABLE = (list, dict, set, bytearray, _swe_abs_collections.deque)


def _swe_abs_nodes(value, path):
    """(path, object) of every mutable container in ``value``, outermost first (lists, tuples,
    deques and dict values walked; at most 2,000 nodes, 8 deep)."""
    out, stack = [], [(value, path, 0)]
    while stack and len(out) < 2000:
        obj, where, depth = stack.pop()
        if isinstance(obj, _SWE_ABS_MUTABLE):
            out.append((where, obj))
        if depth >= 8:
            continue
        if isinstance(obj, dict):
            children = [(v, f"{where}[{k!r}]") for k, v in obj.items()]
        elif isinstance(obj, (list, tuple, _swe_abs_collections.deque)):
            children = [(v, f"{where}[{i}]") for i, v in enumerate(obj)]
        else:
            continue
        stack.extend((v, w, depth + 1) for v, w in reversed(children))
    return out


def _swe_abs_shared(result, inputs):
    """Where the returned value is one of the arguments' mutable containers, as texts
    ``"result[...] is name[...]"`` (an iterator result is not walked: that would consume it)."""
    if hasattr(result, "__next__"):
        return frozenset()
    where = {}
    for name in sorted(inputs):
        for path, obj in _swe_abs_nodes(inputs[name], name):
            where.setdefault(id(obj), path)
    return frozenset(f"{path} is {where[id(obj)]}"
                     for path, obj in _swe_abs_nodes(result, "result") if id(obj) in where)


def _swe_abs_exc(module, qualname):
    """The exception class ``module.qualname`` (for pytest.raises in a generated test)."""
    import importlib
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj
'''
NORMALISE_SOURCE += WHOLE_CALL_SOURCE + LABELLED_SOURCE
_ns: dict[str, Any] = {}
exec(NORMALISE_SOURCE, _ns)  # one definition, used here and pasted into emitted tests
normalise = _ns["_swe_abs_norm"]
equal = _ns["_swe_abs_eq"]
SUBCLASSES: dict[type, type] = _ns["_SWE_ABS_SUBCLASSES"]
_BASE = _ns["_swe_abs_base"]
_SUBCLASS_NAMES = {sub: sub.__name__ for sub in SUBCLASSES.values()}
HELPERS: dict[str, Any] = {
    k: _ns[k]
    for k in (
        "_SweAbsBoom _SweAbsFailingIterable _SweAbsFailingCallable _SweAbsIterator _SweAbsSequence "
        "_SweAbsIndex _SweAbsOpaque _SweAbsPath _SweAbsNoTruth _SweAbsLabelled _SweAbsUnhashableStr "
        "_SweAbsUnhashableBytes _SweAbsUnhashableInt _SweAbsUnhashableFloat _swe_abs_collections "
        "_swe_abs_spoil _swe_abs_settings"  # the last two: the whole-call rules' (.whole_call)
    ).split()
}
"""The names a foreign or near value's expression reads, as the emitted test module defines
them."""
COUNTED: list[Any] = _ns["_SWE_ABS_COUNTED"]
"""The iterators the current call built through ``_swe_abs_counted`` (cleared before each)."""
SPOILED: list[bool] = _ns["_SWE_ABS_SPOILED"]  # whether each _swe_abs_spoil emptied anything
COUNTING: dict[str, Any] = {"_swe_abs_counted": _ns["_swe_abs_counted"]}
"""The name a call's ``iter(...)`` is rewritten to (:func:`counted_call`)."""
shared = _ns["_swe_abs_shared"]
within = _ns["_swe_abs_within"]
_FAILING_ITERABLE: type = _ns["_SweAbsFailingIterable"]
_FAILING_CALLABLE: type = _ns["_SweAbsFailingCallable"]
_ITERATOR: type = _ns["_SweAbsIterator"]
_SEQUENCE: type = _ns["_SweAbsSequence"]
_INDEX: type = _ns["_SweAbsIndex"]
_OPAQUE: type = _ns["_SweAbsOpaque"]
_PATH: type = _ns["_SweAbsPath"]
_NO_TRUTH: type = _ns["_SweAbsNoTruth"]
_LABELLED: type = _ns["_SweAbsLabelled"]
UNHASHABLE: dict[type, type] = _ns["_SWE_ABS_UNHASHABLE"]  # a built-in type → unhashable subclass
_UNHASHABLE_NAMES = {sub: sub.__name__ for sub in UNHASHABLE.values()}


Observation = tuple[str, Any, Any, "Extra"]


def outcome_class(out: tuple[Any, ...]) -> str:
    """An observation's outcome class as text: ``returns`` or ``raises <module.Type>``."""
    return f"raises {'.'.join(out[1])}" if out[0] == "raise" else "returns"


class Extra(dict):  # noqa: FURB189 - a plain dict with a name
    """What a call shares and reads: ``shared``, the frozenset of ``"result[...] is
    name[...]"`` texts (:func:`shared`; None when no argument is a mutable container), and
    ``steps``, how far each counted iterator had been read after the call and after each item
    taken from the result (None when the call counts none); for a call that raised, ``lazy``:
    True when the call itself returned an iterator and reading it raised."""


_NOTHING = object()  # what a call that raised returned


def extra_of(out: tuple[Any, ...]) -> dict[str, Any]:
    """An observation's extra (an older three-part observation has none)."""
    return out[3] if len(out) > 3 and out[3] else {}


class CallTimeout(BaseException):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise CallTimeout()


def exception_type(exc: BaseException) -> tuple[str, str]:
    return type(exc).__module__, type(exc).__qualname__


def outcome(call: Any, limit: float, state: Any = None, on_raise: Any = None) -> Observation:
    """Observe one call: ``call()`` under a ``limit`` in seconds, what its result shares with
    ``state()`` (the mutable arguments after the call, or None), how far its counted iterators
    were read, then the arguments after it. A timeout anywhere is ``("timeout", None, None,
    {})``. ``on_raise`` (when given) sees the exception the call raised, traceback and all."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    COUNTED.clear()
    extra = Extra()
    raw: Any = _NOTHING
    try:
        try:
            raw = call()
            inputs = state() if state is not None else None
            if inputs and not hasattr(raw, "__next__"):  # an iterator is not walked
                extra["shared"] = shared(raw, inputs)
            steps: list[Any] = []
            kind, value = "ok", normalise(raw, _trace=steps)
            if COUNTED:
                extra["steps"] = steps
        except CallTimeout:
            raise
        except RecursionError:
            kind, value, extra = "raise", ("builtins", "RecursionError"), Extra()
        except Exception as exc:  # noqa: BLE001 - the candidate's exception is the observation
            kind, value, extra = "raise", exception_type(exc), Extra()
            if raw is not _NOTHING and hasattr(raw, "__next__"):
                extra["lazy"] = True  # the call returned an iterator; reading it raised
            if on_raise is not None:
                on_raise(exc)
        try:
            after = normalise(state()) if state is not None else None
        except CallTimeout:
            raise
        except Exception as exc:  # noqa: BLE001 - an input that cannot be read back
            after = ("<unreadable>", exception_type(exc))
        return kind, value, after, extra
    except CallTimeout:
        return "timeout", None, None, Extra()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        COUNTED.clear()


def same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Whether variant ``b`` agrees with reference ``a`` as the oracle judges it: the same kind;
    the same exception class (module and qualified name) or equal values of equal types; the
    same arguments after the call; no container of the arguments shared that ``a`` does not
    share, no counted iterator read further ahead than ``a`` read it."""
    if a[0] != b[0]:
        return False
    if a[0] == "raise":
        # raising later than the reference is allowed (a lazier fix); earlier is not: where the
        # reference returned an iterator that raised when read, raising at the call differs
        lazy_enough = not extra_of(a).get("lazy") or bool(extra_of(b).get("lazy"))
        return tuple(a[1]) == tuple(b[1]) and equal(a[2], b[2]) and lazy_enough
    if not (equal(a[1], b[1]) and equal(a[2], b[2])):
        return False
    ea, eb = extra_of(a), extra_of(b)
    if eb.get("shared") and not eb["shared"] <= (ea.get("shared") or frozenset()):
        return False
    if ea.get("steps") is not None and eb.get("steps") is not None:
        return bool(within(eb["steps"], ea["steps"]))
    return True


def subclassed(value: Any) -> Any:
    """``value`` as an instance of the generator's subclass of its built-in type (unchanged
    when its type has none)."""
    sub = SUBCLASSES.get(type(value))
    return sub(value) if sub is not None else value


_FLOATS = {"inf": "float('inf')", "-inf": "float('-inf')", "nan": "float('nan')"}
_EVAL_NS: dict[str, Any] = {**_ns, "__builtins__": __builtins__}


def _build(value: Any, depth: int) -> str | None:
    if depth > 20:
        return None
    t = type(value)
    if value is None or t in (bool, int, str, bytes, complex, range):
        return repr(value)
    if t is float:
        return _FLOATS.get(repr(value), repr(value))
    if t in _SUBCLASS_NAMES:
        inner = _build(_BASE(value) if not isinstance(value, list | tuple | dict | bytearray)
                       else t.__mro__[1](value), depth + 1)  # fmt: skip
        return None if inner is None else f"{_SUBCLASS_NAMES[t]}({inner})"
    if t in (list, tuple, set, frozenset):
        built = [_build(v, depth + 1) for v in value]
        parts = [p for p in built if p is not None]
        if len(parts) != len(built):
            return None
        if t is list:
            return "[" + ", ".join(parts) + "]"
        if t is tuple:
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        inner = "{" + ", ".join(sorted(parts)) + "}" if parts else ""
        return f"{t.__name__}({inner})"
    if t is dict:
        items = [(_build(k, depth + 1), _build(v, depth + 1)) for k, v in value.items()]
        if any(k is None or v is None for k, v in items):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if t is bytearray:
        return f"bytearray({bytes(value)!r})"
    if t is memoryview:
        if value.ndim != 1 or value.format != "B":
            return None
        return f"memoryview({value.tobytes()!r})"
    if t is _FAILING_ITERABLE:
        inner = _build(value.items, depth + 1)
        return None if inner is None else f"{t.__name__}({inner}, {value.error.__name__})"
    if t is _ITERATOR:
        inner = _build(value.items[value.position :], depth + 1)
        return None if inner is None else f"{t.__name__}({inner})"
    if t is _SEQUENCE:
        inner = _build(value.items, depth + 1)
        return None if inner is None else f"{t.__name__}({inner})"
    if t is _INDEX:
        return repr(value) if type(value.value) is int else None
    if t in _UNHASHABLE_NAMES:
        inner = _build(_BASE(value), depth + 1)
        return None if inner is None else f"{_UNHASHABLE_NAMES[t]}({inner})"
    if t in (_FAILING_CALLABLE, _OPAQUE, _NO_TRUTH, _LABELLED) or (
        t is _PATH and type(value.path) in (str, bytes)
    ):
        return repr(value)
    if t.__module__ == "collections" and t.__name__ in ("OrderedDict", "defaultdict", "deque"):
        return f"_swe_abs_collections.{repr(value)}"
    return None


def expression(value: Any) -> str | None:
    """Python code that evaluates, in a generated test module, to a value equal to ``value``
    with the same types at every depth (constructor calls for byte buffers and the generator's
    subclasses); None when there is none (the caller counts those)."""
    text = _build(value, 0)
    if text is None:
        return None
    try:
        back = eval(text, dict(_EVAL_NS))  # noqa: S307 - text built here from plain values
    except Exception:  # noqa: BLE001
        return None
    return text if equal(back, value) else None
