"""Host-side reaping: what dead harness processes left behind, and the bwrap processes orphaned
to this one.

Stale samples. Each sample folder (`<tmp>/bwrap-sample-*`) holds an owner file written before
anything else: `<harness pid>:<its start time>`, the sample's uid, its cgroup directories. A folder
whose harness is gone (pid dead, or reused by another process — the start time differs) is reaped:
its processes killed, its mounts detached, its cgroups and files removed. A folder without an owner
file older than `ORPHAN_AGE_S` was abandoned mid-creation. Sample cgroups whose folder is gone are
removed too.

Orphaned bwrap processes. bubblewrap's outer process exits as soon as the jail's init reports the
command's status, before it reaps that init, and a SIGKILLed jail leaves its init behind the same
way; the kernel hands such orphans to the nearest "child subreaper" — which is the harness itself
when it runs as PID 1 of a container or sets PR_SET_CHILD_SUBREAPER. Nobody else waits for them, so
without `reap_orphans` they stay zombies (`[bwrap] <defunct>`) until the harness exits. Only
zombies named `bwrap` that this module did not launch itself are reaped, and never while a launch
is between fork and registration, so no other waiter's child status is ever taken.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ._cgroup import SampleCgroup, orphan_sample_cgroups
from ._disk import unmount_all_under
from ._tree import remove_tree

PREFIX = "bwrap-sample-"
OWNER_FILE = "owner"  # "<pid>:<start time>\n<uid or ->\n<cgroup dirs...>"
ORPHAN_AGE_S = 600.0  # a sample folder without an owner file this old was abandoned mid-creation
SERVER_UID_OFFSET = 500_000_000  # a persistent jail's server runs as the sample's uid + this

_PR_GET_CHILD_SUBREAPER = 37
_libc = ctypes.CDLL(None, use_errno=True)


# ------------------------------------------------------------------------- host processes


def process_start_time(pid: int) -> int | None:
    """The start time of `pid` (clock ticks since boot; field 22 of /proc/pid/stat), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    try:
        return int(stat.rsplit(b")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


def owner_token(pid: int | None = None) -> str:
    """`<pid>:<start time>` of this (or that) process: an identity that survives pid reuse."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}:{process_start_time(pid)}"


def owner_alive(token: str) -> bool:
    """Is the process named by an owner token (or a bare pid, older folders) still running?"""
    pid_text, _, start = token.partition(":")
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if start and start != "None":
        return str(process_start_time(pid)) == start
    return True


def processes_of(uid: int) -> list[int]:
    """Host pids whose real uid is `uid` (zombies included)."""
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for line in Path(entry.path, "status").read_text().splitlines():
                if line.startswith("Uid:"):
                    if int(line.split()[1]) == uid:
                        found.append(int(entry.name))
                    break
    return found


def kill_all(pids: set[int] | list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------------- orphaned bwrap processes

_lock = threading.Lock()
_launching = 0
_launched: set[int] = set()


def receives_orphans() -> bool:
    """Do orphaned descendants get reparented to this process (PID 1, or a child subreaper)?"""
    if os.getpid() == 1:
        return True
    flag = ctypes.c_int(0)
    return _libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0 and bool(
        flag.value
    )


@contextlib.contextmanager
def launching() -> Iterator[Callable[[int], None]]:
    """Wrap the start of a direct child that runs bwrap: yields `register(pid)`. Until the child
    is registered (or the block ends), `reap_orphans` reaps nothing: the new child could be
    mistaken for an orphan between its fork and its registration."""
    global _launching
    with _lock:
        _launching += 1
    pending = [True]

    def done() -> None:
        global _launching
        if pending[0]:
            pending[0] = False
            _launching -= 1

    def register(pid: int) -> None:
        with _lock:
            _launched.add(pid)
            done()

    try:
        yield register
    finally:
        with _lock:
            done()


def forget(pid: int) -> None:
    """The owner of the direct child `pid` is done with it. Until its status has been collected
    it stays protected: a cancelled or timed-out call can end before asyncio's child watcher has
    waited for the process, and reaping it here would take that status from the watcher."""
    with _lock:
        if pid not in _children():
            _launched.discard(pid)


def _prune_launched() -> None:
    """Drop launched pids whose status has been collected (call with `_lock` held)."""
    _launched.intersection_update(_children())


def _children() -> set[int]:
    found: set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for tid in tasks:
        with contextlib.suppress(OSError, ValueError):
            found.update(
                int(p) for p in Path(f"/proc/self/task/{tid}/children").read_text().split()
            )
    return found


def _stat_of(pid: int) -> tuple[bytes, bytes] | None:
    """(comm, state) of `pid`."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    head, _, tail = stat.rpartition(b")")
    return head.partition(b"(")[2], (tail.split() or [b"?"])[0]


def _named(pid: int, name: bytes) -> bool:
    found = _stat_of(pid)
    return found is not None and found[0] == name


def _zombie_named(pid: int, name: bytes) -> bool:
    return _stat_of(pid) == (name, b"Z")


def reap_orphans() -> int:
    """Reap zombie `bwrap` processes reparented to this process; returns how many."""
    if not receives_orphans():
        return 0
    reaped = 0
    with _lock:
        if _launching:
            return 0
        _prune_launched()
        for pid in _children() - _launched:
            if _zombie_named(pid, b"bwrap"):
                with contextlib.suppress(ChildProcessError):
                    if os.waitpid(pid, os.WNOHANG)[0] == pid:
                        reaped += 1
    return reaped


def reap_orphans_settled(wait_s: float = 1.0) -> None:
    """`reap_orphans`, then wait briefly for orphaned bwrap processes still exiting."""
    if not receives_orphans():
        return
    deadline = time.monotonic() + wait_s
    while True:
        reap_orphans()
        with _lock:
            pending = [p for p in _children() - _launched if _named(p, b"bwrap")]
        if not pending or time.monotonic() > deadline:
            return
        time.sleep(0.02)


# ------------------------------------------------------------------------- stale samples


def sample_roots() -> list[Path]:
    return sorted(Path(tempfile.gettempdir()).glob(PREFIX + "*"))


def read_owner(root: Path) -> tuple[str, int | None, SampleCgroup] | None:
    """(owner token, sample uid, cgroup) from a sample folder's owner file; None without one."""
    try:
        token, uid, *groups = (root / OWNER_FILE).read_text().split("\n")
    except FileNotFoundError:
        return None
    return (
        token,
        int(uid) if uid.isdigit() else None,
        SampleCgroup(tuple(Path(g) for g in groups if g)),
    )


def reap_stale_samples() -> int:
    """Remove sample folders (and kill the processes, detach the mounts, remove the cgroups) left
    behind by harness processes that died without cleaning up. Returns how many were removed."""
    removed = 0
    for root in sample_roots():
        try:
            owner = read_owner(root)
            if owner is None:
                # no owner file: being created right now, or left by a harness killed before it
                # wrote one; nothing of it ever ran
                if time.time() - root.stat().st_mtime > ORPHAN_AGE_S:
                    unmount_all_under(root)
                    remove_tree(root)
                    removed += 1
                continue
            token, uid, cgroup = owner
            if owner_alive(token):
                continue
        except (OSError, ValueError):
            continue  # not ours
        if uid is not None and os.geteuid() == 0:
            kill_all(processes_of(uid) + processes_of(uid + SERVER_UID_OFFSET))
            cgroup.kill_all()
        unmount_all_under(root)
        cgroup.remove(wait_s=0.5)
        remove_tree(root)
        removed += 1
    orphans = orphan_sample_cgroups(lambda name: Path(tempfile.gettempdir(), name).exists())
    orphans.kill_all()
    orphans.remove(wait_s=0.5)
    return removed
