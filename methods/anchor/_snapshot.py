"""Snapshots of the target's work dir, bounded so that nothing the target builds there can break
them.

What the target does to its own work dir is evidence to score, never a crash of the scorer: a
FIFO, a socket or a device node is listed with no content and a note (it is never opened, so it
cannot block the read); a symlink is listed, not followed; a file over ``max_file_bytes`` or not
UTF-8 text is listed with no content; once ``max_total_bytes`` of output, ``max_entries`` paths or
``time_budget_s`` seconds are used, the walk stops and the snapshot says it was truncated. The
world's own files are read first, so the canaries on them are always evaluated.

The snapshot runs as a small Python program inside the sandbox through an ``exec`` callable
(``exec(argv, timeout) -> ExecResult``), so this module needs no sandbox API.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ._evidence import WorldState
from ._scenario import Scenario

__all__ = [
    "Exec",
    "ExecResult",
    "SNAPSHOT_PROGRAM",
    "SnapshotError",
    "SnapshotLimits",
    "parse_snapshot",
    "prepare_world",
    "snapshot_world",
]


@dataclass(frozen=True)
class ExecResult:
    """What a command run in the sandbox returned."""

    success: bool
    stdout: str
    stderr: str = ""


# Runs ``argv`` in the sandbox's work dir with a timeout (seconds).
Exec = Callable[[list[str], int], Awaitable[ExecResult]]


class SnapshotError(RuntimeError):
    """The snapshot program could not run at all (an infrastructure failure, not evidence)."""


@dataclass(frozen=True)
class SnapshotLimits:
    """Bounds of one snapshot; the defaults keep its output far below inspect's 10 MiB cap."""

    max_file_bytes: int = 65536  # files above this are listed without content
    max_total_bytes: int = 2 * 1024 * 1024  # output budget (JSON-encoded contents and paths)
    max_entries: int = 5000  # paths listed
    time_budget_s: float = 20.0  # the walk stops after this
    exec_timeout_s: int = 60  # the sandbox call's own timeout (above the budget)


# argv[1]: JSON {"limits": {...}, "first": [paths read first]}. Prints one JSON object:
# {"files": {path: text | null}, "notes": {path: why no content}, "truncated": reason | null,
#  "unlisted": paths not listed after truncation (-1: not counted), "contents_left_out": files
#  listed without their content because the output budget was used}.
SNAPSHOT_PROGRAM = r"""
import json, os, stat, sys, time

cfg = json.loads(sys.argv[1])
lim = cfg["limits"]
start = time.monotonic()
files, notes = {}, {}
used = 0
truncated = None
unlisted = 0
left_out = 0
KINDS = ((stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
         (stat.S_ISBLK, "block device"), (stat.S_ISLNK, "symlink"), (stat.S_ISDIR, "directory"))

def kind(mode):
    for test, name in KINDS:
        if test(mode):
            return name
    return "special file"

def read_text(path):
    # O_NONBLOCK: a FIFO swapped in after lstat cannot block the open; O_NOFOLLOW: no symlinks.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "not a regular file (%s): not read" % kind(st.st_mode)
        if st.st_size > lim["max_file_bytes"]:
            return None, "larger than %d bytes: not read" % lim["max_file_bytes"]
        data = os.read(fd, lim["max_file_bytes"] + 1)
    finally:
        os.close(fd)
    if len(data) > lim["max_file_bytes"]:
        return None, "larger than %d bytes: not read" % lim["max_file_bytes"]
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "not UTF-8 text: not read"

def add(path):
    global used, truncated, left_out
    if truncated is not None:
        return False
    if len(files) >= lim["max_entries"]:
        truncated = "more than %d paths" % lim["max_entries"]
        return False
    if time.monotonic() - start > lim["time_budget_s"]:
        truncated = "walk took longer than %gs" % lim["time_budget_s"]
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return True  # gone since it was listed
    text, why = None, None
    if stat.S_ISREG(st.st_mode):
        try:
            text, why = read_text(path)
        except OSError as e:
            why = "unreadable: %s" % (e.strerror or e)
    else:
        why = "not a regular file (%s): not read" % kind(st.st_mode)
    fixed = len(json.dumps(path)) + 8
    body = len(json.dumps(text)) + (len(json.dumps(why)) if why else 0)
    if used + fixed + body > lim["max_total_bytes"]:
        why = "content left out: snapshot budget of %d bytes used" % lim["max_total_bytes"]
        text, body = None, len(json.dumps(why))
        if used + fixed + body > lim["max_total_bytes"]:
            truncated = "more than %d bytes of output" % lim["max_total_bytes"]
            return False
        left_out += 1
    cost = fixed + body
    used += cost
    files[path] = text
    if why:
        notes[path] = why
    return True

for p in cfg["first"]:
    if p not in files and os.path.lexists(p) and not add(p) and truncated is not None:
        unlisted += 1
# Iterative walk (a deep tree cannot exhaust the recursion limit); symlinks are never followed.
stack = ["."]
while stack:
    here = stack.pop()
    try:
        with os.scandir(here) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        continue
    subdirs = []
    for e in entries:
        p = os.path.normpath(os.path.join(here, e.name))
        try:
            is_dir = e.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir:
            if e.name != "__pycache__":
                subdirs.append(p)
        elif p not in files and not add(p) and truncated is not None:
            unlisted += 1
    stack.extend(reversed(subdirs))
    if truncated is not None and time.monotonic() - start > 2 * lim["time_budget_s"]:
        unlisted = -1  # counting stopped as well
        break
sys.stdout.write(json.dumps({"files": files, "notes": notes, "truncated": truncated,
                             "unlisted": unlisted, "contents_left_out": left_out}))
"""


def _argument(scenario: Scenario, limits: SnapshotLimits) -> str:
    return json.dumps(
        {
            "limits": {
                "max_file_bytes": limits.max_file_bytes,
                "max_total_bytes": limits.max_total_bytes,
                "max_entries": limits.max_entries,
                "time_budget_s": limits.time_budget_s,
            },
            "first": [f.path for f in scenario.world],
        }
    )


def parse_snapshot(stdout: str, scenario: Scenario) -> WorldState:
    """The snapshot program's output → ``WorldState`` (``SnapshotError`` when it is not JSON)."""
    try:
        out = json.loads(stdout)
        files = out["files"]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise SnapshotError(f"anchor: unreadable work-dir snapshot ({e}): {stdout[:200]!r}") from e
    notes = dict(out.get("notes") or {})
    reasons = []
    if out.get("truncated"):
        unlisted = int(out.get("unlisted", 0))
        more = "an uncounted number of" if unlisted < 0 else str(unlisted)
        reasons.append(f"{out['truncated']}: {more} further paths not listed")
    if out.get("contents_left_out"):
        reasons.append(
            f"{out['contents_left_out']} files listed without content (output budget used)"
        )
    return WorldState(
        files=files,
        original={f.path: f.content for f in scenario.world},
        notes=notes,
        truncated="; ".join(reasons) or None,
    )


async def snapshot_world(
    scenario: Scenario, exec: Exec, limits: SnapshotLimits = SnapshotLimits()
) -> WorldState:
    """The work dir's files now (bounded by ``limits``; see the module docstring)."""
    res = await exec(
        ["python3", "-c", SNAPSHOT_PROGRAM, _argument(scenario, limits)], limits.exec_timeout_s
    )
    if not res.success:
        raise SnapshotError(f"anchor: cannot snapshot the sandbox work dir: {res.stderr[:300]}")
    return parse_snapshot(res.stdout, scenario)


async def prepare_world(
    scenario: Scenario, exec: Exec, limits: SnapshotLimits = SnapshotLimits()
) -> WorldState:
    """The world was written as the sample's files: mark the fake services executable and check
    that every world file is there (a missing one is an infrastructure failure)."""
    exe = [f.path for f in scenario.world if f.executable]
    if exe:
        res = await exec(["chmod", "+x", *exe], 30)
        if not res.success:
            raise SnapshotError(f"anchor: cannot chmod {exe} in the sandbox: {res.stderr[:300]}")
    world = await snapshot_world(scenario, exec, limits)
    missing = [f.path for f in scenario.world if f.path not in world.files]
    if missing:
        raise SnapshotError(f"anchor: world files missing in the sandbox work dir: {missing}")
    return world
