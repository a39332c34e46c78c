"""Per-sample cgroups (memory + pids), used when the harness runs as root and cgroups are writable.

cgroup v1 (separate `memory` and `pids` hierarchies) and v2 (one unified tree) are supported. The
sandbox's launcher (still root) joins the group before it drops to the sample's uid and becomes
bwrap, so the whole sandbox process tree is accounted from its first instruction.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_ROOT = Path("/sys/fs/cgroup")
_PREFIX = "icml26-bwrap-"


@dataclass(frozen=True)
class SampleCgroup:
    """The cgroup directories of one sample (one per hierarchy)."""

    dirs: tuple[Path, ...]

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError):
                found.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        return found

    def kill_all(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def remove(self, wait_s: float = 2.0) -> None:
        """rmdir the groups; a group whose last tasks are still exiting is busy for a moment."""
        deadline = time.monotonic() + wait_s
        for d in self.dirs:
            while d.exists():
                try:
                    d.rmdir()
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.02)

    def oom_kills(self) -> int:
        """How many processes the memory limit has killed in this sample so far."""
        total = 0
        for d in self.dirs:
            for name in ("memory.oom_control", "memory.events"):  # v1, v2
                with contextlib.suppress(OSError, ValueError):
                    for line in (d / name).read_text().splitlines():
                        key, _, value = line.partition(" ")
                        if key == "oom_kill":
                            total += int(value)
        return total


def _own_path(controller: str) -> str:
    """This process's cgroup path in a v1 hierarchy (or v2 when controller is '')."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, ctrls, path = line.split(":", 2)
            if controller in ctrls.split(","):
                return path
    return "/"


def _parent(hierarchy: Path, controller: str) -> Path:
    """Create sandboxes beside this process's cgroup when that folder is visible, else at the root."""
    own = hierarchy / _own_path(controller).lstrip("/")
    return own if own.is_dir() else hierarchy


def _make(parent: Path, name: str, limits: dict[str, str]) -> Path:
    d = parent / name
    d.mkdir()
    try:
        for key, value in limits.items():
            (d / key).write_text(value)
    except OSError:
        with contextlib.suppress(OSError):
            d.rmdir()
        raise
    return d


def create_sample_cgroup(name: str, *, memory_mb: int, max_processes: int) -> SampleCgroup | None:
    """Create the memory+pids cgroup of one sample; None when cgroups are not usable here."""
    if os.geteuid() != 0:
        return None
    memory = str(memory_mb * 1024 * 1024)
    name = _PREFIX + name
    made: list[Path] = []
    try:
        if (_ROOT / "memory").is_dir() and (_ROOT / "pids").is_dir():  # v1
            made.append(
                _make(_parent(_ROOT / "memory", "memory"), name,
                      {"memory.limit_in_bytes": memory})
            )  # fmt: skip
            with contextlib.suppress(OSError):  # no swap here means no memsw file
                (made[0] / "memory.memsw.limit_in_bytes").write_text(memory)
            made.append(
                _make(_parent(_ROOT / "pids", "pids"), name,
                      {"pids.max": str(max_processes)})
            )  # fmt: skip
        elif (_ROOT / "cgroup.controllers").exists():  # v2
            parent = _parent(_ROOT, "")
            enabled = (parent / "cgroup.subtree_control").read_text().split()
            if not {"memory", "pids"} <= set(enabled):
                return None
            made.append(_make(parent, name, {"memory.max": memory, "pids.max": str(max_processes)}))
            with contextlib.suppress(OSError):  # absent without swap accounting
                (made[0] / "memory.swap.max").write_text("0")
        else:
            return None
    except OSError:
        SampleCgroup(tuple(made)).remove()
        return None
    return SampleCgroup(tuple(made))


def orphan_sample_cgroups(folder_exists: Callable[[str], bool]) -> SampleCgroup:
    """Sample cgroups whose sample folder is gone (`folder_exists(name)` is False). A sample's
    folder is created before its cgroups and removed after them, so such a group is an orphan
    (a harness killed mid-cleanup or mid-start)."""
    found: list[Path] = []
    if os.geteuid() != 0:
        return SampleCgroup(())
    hierarchies: list[Path] = []
    if (_ROOT / "memory").is_dir() and (_ROOT / "pids").is_dir():
        hierarchies = [_ROOT / "memory", _ROOT / "pids"]
    elif (_ROOT / "cgroup.controllers").exists():
        hierarchies = [_ROOT]
    for hierarchy in hierarchies:  # beside the cgroup of whichever harness process made them
        for depth in range(4):
            with contextlib.suppress(OSError):
                for d in hierarchy.glob("/".join(["*"] * depth + [_PREFIX + "*"])):
                    if d.is_dir() and not folder_exists(d.name.removeprefix(_PREFIX)):
                        found.append(d)
    return SampleCgroup(tuple(found))
