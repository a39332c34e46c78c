"""Per-user cache locations of the harness."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "HARNESS_CACHE_DIR"


def cache_dir() -> Path:
    """`HARNESS_CACHE_DIR`, else `$XDG_CACHE_HOME/icml26-harness`, else `~/.cache/icml26-harness`."""
    value = os.environ.get(CACHE_DIR_ENV, "").strip()
    if value:
        path = Path(value).expanduser()
    else:
        base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
        path = Path(base) / "icml26-harness"
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve()
