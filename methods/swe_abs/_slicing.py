"""The lines a strengthened test suite must cover: SWE-ABS's program slice of the gold patch.

SWE-ABS (step 0) parses the patched file with tree-sitter and computes, per line, whether it is
executable (docstrings and continuation lines of multi-line signatures removed), its scope
(function, class or global) and its def/use sets. From the lines the gold patch adds it takes a
forward (def → use) plus backward (use → def) slice, k hops deep, in two versions: limited to each
modified line's own scope (k = 5) and over the whole file (k = 1). Modified lines in the global
scope (imports, module constants) are filtered out first. The coverage target is
``exe_slice_lines_scope`` = scoped slice ∩ executable lines.

Python's own ``ast`` gives the same facts here. A multi-line statement is one node whose lines all
map to its first line (the line coverage.py and ``trace`` report); a compound statement's header
(``if``/``for``/``while``/``with``/``def``) is its own line and its body lines are separate
statements. The slice is flow-insensitive within its region, as a def/use graph over lines is.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

GLOBAL_SCOPE = "<module>"
PAPER_K_SCOPE = 5
PAPER_K_FILE = 1


@dataclass(frozen=True)
class LineFacts:
    """Per-statement facts of one Python file, keyed by the statement's first line."""

    executable: frozenset[int]
    scope: dict[int, str]
    defs: dict[int, frozenset[str]]
    uses: dict[int, frozenset[str]]
    statement_of: dict[int, int]  # any line inside a statement's own span -> its first line

    def statement(self, line: int) -> int | None:
        return self.statement_of.get(line)


def _names(node: ast.AST | None, ctx: type) -> set[str]:
    """Names (and dotted attribute chains) in ``node`` with the given context."""
    out: set[str] = set()
    if node is None:
        return out
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ctx):
            out.add(sub.id)
        elif isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ctx):
            chain = _chain(sub)
            if chain:
                out.add(chain)
    return out


def _chain(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _loads(nodes: Iterable[ast.AST | None]) -> set[str]:
    out: set[str] = set()
    for n in nodes:
        out |= _names(n, ast.Load)
        # a store into `a.b` or `a[i]` reads `a`
        if n is not None:
            for sub in ast.walk(n):
                if isinstance(sub, ast.Attribute | ast.Subscript) and isinstance(
                    sub.ctx, ast.Store | ast.Del
                ):
                    out |= _names(sub.value, ast.Load) | _stored_root(sub)
    return out


def _stored_root(target: ast.Attribute | ast.Subscript) -> set[str]:
    """The variable a store into ``a.b[i]`` (or ``a[i]``, ``a.b``) changes: ``{"a"}``."""
    root = target.value
    while isinstance(root, ast.Attribute | ast.Subscript):
        root = root.value
    return {root.id} if isinstance(root, ast.Name) else set()


def _stores(nodes: Iterable[ast.AST | None]) -> set[str]:
    out: set[str] = set()
    for n in nodes:
        if n is None:
            continue
        out |= _names(n, ast.Store) | _names(n, ast.Del)
        for sub in ast.walk(n):  # a store into `a[i]` (or `a.b`) changes `a`
            if isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store | ast.Del):
                out |= _stored_root(sub)
    return out


def _params(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    every += [a for a in (args.vararg, args.kwarg) if a is not None]
    return {a.arg for a in every}


def _is_docstring(stmt: ast.stmt, parent_body: list[ast.stmt]) -> bool:
    return (
        bool(parent_body)
        and parent_body[0] is stmt
        and isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


_HEADER_PARTS: dict[type, tuple[str, ...]] = {
    ast.If: ("test",),
    ast.While: ("test",),
    ast.For: ("target", "iter"),
    ast.AsyncFor: ("target", "iter"),
    ast.With: ("items",),
    ast.AsyncWith: ("items",),
    ast.Try: (),
    ast.Match: ("subject",),
}


@lru_cache(maxsize=16)
def analyse_source(source: str, filename: str = "<patched file>") -> LineFacts:
    """Executable lines, scopes and def/use sets of every statement of ``source`` (cached: the
    pipeline asks for the same gold file at every stage; the facts are read, never changed)."""
    tree = ast.parse(source, filename=filename)
    executable: set[int] = set()
    scope: dict[int, str] = {}
    defs: dict[int, frozenset[str]] = {}
    uses: dict[int, frozenset[str]] = {}
    statement_of: dict[int, int] = {}

    def record(line: int, end: int, sc: str, d: set[str], u: set[str], exe: bool) -> None:
        scope[line] = sc
        defs[line] = frozenset(d | set(defs.get(line, ())))
        uses[line] = frozenset(u | set(uses.get(line, ())))
        for ln in range(line, end + 1):
            statement_of.setdefault(ln, line)
        if exe:
            executable.add(line)

    def visit_body(body: list[ast.stmt], sc: str) -> None:
        for stmt in body:
            visit(stmt, sc, _is_docstring(stmt, body))

    def visit(stmt: ast.stmt, sc: str, docstring: bool) -> None:
        line = stmt.lineno
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = f"{sc}.{stmt.name}" if sc != GLOBAL_SCOPE else stmt.name
            inner = f"def {inner}@{line}"
            header_end = stmt.body[0].lineno - 1 if stmt.body else stmt.end_lineno or line
            header_end = max(header_end, line)
            first = stmt.decorator_list[0].lineno if stmt.decorator_list else line
            fd = _params(stmt.args) | {stmt.name}
            fu = _loads([*stmt.decorator_list, *stmt.args.defaults, *stmt.args.kw_defaults])
            # The header belongs to the function's scope (its parameters are defined there);
            # only its first line is executable (multi-line signatures are not).
            record(line, header_end, inner, fd, fu, True)
            for ln in range(first, line):
                statement_of.setdefault(ln, line)
            visit_body(stmt.body, inner)
            return
        if isinstance(stmt, ast.ClassDef):
            inner = f"class {stmt.name}@{line}"
            header_end = max(stmt.body[0].lineno - 1 if stmt.body else line, line)
            cu = _loads([*stmt.bases, *(k.value for k in stmt.keywords), *stmt.decorator_list])
            record(line, header_end, inner, {stmt.name}, cu, True)
            visit_body(stmt.body, inner)
            return
        if type(stmt) in _HEADER_PARTS:
            parts: list[ast.AST] = []
            for name in _HEADER_PARTS[type(stmt)]:
                value = getattr(stmt, name)
                parts.extend(value if isinstance(value, list) else [value])
            d: set[str] = set()
            u: set[str] = set()
            for p in parts:
                if isinstance(p, ast.withitem):
                    u |= _loads([p.context_expr])
                    d |= _stores([p.optional_vars])
                elif isinstance(stmt, ast.For | ast.AsyncFor) and p is stmt.target:
                    d |= _stores([p])
                    u |= _loads([p])
                else:
                    u |= _loads([p])
            first_body = _first_child_line(stmt)
            header_end = max((first_body - 1) if first_body else line, line)
            record(line, header_end, sc, d, u, not isinstance(stmt, ast.Try))
            for child in _child_bodies(stmt):
                visit_body(child, sc)
            if isinstance(stmt, ast.Try):
                for handler in stmt.handlers:
                    hu = _loads([handler.type])
                    hd = {handler.name} if handler.name else set()
                    hend = max(handler.body[0].lineno - 1, handler.lineno)
                    record(handler.lineno, hend, sc, hd, hu, True)
                    visit_body(handler.body, sc)
            if isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    cline = case.pattern.lineno
                    cd = {n.id for n in ast.walk(case.pattern) if isinstance(n, ast.Name)}
                    cd |= {
                        n.name
                        for n in ast.walk(case.pattern)
                        if isinstance(n, ast.MatchAs | ast.MatchStar) and n.name
                    }
                    record(cline, cline, sc, cd, _loads([case.guard]), True)
                    visit_body(case.body, sc)
            return
        # simple statements
        end = stmt.end_lineno or line
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            d = {(a.asname or a.name).split(".")[0] for a in stmt.names}
            u = set()
        elif isinstance(stmt, ast.Global | ast.Nonlocal):
            d, u = set(), set()
        elif isinstance(stmt, ast.AugAssign):
            d = _stores([stmt.target])
            u = _loads([stmt.value]) | _names(stmt.target, ast.Store) | _loads([stmt.target])
        elif isinstance(stmt, ast.Assign):
            d = _stores(stmt.targets)
            u = _loads([stmt.value, *stmt.targets])
        elif isinstance(stmt, ast.AnnAssign):
            d = _stores([stmt.target]) if stmt.value is not None else set()
            u = _loads([stmt.value, stmt.target])
        elif isinstance(stmt, ast.Delete):
            d = _stores(stmt.targets)
            u = _loads(stmt.targets)
        else:
            d = _stores([stmt])
            u = _loads([stmt])
        record(line, end, sc, d, u, not docstring)

    visit_body(tree.body, GLOBAL_SCOPE)
    return LineFacts(frozenset(executable), scope, defs, uses, statement_of)


def _child_bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
    out = []
    for name in ("body", "orelse", "finalbody"):
        value = getattr(stmt, name, None)
        if value:
            out.append(value)
    return out


def _first_child_line(stmt: ast.stmt) -> int | None:
    body = getattr(stmt, "body", None)
    return body[0].lineno if body else None


def program_slice(
    facts: LineFacts, seeds: Iterable[int], k: int, *, within_scope: bool
) -> set[int]:
    """Forward + backward def-use slice from ``seeds`` (statement lines), ``k`` hops deep.

    ``within_scope``: a line joins only when it lies in the scope of the seed it was reached
    from (the paper's scoped slice); otherwise anywhere in the file.
    """
    result: set[int] = set()
    for seed in seeds:
        if seed not in facts.scope:
            continue
        region_scope = facts.scope[seed] if within_scope else None
        region = [
            ln for ln, sc in facts.scope.items() if region_scope is None or sc == region_scope
        ]
        reached = {seed}
        frontier = {seed}
        for _ in range(k):
            nxt: set[int] = set()
            for line in frontier:
                d, u = facts.defs.get(line, frozenset()), facts.uses.get(line, frozenset())
                for other in region:
                    if other in reached:
                        continue
                    if (d and facts.uses.get(other, frozenset()) & d) or (
                        u and facts.defs.get(other, frozenset()) & u
                    ):
                        nxt.add(other)
            if not nxt:
                break
            reached |= nxt
            frontier = nxt
        result |= reached
    return result


@dataclass(frozen=True)
class MustCover:
    """SWE-ABS's must-cover lines of one file of the gold patch (line numbers after the patch)."""

    path: str
    modified: tuple[int, ...]  # statement lines the patch adds or changes
    filtered_global: tuple[int, ...]  # modified lines dropped because they are in global scope
    slice_scope: tuple[int, ...]  # k = k_scope hops within each seed's scope
    slice_file: tuple[int, ...]  # k = k_file hops over the whole file
    target: tuple[int, ...] = field(default=())  # exe_slice_lines_scope: the coverage target


def must_cover(
    path: str,
    source: str,
    changed_lines: Iterable[int],
    *,
    k_scope: int = PAPER_K_SCOPE,
    k_file: int = PAPER_K_FILE,
) -> MustCover:
    """The slice of one patched file and its coverage target (see the module docstring)."""
    facts = analyse_source(source, path)
    statements = sorted(
        {s for ln in changed_lines if (s := facts.statement(ln)) is not None and s in facts.scope}
    )
    kept = [s for s in statements if facts.scope[s] != GLOBAL_SCOPE]
    dropped = [s for s in statements if facts.scope[s] == GLOBAL_SCOPE]
    scoped = program_slice(facts, kept, k_scope, within_scope=True)
    whole = program_slice(facts, kept, k_file, within_scope=False)
    return MustCover(
        path=path,
        modified=tuple(statements),
        filtered_global=tuple(dropped),
        slice_scope=tuple(sorted(scoped)),
        slice_file=tuple(sorted(whole)),
        target=tuple(sorted(scoped & facts.executable)),
    )


def coverage_rate(
    targets: Mapping[str, Iterable[int]], executed: Mapping[str, Iterable[int]]
) -> float:
    """SWE-ABS's ``coverage_rate``: mean over files (with a non-empty target) of hit / target
    lines; 1.0 when no file has a target (nothing to cover)."""
    rates = []
    for path, lines in targets.items():
        want = set(lines)
        if not want:
            continue
        rates.append(len(want & set(executed.get(path, ()))) / len(want))
    return sum(rates) / len(rates) if rates else 1.0
