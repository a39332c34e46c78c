"""The operator families of :mod:`.mutation` on Python's ``ast``: which nodes of a function are
mutated and how (mutmut 3.8's families and exclusions, see :mod:`.mutation`), and the text
splicing that keeps a mutated file's line numbers."""

from __future__ import annotations

import ast
import io
import math
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field

NEVER_FUNCTIONS = {"__getattribute__", "__setattr__", "__new__"}
_ENUM_HOOKS = {"__init__", "_generate_next_value_"}
_ENUM_BASES = {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"}
_NEVER_CALLS = {"len", "isinstance"}
_NO_COVER = re.compile(r"#\s*(pragma|PRAGMA)[:\s]?\s*(no|NO)\s*(cover|COVER)")
_NO_MUTATE = re.compile(r"#\s*pragma:\s*no mutate\b")


def _both_ways(*pairs: tuple[type, str, type, str]) -> dict[type, tuple[str, str]]:
    """A swap table stating each pair of operators once: (A, "a", B, "b") gives A → a/b and
    B → b/a (node type → its text and the text it is replaced by)."""
    table: dict[type, tuple[str, str]] = {}
    for a_type, a_text, b_type, b_text in pairs:
        table[a_type] = (a_text, b_text)
        table[b_type] = (b_text, a_text)
    return table


_BINOP_SWAP = {
    **_both_ways((ast.Add, "+", ast.Sub, "-"), (ast.Mult, "*", ast.Div, "/"),
                 (ast.LShift, "<<", ast.RShift, ">>"), (ast.BitAnd, "&", ast.BitOr, "|")),
    ast.FloorDiv: ("//", "/"), ast.Mod: ("%", "/"), ast.BitXor: ("^", "&"), ast.Pow: ("**", "*"),
}  # fmt: skip
_CMP_SWAP = _both_ways(
    (ast.Lt, "<", ast.LtE, "<="), (ast.Gt, ">", ast.GtE, ">="), (ast.Eq, "==", ast.NotEq, "!=")
)
_CMP_KEYWORD = _both_ways((ast.Is, "is", ast.IsNot, "is not"), (ast.In, "in", ast.NotIn, "not in"))
_STR_PAIRS = ("lower upper", "lstrip rstrip", "find rfind", "ljust rjust", "index rindex",
              "removeprefix removesuffix", "partition rpartition")  # fmt: skip
_STR_METHODS = {a: b for pair in _STR_PAIRS for a, b in (pair.split(), pair.split()[::-1])}
_SPLIT_METHODS = {"split": "rsplit", "rsplit": "split"}
_ESCAPE_RUNS = re.compile(
    r"\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|\\N\{[^}]+\}|(\\.)|((?<!\\)[^\\]+)"
)
_RAW_RUNS = re.compile(r"((?<!\\)[^\\]+)")

FAMILIES = (
    "number",
    "string",
    "name",
    "assignment",
    "augmented_assignment",
    "unary_removal",
    "dict_arguments",
    "arg_removal",
    "string_method",
    "lambda",
    "keyword",
    "operator",
    "match",
    "if_exp",
)


@dataclass
class _Edit:
    start: tuple[int, int]  # (line, char col)
    end: tuple[int, int]
    text: str
    family: str
    description: str
    node_line: int
    pad: bool = False  # pad with newlines inside the replacement's closing bracket
    order: tuple[int, ...] = field(default=())


class SourceText:
    """Byte-offset (ast) to character-offset conversion and token lookup for one file."""

    def __init__(self, source: str) -> None:
        self.text = source
        self.lines = source.splitlines(keepends=True)
        self.tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))

    def col(self, line: int, byte_col: int) -> int:
        raw = self.lines[line - 1].encode("utf-8")
        return len(raw[:byte_col].decode("utf-8", errors="replace"))

    def start(self, node: ast.AST) -> tuple[int, int]:
        return node.lineno, self.col(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> tuple[int, int]:
        line = node.end_lineno  # type: ignore[attr-defined]
        return line, self.col(line, node.end_col_offset)  # type: ignore[attr-defined]

    def segment(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        (l1, c1), (l2, c2) = start, end
        if l1 == l2:
            return self.lines[l1 - 1][c1:c2]
        parts = [self.lines[l1 - 1][c1:], *self.lines[l1 : l2 - 1], self.lines[l2 - 1][:c2]]
        return "".join(parts)

    def node_text(self, node: ast.AST) -> str:
        return self.segment(self.start(node), self.end(node))

    def tokens_between(
        self, start: tuple[int, int], end: tuple[int, int]
    ) -> list[tokenize.TokenInfo]:
        return [t for t in self.tokens if t.start >= start and t.end <= end]

    def splice(self, edit: _Edit) -> str | None:
        """The file with ``edit`` applied, or None when its line numbers cannot be kept."""
        (l1, c1), (l2, c2) = edit.start, edit.end
        text = edit.text
        lost = (l2 - l1) - text.count("\n")
        if lost > 0:
            if not (edit.pad and text.endswith(")")):
                return None
            text = text[:-1] + "\n" * lost + ")"
        elif lost < 0:
            return None
        before = "".join(self.lines[: l1 - 1]) + self.lines[l1 - 1][:c1]
        after = self.lines[l2 - 1][c2:] + "".join(self.lines[l2:])
        return before + text + after


def excluded_lines(src: SourceText, tree: ast.Module) -> tuple[set[int], set[int]]:
    """(lines marked no-mutate, lines of statements excluded from coverage)."""
    no_mutate = {i + 1 for i, line in enumerate(src.lines) if _NO_MUTATE.search(line)}
    marked = {i + 1 for i, line in enumerate(src.lines) if _NO_COVER.search(line)}
    excluded = set(marked)
    if marked:
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt) and node.lineno in marked:
                excluded.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return no_mutate, excluded


def units(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Module-level functions and methods of module-level classes, mutmut's mutation units."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            enum = any(
                (b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", None)) in _ENUM_BASES
                for b in node.bases
            )
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    if enum and item.name in _ENUM_HOOKS:
                        continue
                    yield f"{node.name}.{item.name}", item


def decorated_skip(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    if not func.decorator_list:
        return False
    if len(func.decorator_list) == 1:
        d = func.decorator_list[0]
        if isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod"):
            return False
    return True


class Collector:
    def __init__(self, src: SourceText, allowed: set[int] | None, skip_lines: set[int]) -> None:
        self.src = src
        self.allowed = allowed
        self.skip_lines = skip_lines
        self.edits: list[_Edit] = []
        self.in_signature: set[int] = set()  # ids of edits in default values

    def ok(self, node: ast.AST) -> bool:
        line = node.lineno  # type: ignore[attr-defined]
        if line in self.skip_lines:
            return False
        return self.allowed is None or line in self.allowed

    def add(self, node: ast.AST, start, end, text, family, description, pad=False) -> None:
        if not self.ok(node):
            return
        self.edits.append(
            _Edit(start, end, text, family, description, node.lineno, pad)  # type: ignore[attr-defined]
        )

    # -- walking -------------------------------------------------------------------------
    def function(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = func.args
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            if isinstance(default, ast.Name | ast.Constant):
                before = len(self.edits)
                self.visit(default, parent=None)
                self.in_signature.update(range(before, len(self.edits)))
        for stmt in func.body:
            self.visit(stmt, parent=func)

    def visit(self, node: ast.AST, parent: ast.AST | None) -> None:
        if isinstance(node, ast.expr_context | ast.operator | ast.cmpop | ast.boolop):
            return
        if isinstance(node, ast.JoinedStr):
            return  # f-string parts: positions are unreliable before 3.12
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in _NEVER_CALLS:
                return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            self.mutate(node, parent)
            if isinstance(node, ast.Lambda):
                self.visit(node.body, node)
                for d in node.args.defaults:
                    self.visit(d, node)
                return
            for d in [*node.args.defaults, *(x for x in node.args.kw_defaults if x is not None)]:
                if isinstance(d, ast.Name | ast.Constant):
                    self.visit(d, node)
            for stmt in node.body:
                self.visit(stmt, node)
            return
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                self.visit(stmt, node)
            return
        self.mutate(node, parent)
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns", "decorator_list", "type_comment"):
                continue
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item, node)
            elif isinstance(value, ast.AST):
                self.visit(value, node)

    def _to_none(
        self, node: ast.AST, value: ast.expr, if_none: str, family: str, what: str
    ) -> None:
        """``value`` -> None (-> ``if_none`` when it is None already), in parentheses when it
        spans lines."""
        new = if_none if isinstance(value, ast.Constant) and value.value is None else "None"
        text = f"({new})" if value.lineno != value.end_lineno else new
        start, end = self.src.start(value), self.src.end(value)
        self.add(node, start, end, text, family, f"{what} -> {new}", pad=True)

    # -- operators -----------------------------------------------------------------------
    def mutate(self, node: ast.AST, parent: ast.AST | None) -> None:
        s = self.src
        if isinstance(node, ast.Constant) and not isinstance(parent, ast.JoinedStr):
            self._constant(node)
        elif isinstance(node, ast.Name) and node.id == "deepcopy":
            self.add(node, s.start(node), s.end(node), "copy", "name", "deepcopy -> copy")
        elif isinstance(node, ast.Attribute) and node.attr == "deepcopy":
            end = s.end(node)
            self.add(
                node, (end[0], end[1] - len("deepcopy")), end, "copy", "name", "deepcopy -> copy"
            )
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            self._to_none(node, node.value, '""', "assignment", "assignment value")
        if isinstance(node, ast.AugAssign):
            tok = self._op_token(s.end(node.target), s.start(node.value))
            if tok is not None:
                self.add(
                    node, tok.start, tok.end, "=", "augmented_assignment", f"{tok.string} -> ="
                )
                swap = _BINOP_SWAP.get(type(node.op))
                if swap is not None:
                    self.add(
                        node,
                        tok.start,
                        tok.end,
                        swap[1] + "=",
                        "operator",
                        f"{tok.string} -> {swap[1]}=",
                    )
        if isinstance(node, ast.UnaryOp):
            toks = s.tokens_between(s.start(node), s.start(node.operand))
            op_toks = [t for t in toks if t.type in (tokenize.OP, tokenize.NAME)]
            if op_toks:
                tok = op_toks[0]
                if isinstance(node.op, ast.Not | ast.Invert):
                    self.add(
                        node,
                        tok.start,
                        s.start(node.operand),
                        "",
                        "unary_removal",
                        f"remove {tok.string}",
                    )
                elif isinstance(node.op, ast.UAdd | ast.USub):
                    new = "-" if isinstance(node.op, ast.UAdd) else "+"
                    self.add(
                        node, tok.start, tok.end, new, "operator", f"unary {tok.string} -> {new}"
                    )
        if isinstance(node, ast.BinOp):
            swap = _BINOP_SWAP.get(type(node.op))
            tok = self._op_token(s.end(node.left), s.start(node.right))
            if swap and tok is not None:
                self.add(node, tok.start, tok.end, swap[1], "operator", f"{swap[0]} -> {swap[1]}")
        if isinstance(node, ast.BoolOp):
            word, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            for a, b in zip(node.values, node.values[1:], strict=False):
                toks = s.tokens_between(s.end(a), s.start(b))
                for t in toks:
                    if t.type == tokenize.NAME and t.string == word:
                        self.add(node, t.start, t.end, new, "operator", f"{word} -> {new}")
                        break
        if isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=False):
                toks = [
                    t
                    for t in s.tokens_between(s.end(left), s.start(right))
                    if t.type in (tokenize.OP, tokenize.NAME) and t.string not in ("(", ")")
                ]
                if toks:
                    start, end = toks[0].start, toks[-1].end
                    if type(op) in _CMP_SWAP:
                        old, new = _CMP_SWAP[type(op)]
                        self.add(node, start, end, new, "operator", f"{old} -> {new}")
                    elif type(op) in _CMP_KEYWORD:
                        old, new = _CMP_KEYWORD[type(op)]
                        self.add(node, start, end, new, "keyword", f"{old} -> {new}")
                left = right
        if isinstance(node, ast.Break):
            self.add(node, s.start(node), s.end(node), "return", "keyword", "break -> return")
        if isinstance(node, ast.Continue):
            self.add(node, s.start(node), s.end(node), "break", "keyword", "continue -> break")
        if isinstance(node, ast.Lambda):
            self._to_none(node, node.body, "0", "lambda", "lambda body")
        if isinstance(node, ast.IfExp):
            test = s.node_text(node.test)
            for word, lit in (("and", "False"), ("or", "True")):
                self.add(
                    node,
                    s.start(node.test),
                    s.end(node.test),
                    f"({test}) {word} {lit}",
                    "if_exp",
                    f"condition -> ({word} {lit})",
                )
        if isinstance(node, ast.Match) and len(node.cases) > 1:
            for i, case in enumerate(node.cases):
                first = case.pattern.lineno
                last = case.body[-1].end_lineno or first
                # blank the case's lines (keeps line numbers; blank lines are legal in a block)
                self.add(
                    node,
                    (first, 0),
                    (last, len(s.lines[last - 1].rstrip("\r\n"))),
                    "\n" * (last - first),
                    "match",
                    f"remove case {i + 1}",
                )
        if isinstance(node, ast.Call):
            self._call(node)

    def _op_token(
        self, after: tuple[int, int], before: tuple[int, int]
    ) -> tokenize.TokenInfo | None:
        for t in self.src.tokens_between(after, before):
            if t.type == tokenize.OP and t.string not in ("(", ")"):
                return t
        return None

    def _constant(self, node: ast.Constant) -> None:
        s, value = self.src, node.value
        if isinstance(value, bool):
            new = "False" if value else "True"
            self.add(node, s.start(node), s.end(node), new, "name", f"{value} -> {new}")
            return
        if isinstance(value, int | float) and not isinstance(value, bool):
            bumped = value + 1
            if isinstance(bumped, float) and math.isinf(bumped):
                return
            self.add(
                node, s.start(node), s.end(node), repr(bumped), "number", f"{value!r} -> {bumped!r}"
            )
            return
        if isinstance(value, complex):
            bumped_c = value + 1j
            if math.isinf(bumped_c.imag) or math.isinf(bumped_c.real):
                return
            text = repr(bumped_c)
            self.add(node, s.start(node), s.end(node), text, "number", f"{value!r} -> {text}")
            return
        if isinstance(value, str | bytes):
            for tok in s.tokens_between(s.start(node), s.end(node)):
                if tok.type == tokenize.STRING:
                    for new in _string_variants(tok.string):
                        self.add(node, tok.start, tok.end, new, "string", f"{tok.string} -> {new}")

    def _call(self, node: ast.Call) -> None:
        s = self.src
        func = node.func
        if isinstance(func, ast.Attribute):
            end = s.end(func)
            start = (end[0], end[1] - len(func.attr))
            n_args = len(node.args) + len(node.keywords)
            if func.attr in _STR_METHODS:
                new = _STR_METHODS[func.attr]
                self.add(node, start, end, new, "string_method", f".{func.attr}() -> .{new}()")
            elif func.attr in _SPLIT_METHODS and (
                n_args == 2 or any(k.arg == "maxsplit" for k in node.keywords)
            ):
                new = _SPLIT_METHODS[func.attr]
                self.add(node, start, end, new, "string_method", f".{func.attr}() -> .{new}()")
        # arguments in source order
        items: list[tuple[tuple[int, int], str, ast.AST]] = []
        for a in node.args:
            items.append((s.start(a), "star" if isinstance(a, ast.Starred) else "pos", a))
        for k in node.keywords:
            items.append((s.start(k), "kw" if k.arg else "dstar", k))
        items.sort(key=lambda x: x[0])
        if isinstance(func, ast.Name) and func.id == "dict":
            for _, kind, item in items:
                if kind != "kw":
                    break
                assert isinstance(item, ast.keyword) and item.arg is not None
                st = s.start(item)
                self.add(
                    node,
                    st,
                    (st[0], st[1] + len(item.arg)),
                    item.arg + "XX",
                    "dict_arguments",
                    f"dict({item.arg}=) -> dict({item.arg}XX=)",
                )
        if not items:
            return
        # the callee as written (with its own brackets, e.g. "(lambda v: v)"): everything from
        # the call's start up to the bracket that opens the argument list
        opening = next(
            (t for t in s.tokens_between(s.end(func), s.end(node)) if t.string == "("), None
        )
        if opening is None:
            return
        func_text = s.segment(s.start(node), opening.start)

        def text_of(kind: str, item: ast.AST, value: str | None = None) -> str:
            if kind == "kw":
                assert isinstance(item, ast.keyword)
                return f"{item.arg}={value if value is not None else s.node_text(item.value)}"
            if value is not None:
                return value
            if isinstance(item, ast.GeneratorExp) and len(items) == 1:
                inner = s.node_text(item)
                return inner[1:-1] if inner.startswith("(") and inner.endswith(")") else inner
            return s.node_text(item)

        def call_with(parts: list[str], what: str) -> None:
            text = f"{func_text}({', '.join(parts)})"
            self.add(node, s.start(node), s.end(node), text, "arg_removal", what, pad=True)

        for i, (_, kind, item) in enumerate(items):
            if kind in ("star", "dstar"):
                continue
            value_node = item.value if isinstance(item, ast.keyword) else item
            if isinstance(value_node, ast.Constant) and value_node.value is None:
                continue
            parts = [
                text_of(k, it, "None" if j == i else None) for j, (_, k, it) in enumerate(items)
            ]
            call_with(parts, f"argument {i + 1} -> None")
        if len(items) > 1:
            for i in range(len(items)):
                parts = [text_of(k, it) for j, (_, k, it) in enumerate(items) if j != i]
                call_with(parts, f"remove argument {i + 1}")


def _string_variants(token: str) -> list[str]:
    quote_at = min(i for i in (token.find('"'), token.find("'")) if i != -1)
    prefix, body = token[:quote_at], token[quote_at:]
    if body.startswith('"""') or body.startswith("'''"):
        return []
    q, inner = body[0], body[1:-1]
    raw = "r" in prefix.lower()
    runs = _RAW_RUNS if raw else _ESCAPE_RUNS

    def case(fn):
        if raw:
            return runs.sub(lambda m: fn(m.group(1)), inner)
        return runs.sub(lambda m: fn(m.group(2)) if m.group(2) else m.group(0), inner)

    out = []
    for new_inner in ("XX" + inner + "XX", case(str.lower), case(str.upper)):
        new = f"{prefix}{q}{new_inner}{q}"
        if new != token and new not in out:
            out.append(new)
    return out
