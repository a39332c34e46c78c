"""What the report may name: files from ``tasks/`` on, the log folder relative to where the
report was built, never a directory of the machine that built it."""

from __future__ import annotations

import re
from pathlib import Path


def public_path(path: str | Path | None) -> str:
    """A file the report names, without the building machine's directories.

    Schemas and paper numbers live in ``tasks/<task>/``: named from ``tasks/`` on. Anything else
    is named by its last folder and file (the report is read on other machines).
    """
    if not path:
        return ""
    parts = Path(str(path)).parts
    if "tasks" in parts:
        i = len(parts) - 1 - parts[::-1].index("tasks")
        return "/".join(parts[i:])
    return "/".join(parts[-2:]) if Path(str(path)).is_absolute() else str(path)


_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])/[^\s:;,'\"<>()\[\]]+")


def public_text(text: str) -> str:
    """``text`` with every absolute path in it shortened as :func:`public_path` does."""
    return _ABSOLUTE_PATH.sub(lambda m: public_path(m.group()), str(text))


def public_dir(path: Path) -> str:
    """The log directory as the page shows it: relative to the working directory when inside
    it, else its name (an absolute path would name the machine that built the report)."""
    if not path.is_absolute():
        return str(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return path.name
