"""The edits of one text, byte string or number for the near inputs (:mod:`.near`), by kind,
each labelled with what it did (``newline after``, ``point first``, ``literal '_id' twice``).
Nothing here depends on any instance."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from .literals import Constants

# Superscript digits only: `str.isdigit` takes them, `int`, `\d` and `str.isdecimal` do not. Other
# decimal digits (full-width, Arabic-Indic) are taken by `int` and `\d` but not by `[0-9]`, and a
# correct fix written with either differs from gold on them (the second outside set's correct
# slugify patch, `[0-9A-Fa-f]` for gold's `[\da-fA-F]`, was rejected by such tests): gold's
# choice there is incidental, not what the fix is about.
_SUPERSCRIPT = dict(zip("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True))
_ACCENTED = {"lower": "é", "upper": "É"}
_LONG = 100  # a text repeated to at least this many characters (limits on counts of replacements)
_BOM = "\ufeff"


def dedupe(values: Iterable[Any], drop: Any = None) -> list[Any]:
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


def accented(s: str) -> str:
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


# A code point written in a text: an HTML numeric reference (decimal or hex), ``U+``, or a
# backslash escape. Its edits are the bounds of the code-point classes that decoders treat apart.
_CODE_POINT = re.compile(r"(&#[xX]|&#|[uU]\+|\\[uUx])([0-9A-Fa-f]+)(;?)")
_CODE_POINT_BOUNDS = (
    ("NUL", 0x0), ("control", 0xA), ("DEL", 0x7F), ("C1 control", 0x80), ("Latin-1 last", 0xFF),
    ("surrogate first", 0xD800), ("surrogate last", 0xDFFF), ("noncharacter", 0xFDD0),
    ("BMP last", 0xFFFF),
    ("astral first", 0x10000), ("astral", 0x1F600), ("Unicode last", 0x10FFFF),
    ("past Unicode", 0x110000),
)  # fmt: skip


def _code_points(s: str) -> Labelled:
    """A code point written in ``s`` (``&#65;``, ``&#x41;``, ``U+0041``, ``\\x41``) replaced by
    the bounds of the classes decoders treat apart (NUL, controls, surrogates, noncharacters,
    the BMP's end, astral planes, past Unicode), in its base and letter case; and by a surrogate
    pair. The labels name the notation (``in '&#x'``): a decoder is often one pattern per
    notation, so each keeps tests of its own."""
    m = _CODE_POINT.search(s)
    if m is None:
        return []
    prefix, digits, end = m.groups()
    base = 10 if prefix == "&#" else 16
    if base == 10 and not digits.isdigit():
        return []
    upper = not any(c.islower() for c in digits)

    def written(v: int) -> str:
        text = str(v) if base == 10 else format(v, "X" if upper else "x")
        return prefix + text + end

    head, tail = s[: m.start()], s[m.end() :]
    notation = f"in {prefix!r}"
    out: Labelled = [(f"code point {name} {notation}", head + written(v) + tail)
                     for name, v in _CODE_POINT_BOUNDS]  # fmt: skip
    pair = written(0xD83D) + written(0xDE00)
    out.append((f"code point surrogate pair {notation}", head + pair + tail))
    return out


# A combining mark outside the Basic Multilingual Plane (PHAISTOS DISC SIGN COMBINING OBLIQUE
# STROKE, category Mn): tables and ranges written for the BMP alone miss it.
_ASTRAL_MARK = "\U000101fd"


def _first_mark(s: str) -> int | None:
    """The index of the first combining mark (category M*) of ``s``, if any."""
    return next((i for i, c in enumerate(s) if unicodedata.category(c).startswith("M")), None)


def _astral_marks(s: str) -> Labelled:
    """The first combining mark of ``s`` replaced by one outside the BMP."""
    at = _first_mark(s)
    if at is None:
        return []
    return [("astral mark", s[:at] + _ASTRAL_MARK + s[at + 1 :])]


# Dashes other than the ASCII hyphen-minus that texts copied from prose carry (hyphen, en dash).
_DASHES = (("hyphen", "\u2010"), ("en dash", "\u2013"))
_STACKED_MARK = "\u0301"  # COMBINING ACUTE ACCENT, stacked after a text's first mark


def _unicode_forms(s: str) -> Labelled:
    """``s`` in the other Unicode normal forms (composed, decomposed), with its ASCII hyphens as
    other dashes, and with a second combining mark stacked on its first."""
    out: Labelled = [(f"normal form {form}", unicodedata.normalize(form, s))
                     for form in ("NFC", "NFD")]  # fmt: skip
    if "-" in s:
        out += [(f"dash {name}", s.replace("-", dash)) for name, dash in _DASHES]
    at = _first_mark(s)
    if at is not None:
        out.append(("stacked marks", s[: at + 1] + _STACKED_MARK + s[at + 1 :]))
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
        if first == 0 or s[first - 1] not in "+-":  # a sign where none is written
            digits.append(("plus sign", s[:first] + "+" + s[first:]))
        digits.append(("word after", f"{s} apples"))
    for i in range(len(s) - 1):
        if s[i].isdigit() and s[i + 1].isdigit():  # separators numbers are written with
            digits += [(f"digits {sep!r}", s[: i + 1] + sep + s[i + 1 :]) for sep in "_., "]
            break
    if any(c in _SUPERSCRIPT for c in s):
        digits.append(("superscript", "".join(_SUPERSCRIPT.get(c, c) for c in s)))
        digits.append(("in parentheses", f"({s})"))  # an accounting negative, a bracketed note
    digits += _number_marks(s)
    letters: Labelled = []
    at = [i for i, c in enumerate(s) if c.isascii() and c.isalpha()]
    if at:  # every ASCII letter accented, the capitals alone, the first alone, the last alone
        letters.append(("accented", accented(s)))
        letters.append(("accented capitals", "".join(accented(c) if c.isupper() else c for c in s)))
        letters += [(f"accented {n}", s[:i] + accented(s[i]) + s[i + 1 :])
                    for n, i in (("first", at[0]), ("last", at[-1]))]  # fmt: skip
    word = re.search(r"[A-Za-z]{2,}", s)
    if word:  # a possessive or contraction inside the text: ``'`` between letters
        letters.append(("apostrophe s", s[: word.end()] + "'s" + s[word.end() :]))
    marks = _astral_marks(s) + _unicode_forms(s)
    # a literal of the code: a kind of its own for each text the code matches (named in the
    # labels, so each keeps tests of its own), one kind for the other literals
    literals = [_literal_edits(s, c, f"literal {c!r}") for c in constants.matched]
    literals.append([e for c in constants.texts if c not in constants.matched
                     for e in _literal_edits(s, c, "literal")])  # fmt: skip
    # empty; white space around; doubled; long (limits on counts); a byte-order mark before;
    # a newline after (``$`` in a pattern matches before it); a newline before (``.`` in a
    # pattern stops at it, so ``match`` sees an empty first line)
    blank: Labelled = [("empty", ""), ("spaces around", f" {s} "), ("tab after", f"{s}\t"),
                       ("newline after", f"{s}\n"), ("newline before", f"\n{s}"),
                       ("doubled", s + s),
                       ("long", s * (_LONG // max(len(s), 1) + 1) if s else s),
                       ("byte-order mark", _BOM + s),
                       ("many words", " ".join([s] * 40) if s.strip() else s)]  # fmt: skip
    words: Labelled = [(f"word {w}", w) for w in _WORDS]
    groups = [case, dropped, digits, _code_points(s), letters, marks, *literals, blank, words]
    return [g for g in (dedupe_labelled(g, drop=s) for g in groups) if g]


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


def dedupe_labelled(edits: Iterable[tuple[str, Any]], drop: Any = None) -> Labelled:
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
    return [g for g in (dedupe_labelled(g, drop=n) for g in on_side) if g]


def _float_edits(x: float) -> list[Labelled]:
    """The special values; the negative, a half more. Not NaN: it compares false with
    everything, so what a function does with it follows the order of its comparisons (``min``
    and ``max`` return whichever argument came first), which a correct fix may write otherwise
    (a correct boltons ``backoff_iter`` of the sixth outside set, ``min`` taken in each branch,
    was rejected by a ``stop = nan`` test). A declared domain that draws NaN still tests it."""
    special = [("inf", math.inf), ("-inf", -math.inf), ("-0.0", -0.0)]
    near = [("negative", -x), ("half more", x + 0.5)] if math.isfinite(x) else []
    return [g for g in (dedupe_labelled(g, drop=x) for g in (special, near)) if g]


def _as_bytes(t: type, s: str) -> Any:
    return t(s.encode("latin-1" if max(s, default="a") <= "\xff" else "utf-8"))


def scalar_edits(value: Any, constants: Constants) -> list[Labelled]:
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


def scalar_groups(value: Any, constants: Constants) -> list[list[Any]]:
    """The edits of a scalar by kind (:func:`scalar_edits` without the labels)."""
    return [[v for _, v in g] for g in scalar_edits(value, constants)]
