"""Where the tasks' data files (``leaderboard.yaml``, ``reference.yaml``) live, found without
importing ``tasks``: ``importlib.util.find_spec`` locates the package directory, a checkout's
``tasks/`` folder is the fallback."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_REPO_TASKS = Path(__file__).resolve().parent.parent / "tasks"


def task_dirs() -> list[Path]:
    """Candidate directories holding ``<task>/leaderboard.yaml`` and ``<task>/reference.yaml``."""
    dirs: list[Path] = []
    try:
        spec = importlib.util.find_spec("tasks")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        dirs.extend(Path(p) for p in spec.submodule_search_locations)
    if _REPO_TASKS.is_dir() and _REPO_TASKS not in dirs:
        dirs.append(_REPO_TASKS)
    return dirs
