"""The model under test as the solver: it resolves an instance from its problem statement.

SWE-ABS re-grades the patches of the leaderboard's agents; here the model under test produces
that patch itself, so its score can be measured under the original and the strengthened tests.
The agent sees the issue and the file the fix touches (SWE-bench's "oracle" file context,
trimmed to a window around the change for long files), replies with the fixed function(s) or a
diff, and after each attempt that cannot be used (malformed patch) or that fails the tests the
repository already has (its PASS_TO_PASS tests, which an agent could run itself) it is told why
and tries again, up to ``attempts`` times. The hidden FAIL_TO_PASS tests are never shown.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import methods.swe_abs._prompts as prompts
from methods.swe_abs._diff import check_patch, make_patch, parse_patch

TestFeedback = Callable[[str], Awaitable[str | None]]
"""patch → None when the repository's own tests pass, else a short failure report."""


@dataclass
class SolveAttempt:
    reply: str
    patch: str | None
    failure: str | None  # format / malformed reason / tests
    detail: str = ""


@dataclass
class SolveResult:
    patch: str | None
    attempts: list[SolveAttempt] = field(default_factory=list)

    @property
    def format_failure(self) -> bool:
        """No attempt produced anything shaped like a fix (the model missed the format)."""
        return all(a.failure == "format" for a in self.attempts)


def context_excerpt(source: str, lines: list[int], window: int = 60) -> tuple[str, int, int]:
    """Numbered excerpt of ``source`` around ``lines`` (the whole file when it is short)."""
    total = len(source.splitlines())
    if total <= 2 * window or not lines:
        return prompts.numbered(source), 1, total
    lo, hi = max(1, min(lines) - window), min(total, max(lines) + window)
    return prompts.numbered(source, lo, hi), lo, hi


def patch_from_reply(
    files: dict[str, str], path: str, reply: str, near_line: int | None = None
) -> tuple[str | None, str, str]:
    """(patch or None, failure kind, detail) from a solver reply: a diff, else a function block."""
    diff = prompts.extract_diff(reply)
    if diff is not None:
        _, problem = check_patch(files, diff)
        if problem is None:
            return diff, "", ""
        # a broken diff: maybe a function block is there too
        code = prompts.extract_python(reply)
        if code is None:
            return None, problem.reason, problem.message
    code = prompts.extract_python(reply)
    if code is None:
        blocks = [b for lang, b in prompts.code_blocks(reply) if lang in ("python", "py", "")]
        if blocks:  # code in the right shape that does not compile: a broken patch
            try:
                compile(max(blocks, key=len), "<reply>", "exec")
            except SyntaxError as exc:
                return (
                    None,
                    "syntax_error",
                    f"the reply's code does not compile: {exc.msg} (line {exc.lineno})",
                )
        return None, "format", "no ```python block with the fixed function and no diff"
    new_source, note = prompts.replace_functions(files[path], code, near_line)
    if new_source is None:
        return None, "format", note
    patch = make_patch(path, files[path], new_source)
    if not patch:
        return None, "empty", "the reply repeats the current code"
    _, problem = check_patch(files, patch)
    if problem is not None:
        return None, problem.reason, problem.message
    return patch, "", ""


async def solve_instance(
    generate: Callable[[str, str], Awaitable[str]],
    files: dict[str, str],
    gold_patch: str,
    problem_statement: str,
    *,
    attempts: int = 1,
    test_feedback: TestFeedback | None = None,
) -> SolveResult:
    """Ask the model for a fix; the file shown is the one the gold patch edits (oracle context)."""
    fps = [fp for fp in parse_patch(gold_patch) if fp.path.endswith(".py")]
    path = fps[0].path if fps else next(iter(files))
    changed = fps[0].changed_lines() if fps else []
    excerpt, _, _ = context_excerpt(files[path], changed)
    result = SolveResult(patch=None)
    feedback: str | None = None
    for _ in range(max(attempts, 1)):
        prompt = prompts.solver_prompt(problem_statement, path, excerpt, feedback)
        reply = await generate(prompts.SOLVER_SYSTEM, prompt)
        patch, failure, detail = patch_from_reply(
            files, path, reply, changed[0] if changed else None
        )
        attempt = SolveAttempt(
            reply=reply[:4000], patch=patch, failure=failure or None, detail=detail
        )
        result.attempts.append(attempt)
        if patch is None:
            feedback = f"{failure}: {detail}"
            continue
        result.patch = patch
        if test_feedback is None:
            break
        report = await test_feedback(patch)
        if report is None:
            break
        attempt.failure, attempt.detail = "tests", report[:1500]
        feedback = f"The repository's tests fail with your patch:\n{report[:1500]}"
    return result
