"""The literals of the code under test (the target lines of a fix), harvested for the near
inputs (:mod:`.near`): its integer and text constants, the words inside the texts, and the texts
it *matches* — those it compares its input with and those a pattern of anchors around a literal
matches (``_id$`` → ``_id``). Nothing here depends on any instance."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

_MAX_CONSTANT_TEXT = 24


@dataclass(frozen=True)
class Constants:
    """The literals of the code under test: integers and texts (bytes as Latin-1 text);
    ``matched`` the texts it matches (compares its input with, or a pattern of it matches:
    ``_id`` of ``r"_id$"``), among the texts too."""

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
