"""Host-side process checks shared by the sandbox tests."""

from __future__ import annotations

import os
import time
from pathlib import Path


def host_pids_with(marker: str) -> list[int]:
    """Host pids whose command line contains `marker`."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if marker.encode() in Path(entry.path, "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def wait_gone(marker: str, seconds: float = 5.0) -> list[int]:
    """Wait until no host process carries `marker`; return those still left."""
    deadline = time.monotonic() + seconds
    while (left := host_pids_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
