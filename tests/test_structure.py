"""The project's size rules (issue 28): no source file over 600 lines in the packages, and every
`@task` function's body (its docstring aside) at most 40 lines: a task is a thin inspect layer
over its config, data and method."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "methods", "tasks", "scorers", "reports", "sandboxes")
MAX_FILE_LINES = 600
MAX_TASK_BODY_LINES = 40


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _is_task_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return (isinstance(target, ast.Name) and target.id == "task") or (
        isinstance(target, ast.Attribute) and target.attr == "task"
    )


def task_body_lengths(source: str) -> dict[str, int]:
    """{name: lines of its body, docstring excluded} of every `@task` function in `source`."""
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if not any(_is_task_decorator(d) for d in node.decorator_list):
            continue
        body = node.body
        if ast.get_docstring(node) is not None:
            body = body[1:]
        end = node.end_lineno or node.lineno
        found[node.name] = end - body[0].lineno + 1 if body else 0
    return found


def test_no_source_file_over_600_lines() -> None:
    sources = _sources()
    assert len(sources) > 100  # the walk sees the packages
    long = {str(p.relative_to(ROOT)): n for p in sources if (n := len(p.read_text().splitlines()))}
    assert {p: n for p, n in long.items() if n > MAX_FILE_LINES} == {}


def test_every_task_body_is_at_most_40_lines() -> None:
    bodies = {
        f"{p.relative_to(ROOT)}:{name}": n
        for p in sorted((ROOT / "tasks").rglob("*.py"))
        for name, n in task_body_lengths(p.read_text()).items()
    }
    assert len(bodies) >= 8  # every task is seen
    assert {k: n for k, n in bodies.items() if n > MAX_TASK_BODY_LINES} == {}


def test_the_body_count_sees_a_long_task() -> None:
    """Control: the counter is not blind (docstring excluded, decorator with or without call)."""
    body = "\n".join(f"    x{i} = {i}" for i in range(41))
    source = f'@task\ndef a():\n    """Doc.\n\n    More."""\n{body}\n\n@inspect_ai.task(name="b")\ndef b():\n    return 1\n'
    assert task_body_lengths(source) == {"a": 41, "b": 1}
