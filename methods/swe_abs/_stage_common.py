"""Helpers shared by the pipeline's stages: which files and lines a patch touches, the lines a
module runs on import, coverage and failure bookkeeping, generated test names and bodies."""

from __future__ import annotations

import ast
from typing import Any

from methods.swe_abs._diff import parse_patch
from methods.swe_abs._instance import Instance
from methods.swe_abs._mutation import Mutant
from methods.swe_abs._outcome import InstanceOutcome, MutantRecord, NewTest, PipelineConfig, Roles
from methods.swe_abs._slicing import MustCover, analyse_source, coverage_rate
from methods.swe_abs._workspace import Workspace


def source_files(patch: str) -> list[str]:
    return [
        fp.path
        for fp in parse_patch(patch)
        if fp.path.endswith(".py") and not fp.is_deleted and "test" not in fp.path.split("/")[-1]
    ]


def mutate_lines(ws: Workspace, path: str, scope: str, slice_: MustCover) -> set[int]:
    fps = [fp for fp in parse_patch(ws.instance.patch) if fp.path == path]
    if scope == "slice":
        return set(slice_.slice_scope)
    lines: set[int] = set()
    facts = analyse_source(ws.gold_texts[path], path)
    for fp in fps:
        for h in fp.hunks:
            if scope == "hunks":
                span = range(h.target_start, h.target_start + h.target_length)
            else:
                span = range(0)
            lines.update(span)
            for ln in (*h.added_lines(), *h.deletion_anchors()):
                lines.add(ln)
    # a node is mutated when it starts on an allowed line: allow every line of the statements
    # the hunk touches (a multi-line statement starts before the hunk's first changed line)
    stmts = {facts.statement(ln) for ln in lines} - {None}
    for ln, st in facts.statement_of.items():
        if st in stmts:
            lines.add(ln)
    return lines


def static_executed(source: str) -> set[int]:
    """Lines executed when the module is imported (def/class headers, module-level code): the
    paper's trace run counts them; per-test coverage contexts do not see them."""
    facts = analyse_source(source)
    return {
        ln
        for ln in facts.executable
        if facts.scope[ln] == "<module>" or facts.scope[ln].endswith(f"@{ln}")
    }


def covered_lines(
    coverage: dict[str, dict[str, list[int]]] | None, tests: set[str] | None
) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for ctx, files in (coverage or {}).items():
        if tests is not None and ctx not in tests:
            continue
        for path, lines in files.items():
            out.setdefault(path, set()).update(lines)
    return out


def failed_tests(status: dict[str, str], tests: list[str]) -> list[str]:
    return [t for t in tests if status.get(t) in ("FAILED", "ERROR") or t not in status]


def imports_of(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if line.startswith(("import ", "from ")))[
        :2000
    ]


class Budget:
    def __init__(self) -> None:
        self.calls = 0

    def event(self, out: InstanceOutcome, role: str, phase: str, ok: bool, note: str) -> None:
        self.calls += 1
        out.model_events.append({"role": role, "phase": phase, "ok": ok, "note": note[:300]})


def body_key(code: str) -> str:
    """A test's body as an AST dump: the same checks under another name or layout match."""
    try:
        func = ast.parse(code).body[0]
    except (SyntaxError, IndexError):
        return code
    body = getattr(func, "body", [func])
    return ast.dump(ast.Module(body=body, type_ignores=[]))


def generated_test_name(prefix: str, mid: str) -> str:
    safe = "".join(ch if ch.isalnum() else "_" for ch in mid)
    return f"test_swe_abs_{prefix}_{safe}"


def enclosing_function(source: str, line: int) -> str:
    import ast

    tree = ast.parse(source)
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                if best is None or node.lineno > best.lineno:
                    best = node
    if best is None:
        return ""
    lines = source.splitlines()
    return "\n".join(lines[best.lineno - 1 : best.end_lineno])


class StageBase:
    """The state every stage reads and writes (set by ``Strengthener``), and what they share:
    the mutant records, the slice coverage rate, a candidate's variant, the generated tests."""

    ws: Workspace
    inst: Instance
    cfg: PipelineConfig
    roles: Roles
    out: InstanceOutcome
    test_files: list[str]
    sources: list[str]
    mutants: dict[str, Mutant]
    mutant_sources: dict[str, dict[str, Any]]  # id -> variant
    budget: Budget
    flaky_excluded: set[str]
    new_dir: str
    gold_status: dict[str, str]
    gold_coverage: dict[str, dict[str, list[int]]] | None
    run_timeout: float
    targets: dict[str, list[int]]
    cand_changes: dict[int, dict[str, str | None] | None]
    cand_results: dict[str, Any]
    diff_results: dict[str, Any]
    removed_ids: list[str]

    def _record(self, mid: str) -> MutantRecord:
        return next(r for r in self.out.mutants if r.id == mid)

    def coverage_of(
        self, coverage: dict[str, dict[str, list[int]]] | None, tests: set[str] | None
    ) -> float:
        executed = covered_lines(coverage, tests)
        for path in self.targets:
            executed.setdefault(path, set()).update(static_executed(self.ws.gold_texts[path]))
        return coverage_rate(self.targets, executed)

    def _variant_of(self, changed: dict[str, str | None]) -> dict[str, Any]:
        files = {p: t for p, t in changed.items() if p.endswith(".py") and t is not None}
        files = {p: t for p, t in files.items() if p not in self.test_files}
        # Files the candidate leaves unchanged relative to gold still have to be reset to base.
        for path in self.ws.gold_changes:
            if path not in files and path.endswith(".py"):
                files[path] = self.ws.texts.get(path, "")
        return {"files": files}

    def _add_test(self, origin: str, code: str, target: str) -> NewTest | None:
        """Record a generated test; a test whose body (normalised: names and layout aside)
        is already recorded is dropped and counted, before any counting or writing."""
        key = body_key(code)
        if any(body_key(t.code) == key for t in self.out.new_tests if t.code):
            self.out.duplicate_tests += 1
            return None
        module = f"{self.new_dir}/test_swe_abs_{'model' if origin.startswith('model') else 'generated'}.py".lstrip(
            "/"
        )
        name = code.split("def ", 1)[1].split("(", 1)[0] if "def " in code else "?"
        test = NewTest(
            name=name,
            origin=origin,  # type: ignore[arg-type]
            module=module,
            nodeid=f"{module}::{name}",
            code=code,
            target=target,
        )
        self.out.new_tests.append(test)
        return test
