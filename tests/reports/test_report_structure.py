"""The reports package's shape (issue 28, item 4): one job per module, no file over 600 lines,
no import circle between its modules (`if TYPE_CHECKING:` imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

import reports

PACKAGE = Path(reports.__file__).parent
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    return {p.stem: p for p in sorted(PACKAGE.glob("*.py"))}


def _imports(path: Path) -> set[str]:
    """The package's own modules `path` imports, at any depth."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                found.add(node.module.split(".")[0])
            elif node.level == 1:
                found.update(a.name for a in node.names)
            elif node.module and node.module.startswith("reports."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("reports."))
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_module_over_600_lines():
    long = {n: len(p.read_text().splitlines()) for n, p in _modules().items()}
    assert {n: k for n, k in long.items() if k > MAX_LINES} == {}


def test_no_import_circle_between_the_modules():
    modules = _modules()
    graph = {name: _imports(path) & set(modules) - {"__init__"} for name, path in modules.items()}
    graph.pop("__init__")  # the lazy re-exports import every module on first use
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_sees_a_circle():
    """Control: the check is not blind."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_one_writer_per_format():
    """HTML, Markdown and CSV are written by their own modules."""
    for name in ("_html", "_markdown", "_csv"):
        assert name in _modules(), name
    assert "_render" not in _modules()
