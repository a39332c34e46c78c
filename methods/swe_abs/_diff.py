"""Unified diffs: parse, apply to an in-memory tree, make, and check a candidate patch.

SWE-ABS parses the gold patch with ``unidiff`` to find the added lines (step 0 of its pipeline);
here the same information comes from :func:`parse_patch` (``FilePatch.added_lines`` are line
numbers in the patched file). :func:`apply_patch` behaves like ``git apply``: every hunk must match
its context exactly, at its stated line or shifted (the nearest match wins), never fuzzily.

A candidate patch that cannot be used is a *scored* failure with a reason, never an exception
that stops the run: :func:`check_patch` returns a :class:`PatchProblem` (``empty``, ``malformed``,
``outside_repo``, ``does_not_apply``, ``syntax_error``) or the patched files.
"""

from __future__ import annotations

import ast
import difflib
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

PatchFailure = Literal["empty", "malformed", "outside_repo", "does_not_apply", "syntax_error"]

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


class PatchError(ValueError):
    """A patch that cannot be parsed or applied; ``reason`` is one of :data:`PatchFailure`."""

    def __init__(self, reason: PatchFailure, message: str) -> None:
        super().__init__(message)
        self.reason: PatchFailure = reason


@dataclass(frozen=True)
class HunkLine:
    kind: Literal[" ", "+", "-"]
    text: str  # without the newline
    no_newline: bool = False  # followed by "\ No newline at end of file"


@dataclass(frozen=True)
class Hunk:
    source_start: int
    source_length: int
    target_start: int
    target_length: int
    lines: tuple[HunkLine, ...]
    section: str = ""

    def _side(self, kind: Literal["+", "-"]) -> list[HunkLine]:
        """The hunk's lines on one side of the diff: context and `kind` lines ("-": the
        original file, "+": the patched file), in order."""
        return [line for line in self.lines if line.kind in (" ", kind)]

    def source_lines(self) -> list[str]:
        return [line.text for line in self._side("-")]

    def target_lines(self) -> list[str]:
        return [line.text for line in self._side("+")]

    def added_lines(self) -> list[int]:
        """Line numbers (1-based, in the patched file) of the lines this hunk adds."""
        side = self._side("+")
        return [self.target_start + i for i, line in enumerate(side) if line.kind == "+"]

    def removed_lines(self) -> list[int]:
        """Line numbers (1-based, in the original file) of the lines this hunk removes."""
        side = self._side("-")
        return [self.source_start + i for i, line in enumerate(side) if line.kind == "-"]

    def deletion_anchors(self) -> list[int]:
        """For removals without an added line at that place: the patched-file line that follows
        the removal (so a pure deletion still marks where the change is)."""
        out, t, pending = [], self.target_start, False
        for line in self.lines:
            if line.kind == "-":
                pending = True
            elif line.kind == "+":
                pending = False
                t += 1
            else:
                if pending:
                    out.append(t)
                pending = False
                t += 1
        if pending:
            out.append(max(t - 1, 1))
        return out


@dataclass(frozen=True)
class FilePatch:
    source_path: str | None  # None: a new file (/dev/null)
    target_path: str | None  # None: a deleted file
    hunks: tuple[Hunk, ...] = field(default_factory=tuple)

    @property
    def path(self) -> str:
        return self.target_path if self.target_path is not None else self.source_path or ""

    @property
    def is_new(self) -> bool:
        return self.source_path is None

    @property
    def is_deleted(self) -> bool:
        return self.target_path is None

    def added_lines(self) -> list[int]:
        return [n for h in self.hunks for n in h.added_lines()]

    def changed_lines(self) -> list[int]:
        """Patched-file lines that mark the change: added lines and pure-deletion anchors."""
        return sorted({n for h in self.hunks for n in (*h.added_lines(), *h.deletion_anchors())})


def _strip_prefix(raw: str) -> str | None:
    path = raw.split("\t", 1)[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith('"') and path.endswith('"'):
        path = path[1:-1]
    for prefix in ("a/", "b/"):
        if path.startswith(prefix):
            return path[len(prefix) :]
    return path


def parse_patch(text: str) -> list[FilePatch]:
    """Parse a unified diff (git or plain) into file patches.

    Raises PatchError("empty") when the text holds no file change and PatchError("malformed")
    naming the line for a broken header or hunk.
    """
    if not text or not text.strip():
        raise PatchError("empty", "the patch is empty")
    lines = text.splitlines()
    patches: list[FilePatch] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if (
            not line.startswith("--- ")
            or i + 1 >= len(lines)
            or not lines[i + 1].startswith("+++ ")
        ):
            i += 1
            continue
        source, target = _strip_prefix(line[4:]), _strip_prefix(lines[i + 1][4:])
        i += 2
        hunks: list[Hunk] = []
        while i < len(lines) and lines[i].startswith("@@"):
            m = _HUNK_RE.match(lines[i])
            if not m:
                raise PatchError("malformed", f"line {i + 1}: bad hunk header {lines[i]!r}")
            s_start = int(m.group(1))
            s_len = int(m.group(2)) if m.group(2) is not None else 1
            t_start = int(m.group(3))
            t_len = int(m.group(4)) if m.group(4) is not None else 1
            i += 1
            body: list[HunkLine] = []
            seen_s = seen_t = 0
            while i < len(lines) and (seen_s < s_len or seen_t < t_len):
                raw = lines[i]
                if raw.startswith("\\"):
                    if body:
                        body[-1] = HunkLine(body[-1].kind, body[-1].text, True)
                    i += 1
                    continue
                kind = raw[:1] if raw else " "
                if kind not in (" ", "+", "-"):
                    raise PatchError(
                        "malformed",
                        f"line {i + 1}: hunk of {target or source} ends early "
                        f"(expected {s_len} old / {t_len} new lines, got {seen_s} / {seen_t})",
                    )
                body.append(HunkLine(kind, raw[1:]))  # type: ignore[arg-type]
                if kind in (" ", "-"):
                    seen_s += 1
                if kind in (" ", "+"):
                    seen_t += 1
                i += 1
            if seen_s != s_len or seen_t != t_len:
                raise PatchError(
                    "malformed",
                    f"hunk of {target or source} at line {s_start} is truncated "
                    f"(expected {s_len} old / {t_len} new lines, got {seen_s} / {seen_t})",
                )
            if i < len(lines) and lines[i].startswith("\\"):
                body[-1] = HunkLine(body[-1].kind, body[-1].text, True)
                i += 1
            section = m.group(5).strip()
            hunks.append(Hunk(s_start, s_len, t_start, t_len, tuple(body), section))
        if not hunks and not (source is None or target is None):
            raise PatchError("malformed", f"file header for {target or source} has no hunk")
        patches.append(FilePatch(source, target, tuple(hunks)))
    if not patches:
        raise PatchError("empty", "the text holds no unified-diff file header (--- / +++)")
    return patches


def _inside_repo(path: str) -> bool:
    if not path or path.startswith("/") or "\\" in path or "\x00" in path:
        return False
    norm = posixpath.normpath(path)
    return not (
        norm == ".." or norm.startswith("../") or norm.startswith(".git/") or norm == ".git"
    )


def _find(haystack: list[str], needle: list[str], expected: int) -> int | None:
    """Index where ``needle`` matches ``haystack`` exactly, nearest to ``expected``."""
    if not needle:
        return min(max(expected, 0), len(haystack))
    n, limit = len(needle), len(haystack) - len(needle)
    for delta in range(0, max(limit, 0) + abs(expected) + 2):
        for pos in (expected - delta, expected + delta) if delta else (expected,):
            if 0 <= pos <= limit and haystack[pos : pos + n] == needle:
                return pos
    return None


def _apply_file(original: str | None, fp: FilePatch) -> str | None:
    lines = (original or "").splitlines()
    final_newline = original is None or original == "" or original.endswith("\n")
    offset = 0
    last_end = 0
    for hunk in fp.hunks:
        old = hunk.source_lines()
        # "-0,0" (or an insertion hunk) inserts after line `source_start`.
        expected = (hunk.source_start - 1 if old else hunk.source_start) + offset
        pos = _find(lines, old, max(expected, 0))
        if pos is None or pos < last_end:
            raise PatchError(
                "does_not_apply",
                f"{fp.path}: hunk @@ -{hunk.source_start},{hunk.source_length} does not match "
                "the file (context or removed lines differ)",
            )
        new = hunk.target_lines()
        at_end = pos + len(old) == len(lines)
        lines[pos : pos + len(old)] = new
        offset += len(new) - len(old) + (pos - max(expected, 0))
        last_end = pos + len(new)
        targets = [line for line in hunk.lines if line.kind in (" ", "+")]
        if at_end and targets:
            final_newline = not targets[-1].no_newline
    if fp.is_deleted:
        return None
    if not lines:
        return ""
    return "\n".join(lines) + ("\n" if final_newline else "")


def apply_patch(files: Mapping[str, str], patch: str | list[FilePatch]) -> dict[str, str | None]:
    """Apply ``patch`` to ``files`` ({repo path: text}); returns {path: new text, None if deleted}
    for the files it touches. Raises PatchError (outside_repo, does_not_apply, ...)."""
    fps = parse_patch(patch) if isinstance(patch, str) else patch
    out: dict[str, str | None] = {}
    for fp in fps:
        for p in (fp.source_path, fp.target_path):
            if p is not None and not _inside_repo(p):
                raise PatchError("outside_repo", f"the patch touches {p!r}, outside the repository")
        path = fp.path
        current: str | None
        if fp.is_new:
            if path in files or path in out and out[path] is not None:
                raise PatchError("does_not_apply", f"{path}: the patch creates a file that exists")
            current = None
        else:
            src = fp.source_path or path
            current = out[src] if src in out else files.get(src)
            if current is None:
                raise PatchError("does_not_apply", f"{src}: no such file in the repository")
        out[path] = _apply_file(current, fp)
        if fp.source_path and fp.target_path and fp.source_path != fp.target_path:
            out[fp.source_path] = None
    return out


def make_patch(path: str, old: str, new: str, *, context: int = 3) -> str:
    """A git-style unified diff of one file (empty string when nothing changed)."""
    if old == new:
        return ""
    diff = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        n=context,
    )
    out = []
    for line in diff:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return f"diff --git a/{path} b/{path}\n" + "".join(out)


@dataclass(frozen=True)
class PatchProblem:
    reason: PatchFailure
    message: str


def check_patch(
    files: Mapping[str, str], patch: str | None
) -> tuple[dict[str, str | None], PatchProblem | None]:
    """Apply a candidate patch for scoring: (patched files, None) or ({}, the problem).

    Python files the patch leaves behind must compile (``syntax_error`` otherwise); a patch that
    changes nothing is ``empty``.
    """
    try:
        changed = apply_patch(files, patch or "")
    except PatchError as exc:
        return {}, PatchProblem(exc.reason, str(exc))
    if all(files.get(p) == text for p, text in changed.items()):
        return {}, PatchProblem("empty", "the patch changes nothing")
    for path, text in changed.items():
        if text is not None and path.endswith(".py"):
            try:
                ast.parse(text, filename=path)
            except SyntaxError as exc:
                return {}, PatchProblem(
                    "syntax_error", f"{path}:{exc.lineno}: {exc.msg} after the patch"
                )
    return changed, None
