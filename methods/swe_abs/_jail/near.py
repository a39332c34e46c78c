"""Near inputs: values next to the declared domain, made from a drawn call by one small,
type-directed edit of one argument, so that characterisation tests reach the inputs a
hand-written strategy rarely or never draws and a wrong fix most often gets wrong.

The edits, by kind (a draw picks a kind first, then an edit of that kind):

- text (``str``, and ``bytes``/``bytearray`` through Latin-1): its case changed; a character
  dropped (the first, the last, a punctuation character); digits (zeros before the first, ``_``,
  ``.``, ``,`` or a space between two, superscript digits); letters (all ASCII letters accented,
  the capitals alone, the first, the last); a literal of the code under test (or a word inside
  it) alone, before, inside or after it, or after it and a plural ``s``; empty, white space
  around it, doubled, repeated past 100 characters, a byte-order mark before it; for bytes, the
  other buffer type (the same bytes, and empty);
- integers: the code's own integer constants; one either side of them, plus a hundred, with
  the drawn value's hundreds (``13`` → ``113``, ``1013``); one and ten further from zero; never
  across zero, never another type;
- floats: NaN, the infinities, ``-0.0``; the negative, plus a half;
- lists, tuples, dicts: the container itself (empty, reversed, the other of list and tuple, a
  one-shot iterator over the items, the first item repeated, the last dropped); the same text
  edit applied to every text inside (all upper-cased, ...); or one of its first items (values and
  keys alike) edited in turn, recursively.

Never None, another number type, or an integer across zero unless the argument's documented
domain admits it (the spec's ``domains``: argument → kinds, :data:`DOCUMENTED_KINDS`): those lie
outside what most functions document (the foreign probe's ground), and pinned as near inputs
everywhere they rejected three correct patches of the first outside set. The documentation's own
values for an argument (the spec's ``domain_values``: argument → Python literals) are one more
kind of edit of that argument.

The constants are the literals on the target lines (the slice of the fix), harvested from the
reference tree. What a near input pins is the reference's observation (its return value, its
exception type, the arguments after the call): on inputs the function's documentation admits a
correct fix must agree; whether the edits stay there is measured on every correct candidate the
project ships. Nothing here depends on any instance."""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .values import HELPERS, SUBCLASSES, expression

_MAX_DEPTH = 2  # containers: edits of items this deep
_MAX_ITEMS = 3  # containers: the first items that are edited
_MAX_CONSTANT_TEXT = 24
# Superscript digits only: `str.isdigit` takes them, `int`, `\d` and `str.isdecimal` do not. Other
# decimal digits (full-width, Arabic-Indic) are taken by `int` and `\d` but not by `[0-9]`, and a
# correct fix written with either differs from gold on them (the second outside set's correct
# slugify patch, `[0-9A-Fa-f]` for gold's `[\da-fA-F]`, was rejected by such tests): gold's
# choice there is incidental, not what the fix is about.
_SUPERSCRIPT = dict(zip("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True))
_ACCENTED = {"lower": "é", "upper": "É"}
_ITERATOR = HELPERS["_SweAbsIterator"]
_LONG = 100  # a text repeated to at least this many characters (limits on counts of replacements)
_HUGE = 10**20  # beyond float's exact integers and any fixed-width integer
_BOM = "\ufeff"

# The edits an argument's documentation must admit (or document the rejection of) before they are
# drawn: elsewhere gold's behaviour on them is incidental and a correct fix may differ.
DOCUMENTED_KINDS: dict[str, str] = {
    "none": "None as the argument",
    "none_items": "None as one of a container's first items (a dict's values)",
    "zero": "0 for an integer",
    "negative": "a negative integer for a non-negative one",
    "huge": "an integer 10**20 larger, same last digits",
    "float": "the integer as a whole float",
}


@dataclass(frozen=True)
class Constants:
    """The literals of the code under test: integers and texts (bytes as Latin-1 text)."""

    ints: tuple[int, ...] = ()
    texts: tuple[str, ...] = field(default=())


def harvest(paths_lines: dict[str, set[int]]) -> Constants:
    """The integer and text literals on the given lines of the given files (absolute paths);
    files that do not parse give none."""
    ints: set[int] = set()
    texts: set[str] = set()
    for path, lines in paths_lines.items():
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or getattr(node, "lineno", None) not in lines:
                continue
            value = node.value
            if isinstance(value, bool):
                continue
            if isinstance(value, int) and abs(value) <= 10**6:
                ints.add(value)
            elif isinstance(value, str | bytes) and 0 < len(value) <= _MAX_CONSTANT_TEXT:
                text = value.decode("latin-1") if isinstance(value, bytes) else value
                texts.add(text)
                # its words alone: a pattern's literal (``r"_id$"``) is matched as a word ("id")
                texts.update(w for w in re.findall(r"[^\W_]+", text) if w != text)
    return Constants(tuple(sorted(ints)), tuple(sorted(texts)))


def _dedupe(values: Iterable[Any], drop: Any = None) -> list[Any]:
    """In order, without repeats and without ``drop`` (compared by type and repr: NaN and values
    that do not hash compare too)."""
    seen = {(type(drop), repr(drop))} if drop is not None else set()
    out = []
    for v in values:
        key = (type(v), repr(v))
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def _accented(s: str) -> str:
    return "".join(
        _ACCENTED["upper" if c.isupper() else "lower"] if c.isascii() and c.isalpha() else c
        for c in s
    )


def _text_groups(s: str, constants: Constants) -> list[list[str]]:
    """The edits of a text by kind, each without the text itself (empty kinds left out)."""
    case = [s.upper(), s.lower(), s.swapcase()]
    where = {0, len(s) - 1} | {i for i, c in enumerate(s) if not c.isalnum()}
    dropped = [s[:i] + s[i + 1 :] for i in sorted(where) if 0 <= i < len(s)]
    digits = []
    first = next((i for i, c in enumerate(s) if c.isdigit()), None)
    if first is not None:
        digits.append(s[:first] + "000" + s[first:])  # leading zeros
    for i in range(len(s) - 1):
        if s[i].isdigit() and s[i + 1].isdigit():  # separators numbers are written with
            digits += [s[: i + 1] + sep + s[i + 1 :] for sep in ("_", ".", ",", " ")]
            break
    if any(c in _SUPERSCRIPT for c in s):
        digits.append("".join(_SUPERSCRIPT.get(c, c) for c in s))
    letters = []
    at = [i for i, c in enumerate(s) if c.isascii() and c.isalpha()]
    if at:  # every ASCII letter accented, the capitals alone, the first alone, the last alone
        letters.append(_accented(s))
        letters.append("".join(_accented(c) if c.isupper() else c for c in s))
        letters += [s[:i] + _accented(s[i]) + s[i + 1 :] for i in (at[0], at[-1])]
    middle = len(s) // 2
    # a literal alone, around the text, inside it, ending it and then a word going on (a plural)
    literals = [
        v
        for c in constants.texts
        for v in (c, c + s, s[:middle] + c + s[middle:], s + c, s + c + "s")
    ]
    # empty; white space around; doubled; long (limits on counts); a byte-order mark before
    blank = ["", f" {s} ", f"{s}\t", s + s, s * (_LONG // max(len(s), 1) + 1) if s else s,
             _BOM + s]  # fmt: skip
    groups = [case, dropped, digits, letters, literals, blank]
    return [g for g in (_dedupe(g, drop=s) for g in groups) if g]


def _int_groups(n: int, constants: Constants) -> list[list[Any]]:
    """The code's constants; around them; one and ten further from zero. Integers only, on the
    drawn value's side of zero (zero only from zero): a size of 0 or -1, or a float for an
    integer, lies outside what most functions document, and there a correct fix may do
    otherwise (the first outside set's correct toolz ``partition`` and ``topk`` patches were
    rejected by such tests)."""
    side = 1 if n >= 0 else -1
    hundreds = n - n % 100 if n >= 0 else n + (-n) % 100
    around: list[Any] = []
    for c in constants.ints:
        around += [c, c - 1, c + 1, c + 100, hundreds + c if n >= 0 else hundreds - c]
    groups = [list(constants.ints), around, [n + side, n + 10 * side]]
    kept = (lambda v: v > 0) if n > 0 else (lambda v: v < 0) if n < 0 else (lambda v: v >= 0)
    on_side = [[v for v in g if kept(v)] for g in groups]
    return [g for g in (_dedupe(g, drop=n) for g in on_side) if g]


def _documented_groups(value: Any, kinds: frozenset[str]) -> list[list[Any]]:
    """The edits of an argument that its documented domain admits (``kinds``), a group per
    kind (:func:`_documented_kind_groups`)."""
    return [g for _, g in _documented_kind_groups(value, kinds)]


def _documented_kind_groups(value: Any, kinds: frozenset[str]) -> list[tuple[str, list[Any]]]:
    """(kind, edits) for each of the documented ``kinds`` that applies to ``value``: None for
    it; for an integer zero, the negatives, a huge one with the same last digits, the whole
    float; for a list, tuple or dict None as one of its first items (values)."""
    t = type(value)
    groups: list[tuple[str, list[Any]]] = []
    if "none" in kinds and value is not None:
        groups.append(("none", [None]))
    if t is int:
        if "zero" in kinds and value != 0:
            groups.append(("zero", [0]))
        if "negative" in kinds:
            groups.append(("negative", [-abs(value) or -1, -1, -abs(value) - 1]))
        if "huge" in kinds:
            groups.append(("huge", [value + _HUGE if value >= 0 else value - _HUGE]))
        if "float" in kinds:
            groups.append(("float", [float(value)]))
    elif "none_items" in kinds and t in (list, tuple) and value:
        items = list(value)
        groups.append(
            ("none_items",
             [t([*items[:i], None, *items[i + 1 :]]) for i in range(len(items[:_MAX_ITEMS]))])
        )  # fmt: skip
    elif "none_items" in kinds and t is dict and value:
        groups.append(("none_items", [{**value, k: None} for k in list(value)[:_MAX_ITEMS]]))
    deduped = ((kind, _dedupe(g, drop=value)) for kind, g in groups)
    return [(kind, g) for kind, g in deduped if g]


def _float_groups(x: float) -> list[list[Any]]:
    """The special values; the negative, a half more."""
    groups = [[math.nan, math.inf, -math.inf, -0.0], [-x, x + 0.5] if math.isfinite(x) else []]
    return [g for g in (_dedupe(g, drop=x) for g in groups) if g]


def _as_bytes(t: type, s: str) -> Any:
    return t(s.encode("latin-1" if max(s, default="a") <= "\xff" else "utf-8"))


def _base(value: Any) -> Any:
    """A value of one of the generator's subclasses as its built-in base type's value."""
    t = type(value)
    return t.__mro__[1](value) if t in SUBCLASSES.values() else value


def _scalar_groups(value: Any, constants: Constants) -> list[list[Any]]:
    """The edits of a text, byte string or number by kind; none for anything else. Never None:
    a None where the function documents a value is a foreign input (the foreign probe's, pinned
    only where gold rejects it on purpose); pinned here, gold's incidental errors on None
    rejected correct toolz patches of the first outside set."""
    t = type(value)
    groups: list[list[Any]] = []
    if t is str:
        groups = _text_groups(value, constants)
    elif t in (bytes, bytearray):
        text = bytes(value).decode("latin-1")
        groups = [
            [_as_bytes(t, s.replace(_BOM, "\xef\xbb\xbf")) for s in g]  # the UTF-8 mark's bytes
            for g in _text_groups(text, constants)
        ]
        groups.append([bytearray(value), bytearray()] if t is bytes else [bytes(value), b""])
    elif t is int:
        groups = _int_groups(value, constants)
    elif t is float:
        groups = _float_groups(value)
    return groups


# The same edit of every text inside a container (a list of words all upper-cased): an edit of
# one item rarely meets the others it interacts with.
_EVERYWHERE: tuple[Callable[[str], str], ...] = (
    str.upper,
    str.lower,
    lambda s: s[:-1],
    lambda s: f" {s} ",
    _accented,
)


def _everywhere(value: Any, edit: Callable[[str], str], depth: int = 0) -> Any:
    """``value`` with ``edit`` applied to every text in it (``depth`` levels down); a dict whose
    keys would collide is left as it is."""
    value = _base(value)
    t = type(value)
    if t is str:
        return edit(value)
    if depth >= _MAX_DEPTH:
        return value
    if t in (list, tuple):
        return t(_everywhere(v, edit, depth + 1) for v in value)
    if t is dict:
        try:
            out = {_everywhere(k, edit, depth + 1): _everywhere(v, edit, depth + 1)
                   for k, v in value.items()}  # fmt: skip
        except TypeError:
            return value
        return out if len(out) == len(value) else value
    return value


def _shapes(items: list[Any], t: type) -> list[Any]:
    """The edits of a sequence as a whole: empty, reversed, the other of list and tuple, a
    one-shot iterator (as a generator passed in would be), the first item repeated, the last
    dropped."""
    out: list[Any] = [t(), t(reversed(items)), list(items) if t is tuple else tuple(items)]
    out.append(_ITERATOR(items))
    if items:
        out += [t([items[0], *items]), t(items[:-1])]
    return _dedupe(out, drop=t(items))


def _rekey(d: dict[Any, Any], old: Any, new: Any) -> dict[Any, Any]:
    """``d`` with key ``old`` renamed ``new`` (in place in the order); ``d`` itself when ``new``
    cannot be a key or is one already."""
    try:
        hash(new)
    except TypeError:
        return d
    if new in d:
        return d
    return {(new if k == old else k): v for k, v in d.items()}


def neighbours(value: Any, constants: Constants, kinds: frozenset[str] = frozenset()) -> list[Any]:
    """Every near input :func:`edits` can draw from ``value`` (without repeats), the documented
    ``kinds`` included. Values of the generator's subclasses are edited as their base type's
    values."""
    value = _base(value)
    documented = [v for g in _documented_groups(value, kinds) for v in g]
    return _dedupe([*_neighbours(value, constants), *documented], drop=value)


def _neighbours(value: Any, constants: Constants, depth: int = 0) -> list[Any]:
    value = _base(value)
    t = type(value)
    if value is None:
        return []
    if t in (list, tuple):
        items = list(value)
        out = _shapes(items, t) + [_everywhere(value, e) for e in _EVERYWHERE]
        if depth < _MAX_DEPTH:
            for i, item in enumerate(items[:_MAX_ITEMS]):
                out += [t([*items[:i], v, *items[i + 1 :]])
                        for v in _neighbours(item, constants, depth + 1)]  # fmt: skip
        return _dedupe(out, drop=value)
    if t is dict:
        out = [{}] + [_everywhere(value, e) for e in _EVERYWHERE]
        if depth < _MAX_DEPTH:
            for key in list(value)[:_MAX_ITEMS]:
                out += [{**value, key: v} for v in _neighbours(value[key], constants, depth + 1)]
                out += [_rekey(value, key, k) for k in _neighbours(key, constants, depth + 1)]
        return [v for v in _dedupe(out) if v != value or type(v) is not dict]
    return _dedupe(v for g in _scalar_groups(value, constants) for v in g)


def edits(
    value: Any, constants: Constants, depth: int = 0, kinds: frozenset[str] = frozenset()
) -> Any:
    """A Hypothesis strategy over the near inputs of ``value``, one edit at one place. A text,
    byte string or number: a kind of edit, then an edit of that kind. A non-empty list, tuple or
    dict: a third of the draws edit the container itself, a third edit every text inside alike,
    a third edit one of its first items (values and keys alike for a dict), recursively, so that
    an edit deep inside is as likely as one on top. The value itself when it has no edit.
    ``kinds`` (the argument's documented domain, top level only) add their edits as kinds of
    their own (:func:`_documented_groups`)."""
    return tagged_edits(value, constants, depth, kinds).map(lambda drawn: drawn[0])


def tagged_edits(
    value: Any,
    constants: Constants,
    depth: int = 0,
    kinds: frozenset[str] = frozenset(),
    values: tuple[Any, ...] = (),
) -> Any:
    """:func:`edits` with each draw tagged: ``(near input, documented kind or None)`` (the tag
    lets the choice of tests keep every documented kind drawn). ``values`` (the argument's
    documented values, top level only) are one more kind: one of them in place of ``value``,
    tagged ``value <i>`` (its place in the list)."""
    from hypothesis import strategies as st

    value = _base(value)
    documented = _documented_kind_groups(value, kinds) if depth == 0 else []
    undocumented = _edits(value, constants, depth).map(lambda v: (v, None))
    extra = [st.sampled_from(g).map(lambda v, k=kind: (v, k)) for kind, g in documented]
    listed = _listed(value, values) if depth == 0 else []
    if listed:
        extra.append(st.sampled_from(listed).map(lambda iv: (iv[1], f"value {iv[0]}")))
    if not extra:
        return undocumented
    return st.one_of(undocumented, *extra) if _kinds(value, constants) else st.one_of(*extra)


def _listed(value: Any, values: tuple[Any, ...]) -> list[tuple[int, Any]]:
    """(place, value) of the documented ``values`` other than ``value`` itself."""
    drop = (type(value), repr(value))
    return [(i, v) for i, v in enumerate(values) if (type(v), repr(v)) != drop]


def _edits(value: Any, constants: Constants, depth: int) -> Any:
    from hypothesis import strategies as st

    t = type(value)
    if t in (list, tuple, dict) and value and depth < _MAX_DEPTH:
        alike = _dedupe((_everywhere(value, e) for e in _EVERYWHERE), drop=value)
        if t is dict:
            keys = list(value)[:_MAX_ITEMS]
            own = st.just({})
            inside = st.one_of(
                st.sampled_from(keys).flatmap(
                    lambda k: edits(value[k], constants, depth + 1).map(lambda v: {**value, k: v})
                ),
                st.sampled_from(keys).flatmap(
                    lambda k: edits(k, constants, depth + 1).map(lambda n: _rekey(value, k, n))
                ),
            )
        else:
            items = list(value)
            own = st.sampled_from(_shapes(items, t))

            def at(i: int) -> Any:
                return edits(items[i], constants, depth + 1).map(
                    lambda v: t([*items[:i], v, *items[i + 1 :]])
                )

            inside = st.integers(0, min(len(items), _MAX_ITEMS) - 1).flatmap(at)
        return st.one_of(own, st.sampled_from(alike), inside) if alike else st.one_of(own, inside)
    if t in (list, tuple):  # empty, or this deep: the container's own edits only
        return st.sampled_from(_shapes(list(value), t))
    if t is dict:
        return st.just({} if value else value)
    groups = _scalar_groups(value, constants)
    return st.sampled_from(groups).flatmap(st.sampled_from) if groups else st.just(value)


def _kinds(
    value: Any,
    constants: Constants,
    kinds: frozenset[str] = frozenset(),
    values: tuple[Any, ...] = (),
) -> int:
    """How many kinds of edit :func:`tagged_edits` chooses from for ``value`` (0: none), the
    documented ones (``kinds``, and ``values`` as one more) included."""
    value = _base(value)
    documented = len(_documented_groups(value, kinds)) + bool(_listed(value, values))
    if type(value) in (list, tuple):
        return (3 if value else 1) + documented
    if type(value) is dict:
        return (3 if value else 0) + documented
    return len(_scalar_groups(value, constants)) + documented


def domain_values(spec: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """The spec's documented values (``domain_values``: argument → Python literals as text,
    from its documentation); a value that is not a literal or an argument not declared raises
    ValueError naming it."""
    out: dict[str, tuple[Any, ...]] = {}
    for name, texts in (spec.get("domain_values") or {}).items():
        if name not in spec.get("args", {}):
            raise ValueError(f"domain_values: {name!r} is not a declared argument")
        parsed = []
        for text in texts:
            try:
                parsed.append(ast.literal_eval(str(text)))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
                raise ValueError(
                    f"domain_values: {name!r}: {text!r} is not a Python literal ({exc})"
                ) from None
        out[name] = tuple(parsed)
    return out


def domains(spec: dict[str, Any]) -> dict[str, frozenset[str]]:
    """The spec's documented domains (``domains``: argument → kinds of :data:`DOCUMENTED_KINDS`,
    as a list or as ``{kinds: [...], because: ...}``); a kind not known or an argument not
    declared raises ValueError naming it."""
    out: dict[str, frozenset[str]] = {}
    for name, entry in (spec.get("domains") or {}).items():
        kinds = entry.get("kinds", []) if isinstance(entry, dict) else entry
        if name not in spec.get("args", {}):
            raise ValueError(f"domains: {name!r} is not a declared argument")
        unknown = sorted(set(kinds) - set(DOCUMENTED_KINDS))
        if unknown:
            raise ValueError(f"domains: {name!r}: unknown kinds {unknown}")
        out[name] = frozenset(kinds)
    return out


DOCUMENTED_KEY = "_swe_abs_documented"
"""The key under which :func:`near_calls` names the documented edit a call carries
``(argument, kind)``; not an argument: the caller pops it."""


def near_calls(spec: dict[str, Any], constants: Constants) -> Any:
    """A strategy over the call's arguments (name → value): the declared values, one of them
    replaced by one of its near inputs (:func:`edits`, with the argument's documented kinds)
    when that is expressible as test code (as declared otherwise). A call whose edit is of a
    documented kind says which under :data:`DOCUMENTED_KEY`."""
    from hypothesis import strategies as st

    env = {"st": st}
    declared = {name: eval(expr, env) for name, expr in spec["args"].items()}  # noqa: S307
    names = list(declared)
    documented = domains(spec)
    listed = domain_values(spec)

    def edit_one(values: dict[str, Any]) -> Any:
        def at(name: str) -> Any:
            def call(drawn: tuple[Any, str | None]) -> dict[str, Any]:
                v, kind = drawn
                if expression(v) is None:
                    return values
                return {**values, name: v, **({DOCUMENTED_KEY: (name, kind)} if kind else {})}

            kinds = documented.get(name, frozenset())
            return tagged_edits(
                values[name], constants, kinds=kinds, values=listed.get(name, ())
            ).map(call)

        # an argument is chosen as often as it has kinds of edit: a flag (None its only edit)
        # does not take half the edits of a call with one text beside it
        weighted = [
            n
            for n in names
            for _ in range(
                _kinds(values[n], constants, documented.get(n, frozenset()), listed.get(n, ()))
            )
        ]
        return st.sampled_from(weighted).flatmap(at) if weighted else st.just(values)

    calls = st.fixed_dictionaries(declared)
    return calls.flatmap(edit_one) if names else calls
