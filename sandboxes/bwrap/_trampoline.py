"""The persistent jail's exec trampoline (`_trampoline.c`), compiled once per harness process.

The exec server starts each command through it (see `_server.py`, `_spawn_fast`): a vfork of the
server plus one exec of a small static binary, instead of a full fork of the Python server, which
is what CPython does when a child must change its uid. Where no C compiler is found, or the build
fails, or the architecture is neither x86_64 nor aarch64, `trampoline_binary()` is None and the
server keeps the fork path: the same results, slower.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("_trampoline.c")
TRAMPOLINE_FILE = "bwrap-exec-trampoline"  # its name beside the server (_server.py's _TRAMPOLINE)
# freestanding: no libc, no loader, no builtins turned into library calls
CFLAGS = (
    "-O2", "-static", "-nostdlib", "-ffreestanding", "-fno-stack-protector", "-fno-builtin",
    "-fno-tree-loop-distribute-patterns", "-fno-pie", "-no-pie",
)  # fmt: skip


@functools.lru_cache(maxsize=1)
def trampoline_binary() -> Path | None:
    """The compiled trampoline in a private temporary folder, or None (see the module doc)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    folder = Path(tempfile.mkdtemp(prefix="bwrap-trampoline-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    out = folder / TRAMPOLINE_FILE
    try:
        subprocess.run(
            [cc, *CFLAGS, "-o", str(out), str(SOURCE)], check=True, capture_output=True, timeout=120
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out


def install_trampoline(folder: Path) -> bool:
    """Copy the trampoline into the server's folder (read-only, the harness's own file); False
    when there is none to copy."""
    binary = trampoline_binary()
    if binary is None:
        return False
    target = folder / TRAMPOLINE_FILE
    shutil.copyfile(binary, target)
    target.chmod(0o555)
    return True
