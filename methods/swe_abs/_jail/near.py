"""Near inputs: values next to the declared domain, made from a drawn call by one small,
type-directed edit of one argument, so that characterisation tests reach the inputs a
hand-written strategy rarely or never draws and a wrong fix most often gets wrong.

The edits, by kind (a draw picks a kind first, then an edit of that kind):

- text (``str``, and ``bytes``/``bytearray`` through Latin-1): its case changed; a character
  dropped (the first, the last, a punctuation character); digits (zeros before the first, ``_``,
  ``.``, ``,`` or a space between two, superscript digits, the text in parentheses; in a number,
  the digits before or after the point gone, the decimal and thousands marks swapped); letters
  (all ASCII letters accented, the capitals alone, the first, the last; ``'s`` after the first
  word); its first combining mark replaced by one outside the BMP; a code point written in it
  (``&#x41;``, ``U+0041``) at the bounds of the classes decoders treat apart; a literal of the
  code under test (or a word inside it) alone, before, inside or after it, after it and a plural
  ``s``, after it twice, or after it with its separators written otherwise (``_id`` as ``-id``),
  or nearly alone (upper-cased, capitalised, a newline after it, spaces around it); empty, white
  space around it, a tab or a newline after it, a newline before it, doubled, repeated past 100
  characters, a byte-order mark before it; in its place a word parsers treat apart (``None``,
  ``null``, ``NaN``, ``inf``, ``True``); for bytes, the other buffer type (the same bytes, and
  empty);
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

Every edit carries a label saying what it did (``newline after``, ``item point first``), so
that the choice of tests can keep one test per label drawn, not only per new facet.

The constants are the literals on the target lines (the slice of the fix), harvested from the
reference tree. What a near input pins is the reference's observation (its return value, its
exception type, the arguments after the call): on inputs the function's documentation admits a
correct fix must agree; whether the edits stay there is measured on every correct candidate the
project ships. Nothing here depends on any instance."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from .literals import Constants
from .scalar_edits import (
    Labelled,
    accented,
    dedupe,
    dedupe_labelled,
    scalar_edits,
    scalar_groups,
)
from .values import HELPERS, SUBCLASSES, expression

_MAX_DEPTH = 2  # containers: edits of items this deep
_MAX_ITEMS = 3  # containers: the first items that are edited
_ITERATOR = HELPERS["_SweAbsIterator"]
_HUGE = 10**20  # beyond float's exact integers and any fixed-width integer

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
    deduped = ((kind, dedupe(g, drop=value)) for kind, g in groups)
    return [(kind, g) for kind, g in deduped if g]


def _base(value: Any) -> Any:
    """A value of one of the generator's subclasses as its built-in base type's value."""
    t = type(value)
    return t.__mro__[1](value) if t in SUBCLASSES.values() else value


# The same edit of every text inside a container (a list of words all upper-cased): an edit of
# one item rarely meets the others it interacts with.
_EVERYWHERE: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("every text upper", str.upper),
    ("every text lower", str.lower),
    ("every text last dropped", lambda s: s[:-1]),
    ("every text spaces around", lambda s: f" {s} "),
    ("every text accented", accented),
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


def _shape_edits(items: list[Any], t: type) -> Labelled:
    """The edits of a sequence as a whole: empty, reversed, the other of list and tuple, a
    one-shot iterator (as a generator passed in would be), the first item repeated, the last
    dropped."""
    out: Labelled = [("empty", t()), ("reversed", t(reversed(items))),
                     ("other sequence type", list(items) if t is tuple else tuple(items)),
                     ("one-shot iterator", _ITERATOR(items))]  # fmt: skip
    if items:
        out += [("first repeated", t([items[0], *items])), ("last dropped", t(items[:-1]))]
    return dedupe_labelled(out, drop=t(items))


def _shapes(items: list[Any], t: type) -> list[Any]:
    return [v for _, v in _shape_edits(items, t)]


def _alike(value: Any) -> Labelled:
    """The same edit of every text inside ``value``, each edit once."""
    return dedupe_labelled(((lb, _everywhere(value, e)) for lb, e in _EVERYWHERE), drop=value)


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
    return dedupe([*_neighbours(value, constants), *documented], drop=value)


def _neighbours(value: Any, constants: Constants, depth: int = 0) -> list[Any]:
    value = _base(value)
    t = type(value)
    if value is None:
        return []
    if t in (list, tuple):
        items = list(value)
        out = _shapes(items, t) + [_everywhere(value, e) for _, e in _EVERYWHERE]
        if depth < _MAX_DEPTH:
            for i, item in enumerate(items[:_MAX_ITEMS]):
                out += [t([*items[:i], v, *items[i + 1 :]])
                        for v in _neighbours(item, constants, depth + 1)]  # fmt: skip
        return dedupe(out, drop=value)
    if t is dict:
        out = [{}] + [_everywhere(value, e) for _, e in _EVERYWHERE]
        if depth < _MAX_DEPTH:
            for key in list(value)[:_MAX_ITEMS]:
                out += [{**value, key: v} for v in _neighbours(value[key], constants, depth + 1)]
                out += [_rekey(value, key, k) for k in _neighbours(key, constants, depth + 1)]
        return [v for v in dedupe(out) if v != value or type(v) is not dict]
    return dedupe(v for g in scalar_groups(value, constants) for v in g)


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
    """:func:`edits` with each draw tagged: ``(near input, documented kind or None, label)``.
    The documented kind lets the choice of tests keep every documented kind drawn; the label
    says what the edit did (``newline after``, ``item upper``, ``value 2``), so that it can keep
    one test per label too. ``values`` (the argument's documented values, top level only) are
    one more kind: one of them in place of ``value``, tagged ``value <i>`` (its place in the
    list)."""
    from hypothesis import strategies as st

    value = _base(value)
    documented = _documented_kind_groups(value, kinds) if depth == 0 else []
    undocumented = _edits(value, constants, depth).map(lambda v: (v[0], None, v[1]))
    extra = [st.sampled_from(g).map(lambda v, k=kind: (v, k, k)) for kind, g in documented]
    listed = _listed(value, values) if depth == 0 else []
    if listed:
        extra.append(
            st.sampled_from(listed).map(lambda iv: (iv[1], f"value {iv[0]}", f"value {iv[0]}"))
        )
    if not extra:
        return undocumented
    return st.one_of(undocumented, *extra) if _kinds(value, constants) else st.one_of(*extra)


def _listed(value: Any, values: tuple[Any, ...]) -> list[tuple[int, Any]]:
    """(place, value) of the documented ``values`` other than ``value`` itself."""
    drop = (type(value), repr(value))
    return [(i, v) for i, v in enumerate(values) if (type(v), repr(v)) != drop]


def _inner(value: Any, constants: Constants, depth: int, where: str) -> Any:
    """(near input, label) of a container's item: its own label after ``where``."""
    return _edits(_base(value), constants, depth).map(lambda v: (v[0], f"{where} {v[1]}"))


def _edits(value: Any, constants: Constants, depth: int) -> Any:
    """A strategy over ``(near input, label)`` of ``value`` (:func:`edits`)."""
    from hypothesis import strategies as st

    t = type(value)
    if t in (list, tuple, dict) and value and depth < _MAX_DEPTH:
        alike = _alike(value)
        if t is dict:
            keys = list(value)[:_MAX_ITEMS]
            own = st.just(({}, "empty"))
            inside = st.one_of(
                st.sampled_from(keys).flatmap(
                    lambda k: _inner(value[k], constants, depth + 1, "value").map(
                        lambda v: ({**value, k: v[0]}, v[1])
                    )
                ),
                st.sampled_from(keys).flatmap(
                    lambda k: _inner(k, constants, depth + 1, "key").map(
                        lambda n: (_rekey(value, k, n[0]), n[1])
                    )
                ),
            )
        else:
            items = list(value)
            own = st.sampled_from(_swap(_shape_edits(items, t)))

            def at(i: int) -> Any:
                return _inner(items[i], constants, depth + 1, "item").map(
                    lambda v: (t([*items[:i], v[0], *items[i + 1 :]]), v[1])
                )

            inside = st.integers(0, min(len(items), _MAX_ITEMS) - 1).flatmap(at)
        if alike:
            return st.one_of(own, st.sampled_from(_swap(alike)), inside)
        return st.one_of(own, inside)
    if t in (list, tuple):  # empty, or this deep: the container's own edits only
        return st.sampled_from(_swap(_shape_edits(list(value), t)))
    if t is dict:
        return st.just(({}, "empty") if value else (value, ""))
    groups = scalar_edits(value, constants)
    if not groups:
        return st.just((value, ""))  # no edit: no label
    return st.sampled_from([_swap(g) for g in groups]).flatmap(st.sampled_from)


def _swap(edits: Labelled) -> list[tuple[Any, str]]:
    """(value, label) pairs of labelled edits (label, value)."""
    return [(v, lb) for lb, v in edits]


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
    return len(scalar_groups(value, constants)) + documented


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

EDIT_KEY = "_swe_abs_edit"
"""The key under which :func:`near_calls` names the edit a call carries ``(argument, label)``
(:func:`tagged_edits`); not an argument: the caller pops it."""


def near_calls(spec: dict[str, Any], constants: Constants) -> Any:
    """A strategy over the call's arguments (name → value): the declared values, one of them
    replaced by one of its near inputs (:func:`edits`, with the argument's documented kinds)
    when that is expressible as test code (as declared otherwise). A call whose edit is of a
    documented kind says which under :data:`DOCUMENTED_KEY`; every edited call names its edit
    under :data:`EDIT_KEY`."""
    from hypothesis import strategies as st

    env = {"st": st}
    declared = {name: eval(expr, env) for name, expr in spec["args"].items()}  # noqa: S307
    names = list(declared)
    documented = domains(spec)
    listed = domain_values(spec)

    def edit_one(values: dict[str, Any]) -> Any:
        def at(name: str) -> Any:
            def call(drawn: tuple[Any, str | None, str]) -> dict[str, Any]:
                v, kind, label = drawn
                if expression(v) is None:
                    return values
                tags = {DOCUMENTED_KEY: (name, kind)} if kind else {}
                if label:
                    tags[EDIT_KEY] = (name, label)
                return {**values, name: v, **tags}

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
