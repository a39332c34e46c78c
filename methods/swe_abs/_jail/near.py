"""Near inputs: values next to the declared domain, made from a drawn call by one small,
type-directed edit of one argument, so that characterisation tests reach the inputs a
hand-written strategy rarely or never draws and a wrong fix most often gets wrong.

The edits, by kind (a draw picks a kind first, then an edit of that kind):

- text (``str``, and ``bytes``/``bytearray`` through Latin-1): its case changed; a character
  dropped (the first, the last, a punctuation character); digits (zeros before the first, ``_``,
  ``.``, ``,`` or a space between two, superscript digits; in a number, the digits before or
  after the point gone, the decimal and thousands marks swapped); letters (all ASCII letters
  accented, the capitals alone, the first, the last); a literal of the code under test (or a
  word inside it) alone, before, inside or after it, after it and a plural ``s``, after it
  twice, or after it with its separators written otherwise (``_id`` as ``-id``), or nearly
  alone (upper-cased, capitalised, a newline after it, spaces around it); empty, white
  space around it, a tab or a newline after it, doubled, repeated past 100 characters, a
  byte-order mark before it; in its place a word parsers treat apart (``None``, ``null``,
  ``NaN``, ``inf``, ``True``); for bytes, the other buffer type (the same bytes, and empty);
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
    """The literals of the code under test: integers and texts (bytes as Latin-1 text);
    ``matched`` the texts its patterns match (``_id`` of ``r"_id$"``), among the texts too."""

    ints: tuple[int, ...] = ()
    texts: tuple[str, ...] = field(default=())
    matched: tuple[str, ...] = field(default=())


# Methods whose first argument is a text the code looks for in its input.
_MATCHING = frozenset(
    {"endswith", "startswith", "replace", "split", "rsplit", "find", "rfind", "index",
     "rindex", "count", "strip", "lstrip", "rstrip", "removeprefix", "removesuffix",
     "partition", "rpartition"}
)  # fmt: skip


def _compared(tree: ast.AST) -> set[int]:
    """The ids of the text constants the code compares its input with: the first argument of a
    matching method (``s.endswith("_id")``), an operand of ``==``, ``!=``, ``in``, ``not in``
    (and the items of a tuple, list or set there)."""
    out: set[int] = set()

    def take(node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            out.add(id(node))
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            for item in node.elts:
                take(item)

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in _MATCHING:
                take(node.args[0])
        elif isinstance(node, ast.Compare):
            ops = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)
            if all(isinstance(op, ops) for op in node.ops):
                for operand in (node.left, *node.comparators):
                    take(operand)
    return out


def harvest(paths_lines: dict[str, set[int]]) -> Constants:
    """The integer and text literals on the given lines of the given files (absolute paths);
    files that do not parse give none. The texts the code matches (``matched``): those it
    compares its input with (:func:`_compared`) and those its patterns match
    (:func:`_pattern_literal`)."""
    ints: set[int] = set()
    texts: set[str] = set()
    matched: set[str] = set()
    for path, lines in paths_lines.items():
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        compared = _compared(tree)
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
                if id(node) in compared:
                    matched.add(text)
                # its words alone: a pattern's literal (``r"_id$"``) is matched as a word ("id")
                texts.update(w for w in re.findall(r"[^\W_]+", text) if w != text)
                literal = _pattern_literal(text)
                if literal:  # and the text it matches (``_id``), to put twice or respell
                    texts.add(literal)
                    matched.add(literal)
    return Constants(tuple(sorted(ints)), tuple(sorted(texts)), tuple(sorted(matched)))


_ANCHORS = re.compile(r"^(?:\^|\\A|\\b)+|(?:\$|\\Z|\\b)+$")
_ESCAPED = re.compile(r"\\([^\w\s])")


def _pattern_literal(text: str) -> str | None:
    """The text a pattern made of anchors around a literal matches (``_id$`` → ``_id``,
    ``^\\.git$`` → ``.git``); None for any other text."""
    core = _ANCHORS.sub("", text)
    if core == text or not core:
        return None
    if re.search(r"[\\^$.|?*+()\[\]{}]", _ESCAPED.sub("", core)):
        return None  # more than a literal: a class, a group, a repeat
    return _ESCAPED.sub(r"\1", core)


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


Labelled = list[tuple[str, Any]]
"""A group of edits of one kind, each with its label (what the edit does, e.g. ``newline
after``): the choice of tests keeps one test per label drawn (:mod:`.job_explore`)."""

# Words that parsers and converters give a meaning of their own (null values, special floats,
# booleans): a text that spells one is where a fix that special-cases them differs.
_WORDS = ("None", "null", "NaN", "inf", "True")
# Other spellings of a literal's separators: ``_id`` written ``-id``, `` id``, ``.id``.
_SEPARATORS = ("_", "-", " ", ".")


def _respelled(c: str) -> list[str]:
    """``c`` with all its separator characters (``_ - . space``) written as another one."""
    if not any(ch in _SEPARATORS for ch in c):
        return []
    out = []
    for sep in _SEPARATORS:
        t = "".join(sep if ch in _SEPARATORS else ch for ch in c)
        if t != c:
            out.append(t)
    return out


def _number_marks(s: str) -> Labelled:
    """A number written in text, its marks moved: the digits before the point gone (``-.5``),
    everything before the point gone (``.125``, the point the first character), the digits
    after it gone (``1.``), the decimal and thousands marks swapped (``1.234,5``)."""
    out: Labelled = []
    m = re.search(r"(\d+)\.\d", s)
    if m:
        out.append(("integer part dropped", s[: m.start(1)] + s[m.end(1) :]))
        out.append(("point first", s[m.end(1) :]))
    m = re.search(r"\d\.(\d+)", s)
    if m:
        out.append(("point last", s[: m.start(1)] + s[m.end(1) :]))
    if any(c.isdigit() for c in s) and ("." in s or "," in s):
        out.append(("marks swapped", s.translate(str.maketrans(".,", ",."))))
    return out


def _text_edits(s: str, constants: Constants) -> list[Labelled]:
    """The labelled edits of a text by kind, each without the text itself (empty kinds left
    out)."""
    case = [("upper", s.upper()), ("lower", s.lower()), ("swapcase", s.swapcase())]
    where = {0: "first", len(s) - 1: "last"}
    where.update({i: "punctuation" for i, c in enumerate(s) if not c.isalnum() and i not in where})
    dropped = [(f"drop {where[i]}", s[:i] + s[i + 1 :]) for i in sorted(where) if 0 <= i < len(s)]
    digits: Labelled = []
    first = next((i for i, c in enumerate(s) if c.isdigit()), None)
    if first is not None:
        digits.append(("leading zeros", s[:first] + "000" + s[first:]))
    for i in range(len(s) - 1):
        if s[i].isdigit() and s[i + 1].isdigit():  # separators numbers are written with
            digits += [(f"digits {sep!r}", s[: i + 1] + sep + s[i + 1 :]) for sep in "_., "]
            break
    if any(c in _SUPERSCRIPT for c in s):
        digits.append(("superscript", "".join(_SUPERSCRIPT.get(c, c) for c in s)))
    digits += _number_marks(s)
    letters: Labelled = []
    at = [i for i, c in enumerate(s) if c.isascii() and c.isalpha()]
    if at:  # every ASCII letter accented, the capitals alone, the first alone, the last alone
        letters.append(("accented", _accented(s)))
        letters.append(
            ("accented capitals", "".join(_accented(c) if c.isupper() else c for c in s))
        )
        letters += [(f"accented {n}", s[:i] + _accented(s[i]) + s[i + 1 :])
                    for n, i in (("first", at[0]), ("last", at[-1]))]  # fmt: skip
    # a literal of the code: a kind of its own for each text the code matches (named in the
    # labels, so each keeps tests of its own), one kind for the other literals
    literals = [_literal_edits(s, c, f"literal {c!r}") for c in constants.matched]
    literals.append([e for c in constants.texts if c not in constants.matched
                     for e in _literal_edits(s, c, "literal")])  # fmt: skip
    # empty; white space around; doubled; long (limits on counts); a byte-order mark before;
    # a newline after (``$`` in a pattern matches before it)
    blank: Labelled = [("empty", ""), ("spaces around", f" {s} "), ("tab after", f"{s}\t"),
                       ("newline after", f"{s}\n"), ("doubled", s + s),
                       ("long", s * (_LONG // max(len(s), 1) + 1) if s else s),
                       ("byte-order mark", _BOM + s)]  # fmt: skip
    words: Labelled = [(f"word {w}", w) for w in _WORDS]
    groups = [case, dropped, digits, letters, *literals, blank, words]
    return [g for g in (_dedupe_labelled(g, drop=s) for g in groups) if g]


def _literal_edits(s: str, c: str, name: str) -> Labelled:
    """The literal ``c`` alone, around ``s``, inside it, ending it and then a word going on (a
    plural), ending it twice, ending it spelled with other separators; and ``c`` nearly alone
    (upper-cased, capitalised, a newline after, spaces around: where ``==``, ``in``, a pattern
    and ``.strip()`` part ways). Labels start with ``name``."""
    middle = len(s) // 2
    out: Labelled = [(f"{name} alone", c), (f"{name} before", c + s),
                     (f"{name} inside", s[:middle] + c + s[middle:]), (f"{name} after", s + c),
                     (f"{name} plural", s + c + "s"), (f"{name} twice", s + c + c)]  # fmt: skip
    out += [(f"{name} respelled", s + r) for r in _respelled(c)]
    out += [(f"{name} upper", c.upper()), (f"{name} capitalised", c.capitalize()),
            (f"{name} newline after", c + "\n"), (f"{name} spaces around", f" {c} ")]  # fmt: skip
    return out


def _dedupe_labelled(edits: Iterable[tuple[str, Any]], drop: Any = None) -> Labelled:
    """:func:`_dedupe` on the values, each keeping the label it came first with."""
    seen = {(type(drop), repr(drop))} if drop is not None else set()
    out = []
    for label, v in edits:
        key = (type(v), repr(v))
        if key not in seen:
            seen.add(key)
            out.append((label, v))
    return out


def _int_edits(n: int, constants: Constants) -> list[Labelled]:
    """The code's constants; around them; one and ten further from zero. Integers only, on the
    drawn value's side of zero (zero only from zero): a size of 0 or -1, or a float for an
    integer, lies outside what most functions document, and there a correct fix may do
    otherwise (the first outside set's correct toolz ``partition`` and ``topk`` patches were
    rejected by such tests)."""
    side = 1 if n >= 0 else -1
    hundreds = n - n % 100 if n >= 0 else n + (-n) % 100
    around: Labelled = []
    for c in constants.ints:
        around += [("constant - 1", c - 1), ("constant + 1", c + 1), ("constant + 100", c + 100),
                   ("constant in the hundreds", hundreds + c if n >= 0 else hundreds - c)]  # fmt: skip
    groups = [[("constant", c) for c in constants.ints], around,
              [("one further", n + side), ("ten further", n + 10 * side)]]  # fmt: skip
    kept = (lambda v: v > 0) if n > 0 else (lambda v: v < 0) if n < 0 else (lambda v: v >= 0)
    on_side = [[(lb, v) for lb, v in g if kept(v)] for g in groups]
    return [g for g in (_dedupe_labelled(g, drop=n) for g in on_side) if g]


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


def _float_edits(x: float) -> list[Labelled]:
    """The special values; the negative, a half more."""
    special = [("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf), ("-0.0", -0.0)]
    near = [("negative", -x), ("half more", x + 0.5)] if math.isfinite(x) else []
    return [g for g in (_dedupe_labelled(g, drop=x) for g in (special, near)) if g]


def _as_bytes(t: type, s: str) -> Any:
    return t(s.encode("latin-1" if max(s, default="a") <= "\xff" else "utf-8"))


def _base(value: Any) -> Any:
    """A value of one of the generator's subclasses as its built-in base type's value."""
    t = type(value)
    return t.__mro__[1](value) if t in SUBCLASSES.values() else value


def _scalar_edits(value: Any, constants: Constants) -> list[Labelled]:
    """The labelled edits of a text, byte string or number by kind; none for anything else.
    Never None: a None where the function documents a value is a foreign input (the foreign
    probe's, pinned only where gold rejects it on purpose); pinned here, gold's incidental
    errors on None rejected correct toolz patches of the first outside set."""
    t = type(value)
    if t is str:
        return _text_edits(value, constants)
    if t in (bytes, bytearray):
        text = bytes(value).decode("latin-1")
        groups = [
            [(lb, _as_bytes(t, s.replace(_BOM, "\xef\xbb\xbf"))) for lb, s in g]  # UTF-8 mark
            for g in _text_edits(text, constants)
        ]
        other = [("other buffer", bytearray(value)), ("other buffer empty", bytearray())]
        groups.append(other if t is bytes else [("other buffer", bytes(value)),
                                                ("other buffer empty", b"")])  # fmt: skip
        return groups
    if t is int:
        return _int_edits(value, constants)
    if t is float:
        return _float_edits(value)
    return []


def _scalar_groups(value: Any, constants: Constants) -> list[list[Any]]:
    """The edits of a scalar by kind (:func:`_scalar_edits` without the labels)."""
    return [[v for _, v in g] for g in _scalar_edits(value, constants)]


# The same edit of every text inside a container (a list of words all upper-cased): an edit of
# one item rarely meets the others it interacts with.
_EVERYWHERE: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("every text upper", str.upper),
    ("every text lower", str.lower),
    ("every text last dropped", lambda s: s[:-1]),
    ("every text spaces around", lambda s: f" {s} "),
    ("every text accented", _accented),
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
    return _dedupe_labelled(out, drop=t(items))


def _shapes(items: list[Any], t: type) -> list[Any]:
    return [v for _, v in _shape_edits(items, t)]


def _alike(value: Any) -> Labelled:
    """The same edit of every text inside ``value``, each edit once."""
    return _dedupe_labelled(((lb, _everywhere(value, e)) for lb, e in _EVERYWHERE), drop=value)


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
        out = _shapes(items, t) + [_everywhere(value, e) for _, e in _EVERYWHERE]
        if depth < _MAX_DEPTH:
            for i, item in enumerate(items[:_MAX_ITEMS]):
                out += [t([*items[:i], v, *items[i + 1 :]])
                        for v in _neighbours(item, constants, depth + 1)]  # fmt: skip
        return _dedupe(out, drop=value)
    if t is dict:
        out = [{}] + [_everywhere(value, e) for _, e in _EVERYWHERE]
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
    groups = _scalar_edits(value, constants)
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
