"""Per-sample disk quota: the sample folder is a size-limited tmpfs (harness as root only).

Everything a sample can write on the host — `/workspace`, `/tmp` and the jail's own small files —
lies in its folder, so one `size=` mount caps all of it, and cleanup is one unmount. tmpfs pages
are memory: what a sample's processes write is also charged to its memory cgroup.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

_MS_NOSUID, _MS_NODEV = 0x2, 0x4
_MNT_DETACH = 2
_INODES_PER_MB = 256  # ~4 KiB per file on average before the inode limit bites
_libc = ctypes.CDLL(None, use_errno=True)


def mount_quota(path: Path, *, size_mb: int) -> None:
    """Mount a tmpfs of `size_mb` MiB on the (empty) folder `path`, mode 0700, owner root."""
    options = f"size={size_mb}m,nr_inodes={max(4096, size_mb * _INODES_PER_MB)},mode=0700"
    flags = _MS_NOSUID | _MS_NODEV
    if _libc.mount(b"tmpfs", os.fsencode(path), b"tmpfs", flags, options.encode()) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"cannot mount the disk quota tmpfs: {os.strerror(code)}", str(path))


def unmount(path: Path | str) -> bool:
    """Detach the mount at `path` (lazily: it goes once nothing uses it). True if one was there."""
    if _libc.umount2(os.fsencode(str(path)), _MNT_DETACH) == 0:
        return True
    return False


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as \\ooo."""
    out, i = [], 0
    while i < len(field):
        code = field[i + 1 : i + 4]
        if field[i] == "\\" and len(code) == 3 and code.isdigit():
            out.append(chr(int(code, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def mounts_under(folder: Path | str) -> list[str]:
    """Mount points (of this process's mount namespace) at or below `folder`, deepest first."""
    prefix = str(folder).rstrip("/")
    found: list[str] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 4:
            point = _unescape(fields[4])
            if point == prefix or point.startswith(prefix + "/"):
                found.append(point)
    return sorted(set(found), key=len, reverse=True)


def unmount_all_under(folder: Path | str) -> int:
    """Detach every mount at or below `folder`; returns how many were detached."""
    return sum(unmount(point) for point in mounts_under(folder))
