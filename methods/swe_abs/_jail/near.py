"""Near inputs: values next to the declared domain, made from a drawn value by small, type-directed
edits, so that characterisation tests reach the inputs a hand-written strategy rarely or never
draws and a wrong fix most often gets wrong:

- text (``str``, and ``bytes``/``bytearray`` through Latin-1): its case changed; one character
  deleted (the first, the last, each punctuation character); ``_``, ``.`` or ``,`` between two
  digits; its digits written as superscript digits; its ASCII letters
  (all, the capitals, the first, the last) as accented ones; zeros before its first digit; a
  constant of the code under test put in front, in the middle or at the end; white space around
  it; empty; the other buffer type (the same bytes, and empty);
- integers: the code's own integer constants, one either side, plus a hundred, with the drawn
  value's hundreds (``13`` → ``113``, ``1013``), its negative, zero, as a float, NaN and the
  infinities;
- floats: NaN, the infinities, ``-0.0``, its negative, the value plus a half, as an integer;
- sequences and mappings: one item (or value, or key) replaced by one of its neighbours, the other
  of list and tuple, a one-shot iterator over the items, reversed, empty, the first item repeated,
  the last dropped;
- any value: ``None``.

The constants are the literals on the target lines (the slice of the fix), harvested from the
reference tree. What a near input pins is the reference's observation (its return value, its
exception type, the arguments after the call): on inputs the function's documentation admits a
correct fix must agree; whether the edits stay there is measured on every correct candidate the
project ships. Nothing here depends on any instance."""

from __future__ import annotations

import ast
import math
import os
from dataclasses import dataclass, field
from typing import Any

from .values import HELPERS, SUBCLASSES, expression

_MAX_DEPTH = 2  # containers: neighbours of items this deep
_MAX_ITEMS = 3  # containers: the first items whose neighbours count
_MAX_CONSTANT_TEXT = 24
# Superscript digits only: `str.isdigit` takes them, `int`, `\d` and `str.isdecimal` do not. Other
# decimal digits (full-width, Arabic-Indic) are taken by `int` and `\d` but not by `[0-9]`, and a
# correct fix written with either differs from gold on them (the second outside set's correct
# slugify patch, `[0-9A-Fa-f]` for gold's `[\da-fA-F]`, was rejected by such tests): gold's
# choice there is incidental, not what the fix is about.
_SUPERSCRIPT = dict(zip("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True))
_ACCENTED = {"lower": "é", "upper": "É"}
_ITERATOR = HELPERS["_SweAbsIterator"]


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
                texts.add(value.decode("latin-1") if isinstance(value, bytes) else value)
    return Constants(tuple(sorted(ints)), tuple(sorted(texts)))


def _digits(s: str, table: dict[str, str]) -> str:
    return "".join(table.get(c, c) for c in s)


def _letters(s: str) -> str:
    out = []
    for c in s:
        if c.isascii() and c.isalpha():
            c = _ACCENTED["upper" if c.isupper() else "lower"]
        out.append(c)
    return "".join(out)


def _text_neighbours(s: str, constants: Constants) -> list[str]:
    out = [s.upper(), s.lower(), s.swapcase(), "", f" {s} ", f"{s}\t", s + s]
    positions = {0, len(s) - 1} | {i for i, c in enumerate(s) if not c.isalnum()}
    out += [s[:i] + s[i + 1 :] for i in sorted(positions) if 0 <= i < len(s)]
    first_digit = next((i for i, c in enumerate(s) if c.isdigit()), None)
    if first_digit is not None:
        out.append(s[:first_digit] + "000" + s[first_digit:])  # leading zeros
    for i in range(len(s) - 1):
        if s[i].isdigit() and s[i + 1].isdigit():  # separators numbers are written with
            out += [s[: i + 1] + sep + s[i + 1 :] for sep in ("_", ".", ",")]
            break
    if any(c in _SUPERSCRIPT for c in s):
        out.append(_digits(s, _SUPERSCRIPT))
    letters = [i for i, c in enumerate(s) if c.isascii() and c.isalpha()]
    if letters:  # every ASCII letter accented, the capitals alone, the first, the last alone
        out.append(_letters(s))
        out.append("".join(_letters(c) if c.isupper() else c for c in s))
        out += [s[:i] + _letters(s[i]) + s[i + 1 :] for i in (letters[0], letters[-1])]
    middle = len(s) // 2
    for c in constants.texts:
        out += [c, c + s, s[:middle] + c + s[middle:], s + c]
    return [v for v in dict.fromkeys(out) if v != s]


def _int_neighbours(n: int, constants: Constants) -> list[Any]:
    hundreds = n - n % 100 if n >= 0 else n + (-n) % 100
    out: list[Any] = [0, -n, float(n), math.nan, math.inf, -math.inf]
    for c in constants.ints:
        out += [c, c - 1, c + 1, c + 100, hundreds + c if n >= 0 else hundreds - c]
    return [v for v in dict.fromkeys(out) if not (type(v) is int and v == n)]


def _float_neighbours(x: float) -> list[Any]:
    out: list[Any] = [math.nan, math.inf, -math.inf, -0.0]
    if math.isfinite(x):
        out += [-x, x + 0.5, int(x)]
    return [v for v in out if repr(v) != repr(x)]


def neighbours(value: Any, constants: Constants, depth: int = 0) -> list[Any]:
    """The near inputs made from ``value`` (see the module's text); ``None`` always among them
    unless the value is None. Values of the generator's subclasses are edited as their base
    type's values and keep no subclass."""
    t = type(value)
    out: list[Any] = []
    if value is None:
        return out
    if t in SUBCLASSES.values():
        value = t.__mro__[1](value)
        t = type(value)
    if t is str:
        out += _text_neighbours(value, constants)
    elif t in (bytes, bytearray):
        texts = _text_neighbours(bytes(value).decode("latin-1"), constants)
        out += [t(s.encode("latin-1" if max(s, default="a") <= "\xff" else "utf-8"))
                for s in texts]  # fmt: skip
        out += [bytearray(value), bytearray()] if t is bytes else [bytes(value), b""]
    elif t is int:
        out += _int_neighbours(value, constants)
    elif t is float:
        out += _float_neighbours(value)
    elif t in (list, tuple):
        out += _sequence_neighbours(list(value), t, constants, depth)
    elif t is dict:
        out += _mapping_neighbours(value, constants, depth)
    out.append(None)
    return out


def _sequence_shapes(items: list[Any], t: type) -> list[Any]:
    """The edits of a sequence as a whole: empty, reversed, the other of list and tuple, a
    one-shot iterator (as a generator passed in would be), the first item repeated, the last
    dropped (never the sequence itself)."""
    out: list[Any] = [t(), t(reversed(items)), list(items) if t is tuple else tuple(items)]
    out.append(_ITERATOR(items))
    if items:
        out += [t([items[0], *items]), t(items[:-1])]
    return [v for v in out if not (type(v) is t and v == t(items))]


def _sequence_neighbours(items: list[Any], t: type, constants: Constants, depth: int) -> list[Any]:
    out = _sequence_shapes(items, t)
    if depth < _MAX_DEPTH:
        for i, item in enumerate(items[:_MAX_ITEMS]):
            for near in neighbours(item, constants, depth + 1):
                out.append(t([*items[:i], near, *items[i + 1 :]]))
    return [v for v in out if not (type(v) is t and v == t(items))]


def _mapping_neighbours(d: dict[Any, Any], constants: Constants, depth: int) -> list[Any]:
    out: list[Any] = [{}]
    if depth < _MAX_DEPTH:
        for key in list(d)[:_MAX_ITEMS]:
            for near in neighbours(d[key], constants, depth + 1):
                out.append({**d, key: near})
            for near in neighbours(key, constants, depth + 1):
                try:
                    hash(near)
                except TypeError:
                    continue
                if near not in d:
                    out.append({(near if k == key else k): v for k, v in d.items()})
    return out


def edits(value: Any, constants: Constants, depth: int = 0) -> Any:
    """A Hypothesis strategy over the near inputs of ``value``, one edit at one place: for a
    non-empty list, tuple or dict, half the draws edit the container itself (shape, None) and
    half edit one of its first items (values and keys alike for a dict), recursively, so that
    an edit deep inside is as likely as one on top; for anything else, one of its
    :func:`neighbours` (the value itself when it has none)."""
    from hypothesis import strategies as st

    t = type(value)
    if t in SUBCLASSES.values():
        value, t = t.__mro__[1](value), t.__mro__[1]
    if t in (list, tuple) and value and depth < _MAX_DEPTH:
        items = list(value)
        own = [*_sequence_shapes(items, t), None]

        def at(i: int) -> Any:
            return edits(items[i], constants, depth + 1).map(
                lambda v: t([*items[:i], v, *items[i + 1 :]])
            )

        inside = st.integers(0, min(len(items), _MAX_ITEMS) - 1).flatmap(at)
        return st.one_of(st.sampled_from(own), inside)
    if t is dict and value and depth < _MAX_DEPTH:
        keys = list(value)[:_MAX_ITEMS]
        values = st.sampled_from(keys).flatmap(
            lambda k: edits(value[k], constants, depth + 1).map(lambda v: {**value, k: v})
        )
        renamed = st.sampled_from(keys).flatmap(
            lambda k: edits(k, constants, depth + 1).map(lambda new: _rekey(value, k, new))
        )
        return st.one_of(st.sampled_from([{}, None]), values, renamed)
    options = neighbours(value, constants, depth)
    return st.sampled_from(options) if options else st.just(value)


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


def near_strategies(spec: dict[str, Any], constants: Constants) -> dict[str, Any]:
    """name → strategy: a value of the declared domain, or one of its near inputs (:func:`edits`)
    when that is expressible as test code (the declared value otherwise)."""
    from hypothesis import strategies as st

    env = {"st": st}

    def edit(value: Any) -> Any:
        return edits(value, constants).map(lambda v: v if expression(v) is not None else value)

    out = {}
    for name, expr in spec["args"].items():
        declared = eval(expr, env)  # noqa: S307 - the instance's own spec
        # each argument is edited or kept independently: most inputs mix both
        out[name] = st.one_of(declared, declared.flatmap(edit))
    return out


def target_paths(repo: str, targets: dict[str, list[int]]) -> dict[str, set[int]]:
    return {os.path.join(repo, p): set(lines) for p, lines in targets.items()}
