"""Operator mutants of a Python file, restricted to chosen lines, with mutmut's operator families.

Every family of mutmut 3.8 (``mutmut/mutation/mutators.py``) is covered, on Python's own ``ast``
instead of libcst: numbers (n → n + 1), strings ("XX" + s + "XX", lower, upper), names
(True ↔ False, deepcopy → copy), assignments (value → None, None → ""), augmented assignments
(``+=`` → ``=``), unary removal (``not x`` → ``x``, ``~x`` → ``x``), ``dict(a=…)`` keywords
(``aXX=``), call arguments (each → None; each removed when there are several), string-method
swaps (lower ↔ upper, lstrip ↔ rstrip, find ↔ rfind, ljust ↔ rjust, index ↔ rindex,
removeprefix ↔ removesuffix, partition ↔ rpartition; split ↔ rsplit with two arguments or a
``maxsplit``), lambdas (body → None, ``None`` → 0), keywords (is ↔ is not, in ↔ not in,
break → return, continue → break), operator swaps (+ ↔ -, * ↔ /, // → /, % → /, ** → *,
<< ↔ >>, & ↔ |, ^ → &, unary + ↔ -, and ↔ or, < ↔ <=, > ↔ >=, == ↔ !=, and the augmented
forms), ``match`` case removal and conditional expressions (test → ``(t) and False`` /
``(t) or True``). Like mutmut, only code inside module-level functions and methods of
module-level classes is mutated, never annotations, decorators, ``len``/``isinstance`` calls,
non-literal default values, ``__getattribute__``/``__setattr__``/``__new__``, enum hooks, lines
marked ``# pragma: no mutate`` or statements excluded from coverage (``# pragma: no cover``).

A mutant is applied by splicing text at the mutated node, so the file keeps its line numbers
(a shorter replacement is padded with newlines inside brackets). :func:`bytecode_equivalent`
is the first equivalent-mutant filter: the mutant compiles to the same code as the original.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from methods.swe_abs._jail.swap import code_key
from methods.swe_abs._mutation_operators import (
    FAMILIES,
    NEVER_FUNCTIONS,
    Collector,
    SourceText,
    decorated_skip,
    excluded_lines,
    units,
)

__all__ = ["FAMILIES", "Mutant", "bytecode_equivalent", "changed_functions", "generate_mutants"]


@dataclass(frozen=True)
class Mutant:
    """One operator mutant of one file."""

    id: str
    path: str
    line: int
    family: str
    description: str
    function: str  # qualified name of the enclosing module-level function or method
    source: str  # the whole mutated file
    in_signature: bool = False  # the mutation sits in a default value (defaults change)
    function_span: tuple[int, int] = (0, 0)  # first line (decorators included), last line
    class_name: str | None = None

    def variant(self) -> dict[str, object]:
        """The jail runner's variant: the mutated function alone (fast path) plus the whole file
        (fallback, and the only way when a default value changed)."""
        out: dict[str, object] = {"files": {self.path: self.source}}
        if not self.in_signature and self.function_span[0]:
            first, last = self.function_span
            lines = self.source.splitlines(keepends=True)[first - 1 : last]
            text = "".join(lines)
            indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
            if indent:
                text = "".join(line[indent:] if line.strip() else line for line in lines)
            out["functions"] = [
                {
                    "path": self.path,
                    "qualname": self.function,
                    "class": self.class_name,
                    "first_line": first,
                    "source": text,
                }
            ]
        return out

    def patch(self, original: str) -> str:
        from methods.swe_abs._diff import make_patch

        return make_patch(self.path, original, self.source)


def generate_mutants(
    path: str,
    source: str,
    lines: Iterable[int] | None = None,
    *,
    families: Iterable[str] = FAMILIES,
    skip_decorated: bool = True,
) -> list[Mutant]:
    """Every operator mutant of ``source`` whose mutated node starts on one of ``lines``
    (all lines when None), in source order. Each mutant's ``source`` compiles."""
    tree = ast.parse(source, filename=path)
    src = SourceText(source)
    allowed = set(lines) if lines is not None else None
    no_mutate, no_cover = excluded_lines(src, tree)
    wanted = set(families)
    mutants: list[Mutant] = []
    for qualname, func in units(tree):
        if func.name in NEVER_FUNCTIONS or (skip_decorated and decorated_skip(func)):
            continue
        if func.lineno in no_cover:
            continue
        if allowed is not None and allowed.isdisjoint(
            range(func.lineno, (func.end_lineno or func.lineno) + 1)
        ):
            continue  # every node the collector would edit lies inside the function's lines
        col = Collector(src, allowed, no_mutate | no_cover)
        col.function(func)
        for index, edit in enumerate(col.edits):
            if edit.family not in wanted:
                continue
            new_source = src.splice(edit)
            if new_source is None or new_source == source:
                continue
            try:
                compile(new_source, path, "exec", dont_inherit=True)
            except (SyntaxError, ValueError):
                continue  # e.g. `del` target turned into None
            mutants.append(
                Mutant(
                    id="",
                    path=path,
                    line=edit.node_line,
                    family=edit.family,
                    description=edit.description,
                    function=qualname,
                    source=new_source,
                    in_signature=index in col.in_signature,
                    function_span=(
                        func.decorator_list[0].lineno if func.decorator_list else func.lineno,
                        func.end_lineno or func.lineno,
                    ),
                    class_name=qualname.split(".")[0] if "." in qualname else None,
                )
            )
    seen: set[str] = set()
    unique = []
    for m in sorted(mutants, key=lambda m: (m.line, m.family, m.description)):
        if m.source in seen:
            continue
        seen.add(m.source)
        unique.append(m)
    stem = path.rsplit("/", 1)[-1]
    return [
        Mutant(
            id=f"{stem}:{m.line}:{m.family}:{i}",
            path=m.path,
            line=m.line,
            family=m.family,
            description=m.description,
            function=m.function,
            source=m.source,
            in_signature=m.in_signature,
            function_span=m.function_span,
            class_name=m.class_name,
        )
        for i, m in enumerate(unique)
    ]


def bytecode_equivalent(original: str, mutated: str, path: str = "<mutant>") -> bool:
    """True when both sources compile to the same code (the first equivalent-mutant filter)."""
    b = compile(mutated, path, "exec", dont_inherit=True, optimize=0)
    return _source_key(original, path) == code_key(b)


@lru_cache(maxsize=8)
def _source_key(source: str, path: str) -> tuple:
    """The code key of a file that every mutant of it is compared with (compiled once)."""
    return code_key(compile(source, path, "exec", dont_inherit=True, optimize=0))


def changed_functions(original: str, mutated: str) -> list[str]:
    """Qualified names of the module-level functions/methods whose code differs."""
    out = []
    a_tree, b_tree = ast.parse(original), ast.parse(mutated)
    a_units = {q: ast.dump(f) for q, f in units(a_tree)}
    for q, f in units(b_tree):
        if a_units.get(q) != ast.dump(f):
            out.append(q)
    return out
