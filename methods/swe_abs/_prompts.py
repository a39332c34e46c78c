"""Prompts for the model roles (solver, test writer, mutant writer, equivalence judge) and the
parsers of their replies. A reply that cannot be used is reported with a reason, never raised."""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from methods.common import AnswerFormat

_BLOCK = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


def code_blocks(text: str) -> list[tuple[str, str]]:
    """Fenced blocks as (language, body); an unterminated last block counts."""
    return [(m.group(1).lower(), m.group(2)) for m in _BLOCK.finditer(text or "")]


def extract_python(text: str) -> str | None:
    """The longest ```python (or unlabelled) block that parses; else the whole reply if it
    parses and defines something."""
    blocks = [b for lang, b in code_blocks(text) if lang in ("python", "py", "")]
    for body in sorted(blocks, key=len, reverse=True):
        try:
            ast.parse(body)
            return body
        except SyntaxError:
            continue
    stripped = (text or "").strip()
    if stripped and ("def " in stripped or "import " in stripped):
        try:
            ast.parse(stripped)
            return stripped
        except SyntaxError:
            return None
    return None


def extract_diff(text: str) -> str | None:
    """A unified diff in the reply (a ```diff block or raw ---/+++ lines)."""
    for lang, body in code_blocks(text):
        if lang in ("diff", "patch") or ("--- " in body and "+++ " in body and "@@" in body):
            return body if body.endswith("\n") else body + "\n"
    if "--- " in (text or "") and "+++ " in text and "@@" in text:
        start = text.index("--- ")
        return text[start:] if text.endswith("\n") else text[start:] + "\n"
    return None


def _defs(
    tree: ast.Module, near_line: int | None = None
) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def near(node: ast.AST) -> bool:
        return near_line is not None and node.lineno <= near_line <= (node.end_lineno or 0)  # type: ignore[attr-defined]

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    # a bare method name goes to the first class defining it, or to the one
                    # holding ``near_line`` (where the change is)
                    if item.name not in out or near(item):
                        out[item.name] = item
                    out[f"{node.name}.{item.name}"] = item
    return out


def replace_functions(
    source: str, code: str, near_line: int | None = None
) -> tuple[str | None, str]:
    """Replace each function of ``source`` that ``code`` redefines (matched by name, methods by
    ``Class.name`` or bare name, the one around ``near_line`` first) with the new definition,
    re-indented. Returns (new source or None, a note: what was replaced or why nothing was)."""
    try:
        new_tree = ast.parse(textwrap.dedent(code))
    except SyntaxError as exc:
        return None, f"the code does not parse: {exc.msg} (line {exc.lineno})"
    old_tree = ast.parse(source)
    old_defs = _defs(old_tree, near_line)
    new_code = textwrap.dedent(code)
    new_lines = new_code.splitlines(keepends=True)
    replacements: list[tuple[int, int, str]] = []
    names = []
    candidates: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for node in new_tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            candidates.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    candidates.append((f"{node.name}.{item.name}", item))
    old_lines = source.splitlines(keepends=True)
    for name, node in candidates:
        target = old_defs.get(name) or old_defs.get(name.split(".")[-1])
        if target is None:
            continue
        first_new = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        chunk = new_lines[first_new - 1 : node.end_lineno]
        chunk_text = textwrap.dedent("".join(chunk))
        first_old = target.decorator_list[0].lineno if target.decorator_list else target.lineno
        indent = re.match(r"[ \t]*", old_lines[first_old - 1]).group(0)  # type: ignore[union-attr]
        body = "".join(indent + ln if ln.strip() else ln for ln in chunk_text.splitlines(True))
        if not body.endswith("\n"):
            body += "\n"
        replacements.append((first_old, target.end_lineno or target.lineno, body))
        names.append(name)
    if not replacements:
        return None, "the code defines no function of the file"
    out = list(old_lines)
    for first, last, body in sorted(replacements, reverse=True):
        out[first - 1 : last] = [body]
    return "".join(out), f"replaced {', '.join(names)}"


# ---------------------------------------------------------------------------------------- solver
SOLVER_SYSTEM = (
    "You are a software engineer fixing an issue in a Python repository. You see the issue and "
    "the file that needs the change. Reply with the complete fixed function (or functions) in "
    "one ```python code block, or with a unified diff in a ```diff block. Change only what the "
    "issue needs."
)


def solver_prompt(problem: str, path: str, excerpt: str, feedback: str | None = None) -> str:
    parts = [
        f"Issue:\n{problem.strip()}\n",
        f"File {path} (excerpt, with line numbers):\n```python\n{excerpt}\n```",
    ]
    if feedback:
        parts.append(f"Your previous attempt did not work:\n{feedback.strip()}\nTry again.")
    parts.append("Reply with the fixed function(s) in one ```python block.")
    return "\n\n".join(parts)


def numbered(source: str, first: int = 1, last: int | None = None) -> str:
    lines = source.splitlines()
    last = len(lines) if last is None else min(last, len(lines))
    return "\n".join(f"{i:5d}  {lines[i - 1]}" for i in range(max(first, 1), last + 1))


# ----------------------------------------------------------------------------------- test writer
TESTER_SYSTEM = (
    "You write pytest tests for a Python repository. Reply with one ```python code block that "
    "is a complete test module: its imports first, then test functions named test_*. Tests must "
    "be deterministic (no randomness, no network, no sleeping)."
)


def coverage_prompt(
    problem: str, gold_patch: str, path: str, uncovered: list[tuple[int, str]], imports: str
) -> str:
    lines = "\n".join(f"{n:5d}  {code}" for n, code in uncovered)
    return (
        f"Issue that was fixed:\n{problem.strip()}\n\nThe fix:\n```diff\n{gold_patch.strip()}\n```\n\n"
        f"These lines of {path} are not executed by any test yet:\n{lines}\n\n"
        f"The existing tests import:\n```python\n{imports.strip()}\n```\n\n"
        "Write new tests that pass with the fix and execute those lines."
    )


def mutant_test_prompt(problem: str, gold_patch: str, mutant_patch: str, imports: str) -> str:
    return (
        f"Issue that was fixed:\n{problem.strip()}\n\nThe fix:\n```diff\n{gold_patch.strip()}\n```\n\n"
        "A wrong variant of the fixed code (changes relative to the fixed code):\n"
        f"```diff\n{mutant_patch.strip()}\n```\n\n"
        f"The existing tests import:\n```python\n{imports.strip()}\n```\n\n"
        "Write a test that passes on the fixed code and fails on this wrong variant."
    )


def retry_feedback(kind: str, detail: str) -> str:
    heads = {
        "gold": "Your tests fail on the fixed code:",
        "coverage": "Your tests pass but these lines are still not executed:",
        "mutant": "Your tests pass on the fixed code but also pass on the wrong variant.",
        "format": "Your reply had no usable ```python block:",
    }
    return f"{heads.get(kind, kind)}\n{detail.strip()}\nWrite the test module again."


# --------------------------------------------------------------------------------- mutant writer
MUTATOR_SYSTEM = (
    "You write mutants: plausible but wrong versions of fixed code, used to test a test suite. "
    "A mutant must change behaviour relative to the fix, be related to the issue, and still look "
    "like a fix. No comment-only changes, refactors, dead code or re-implementations of the fix."
)


def mutator_prompt(problem: str, gold_patch: str, path: str, function_source: str) -> str:
    return (
        f"Issue:\n{problem.strip()}\n\nThe fix:\n```diff\n{gold_patch.strip()}\n```\n\n"
        f"The fixed function in {path}:\n```python\n{function_source.rstrip()}\n```\n\n"
        "Reply with one ```python block: the complete function with one subtle wrong change."
    )


JUDGE_SYSTEM = (
    "You judge whether a mutant of fixed code is a valid test of a test suite. Answer exactly in "
    "two lines:\nRelevance: Yes or No\nMutation Validity: Yes or No\n"
    "Relevance: the change concerns the issue's behaviour. Mutation Validity: the change alters "
    "behaviour (it is not equivalent to the fix)."
)


def judge_prompt(problem: str, gold_patch: str, mutant_patch: str) -> str:
    return (
        f"Issue:\n{problem.strip()}\n\nThe fix:\n```diff\n{gold_patch.strip()}\n```\n\n"
        f"The mutant (changes relative to the fixed code):\n```diff\n{mutant_patch.strip()}\n```"
    )


@dataclass(frozen=True)
class JudgeVerdict:
    relevant: bool | None
    valid: bool | None

    @property
    def parsed(self) -> bool:
        return self.relevant is not None and self.valid is not None


_YES_NO = r"\**\s*:?\s*\**\s*(yes|no)\b"

# The judge's reply for constrained decoding (declared beside ``parse_judge``, which reads every
# reply in it): exactly the two lines the system prompt asks for.
JUDGE_FORMAT = AnswerFormat(
    "swe_abs_judge", regex=r"Relevance: (Yes|No)\nMutation Validity: (Yes|No)"
)


def parse_judge(text: str) -> JudgeVerdict:
    """``Relevance: Yes/No`` and ``Mutation Validity: Yes/No`` (case-insensitive; None if absent)."""
    rel = re.search(r"relevance" + _YES_NO, text or "", re.IGNORECASE)
    val = re.search(r"(?:mutation\s+)?validity" + _YES_NO, text or "", re.IGNORECASE)
    return JudgeVerdict(
        relevant=None if rel is None else rel.group(1).lower() == "yes",
        valid=None if val is None else val.group(1).lower() == "yes",
    )
