"""Fine classes (*facets*) of the values the characterisation search draws, so that its greedy
choice of tests spreads over the parts of the domain where a function's behaviour usually turns:
the ends of a string and its runs of character classes (lower, upper, digit, space, each other
character as itself), how often a character repeats, an integer's sign, digit count and last
digits, a float's sign, whether it is whole and below one, a sequence's length, repeats and
order, the facets of its first items, and the order of every two arguments that compare (numbers, strings). A facet is a
hashable tuple; nothing here depends on any instance."""

from __future__ import annotations

import math
from typing import Any

_MAX_ITEMS = 8  # items of a container whose facets count
_TEXT_LIMIT = 64  # characters of a string whose facets count


def _bucket(n: int) -> int:
    """0, 1, 2, 3 (3-4), 5 (5-8), 9 (9 and more)."""
    for edge in (9, 5, 3):
        if n >= edge:
            return edge
    return n


def char_class(c: str) -> str:
    """``a`` lower-case letter, ``A`` upper-case, ``9`` digit, `` `` white space, else itself."""
    if c.isspace():
        return " "
    if c.isdigit():
        return "9"
    if c.isalpha():
        return "A" if c.isupper() else "a"
    return c


def text_facets(s: str) -> set[tuple[Any, ...]]:
    """Length bucket; first and last character, last two; the class string's first and last
    three classes and its class bigrams and trigrams; each character's count (1, 2, 3+)."""
    s = s[:_TEXT_LIMIT]
    out: set[tuple[Any, ...]] = {("len", _bucket(len(s)))}
    if not s:
        return out
    cls = "".join(char_class(c) for c in s)
    out |= {("first", s[0]), ("last", s[-1]), ("last2", s[-2:]), ("head", cls[:3]),
            ("tail", cls[-3:])}  # fmt: skip
    for n in (2, 3):
        out |= {("gram", cls[i : i + n]) for i in range(len(cls) - n + 1)}
        out |= {("chars", s[i : i + n]) for i in range(len(s) - n + 1)}
    out.add(("last3", s[-3:]))
    out |= {("count", c, min(s.count(c), 3)) for c in set(s)}
    return out


def _number_facets(value: int | float) -> set[tuple[Any, ...]]:
    if isinstance(value, float) and not math.isfinite(value):
        return {("special", repr(value))}
    sign = (value > 0) - (value < 0)
    if isinstance(value, float):
        return {("sign", sign), ("whole", value.is_integer()), ("below1", abs(value) < 1)}
    digits = str(abs(value))
    return {("sign", sign), ("digits", min(len(digits), 4)), ("last", digits[-1]),
            ("last2", digits[-2:])}  # fmt: skip


def _sequence_facets(items: list[Any], depth: int) -> set[tuple[Any, ...]]:
    out: set[tuple[Any, ...]] = {("len", _bucket(len(items)))}
    try:
        out.add(("repeats", len(set(items)) < len(items)))
    except TypeError:  # unhashable items
        pass
    try:
        ordered = sorted(items)
        out.add(
            ("order", "up" if items == ordered else "down" if items == ordered[::-1] else "mixed")
        )
    except TypeError:  # items that do not compare
        pass
    for item in items[:_MAX_ITEMS]:
        out |= {("item", *f) for f in facets(item, depth + 1)}
    return out


def facets(value: Any, depth: int = 0) -> set[tuple[Any, ...]]:
    """The facets of one value (its type's name always among them); containers add their first
    items' facets one level down."""
    out: set[tuple[Any, ...]] = {("type", type(value).__name__)}
    if depth > 1 or value is None:
        return out
    if isinstance(value, bool):
        return out | {("bool", value)}
    if isinstance(value, int | float):
        return out | _number_facets(value)
    if isinstance(value, str):
        return out | text_facets(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return out | text_facets(bytes(value).decode("latin-1"))
    if isinstance(value, dict):
        return (
            out
            | _sequence_facets(list(value), depth)
            | {
                ("value", *f)
                for v in list(value.values())[:_MAX_ITEMS]
                for f in facets(v, depth + 1)
            }
        )
    if isinstance(value, list | tuple | set | frozenset):
        return out | _sequence_facets(list(value), depth)
    return out


def _order_kind(value: Any) -> str | None:
    """``num``, ``str`` or ``bytes`` for a value that orders with others of its kind (bools and
    NaN do not count); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return None if isinstance(value, float) and math.isnan(value) else "num"
    if isinstance(value, str):
        return "str"
    if isinstance(value, bytes):
        return "bytes"
    return None


def relations(kwargs: dict[str, Any]) -> set[tuple[Any, ...]]:
    """For every two arguments that order with each other (two numbers, two strings, two byte
    strings): which is larger, by kind, and for numbers whether they are one apart."""
    items = sorted((k, v, kind) for k, v in kwargs.items() if (kind := _order_kind(v)))
    out: set[tuple[Any, ...]] = set()
    for i, (a, x, kind) in enumerate(items):
        for b, y, other in items[i + 1 :]:
            if kind != other:
                continue
            out.add(("rel", a, b, kind, (x > y) - (x < y)))
            if kind == "num" and abs(x - y) == 1:
                out.add(("apart1", a, b))
    return out
