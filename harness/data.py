"""Where benchmark data lives (`HARNESS_DATA_DIR`) and how its content is fingerprinted."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

DATA_DIR_ENV = "HARNESS_DATA_DIR"


class DatasetNotFoundError(FileNotFoundError):
    """A dataset the task needs is not where the harness looked for it."""


def data_dir() -> Path | None:
    """The configured data directory, or None when `HARNESS_DATA_DIR` is unset or empty."""
    value = os.environ.get(DATA_DIR_ENV, "").strip()
    return Path(value).expanduser().resolve() if value else None


def data_path(relative: str, *, how_to_get: str) -> Path:
    """Resolve `relative` under `HARNESS_DATA_DIR`, or fail naming the path searched.

    Never substitutes other data: a task that asked for this file gets this file or an error.
    """
    root = data_dir()
    if root is None:
        raise DatasetNotFoundError(
            f"Dataset '{relative}' needs {DATA_DIR_ENV} to point at a data directory, but it is "
            f"unset. Set {DATA_DIR_ENV}=/path/to/data (`make` sets it from DATA_DIR=). "
            f"How to obtain it: {how_to_get}"
        )
    path = root / relative
    if not path.exists():
        raise DatasetNotFoundError(
            f"Dataset '{relative}' not found: looked for {path} ({DATA_DIR_ENV}={root}). "
            f"How to obtain it: {how_to_get}"
        )
    return path


def content_hash(*paths: str | os.PathLike[str]) -> str:
    """sha256 over the given files and folders (files sorted by relative path; names included).

    Stable across machines: depends only on relative file names and bytes.
    """
    digest = hashlib.sha256()
    for root in paths:
        root = Path(root)
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for file in files:
            name = file.relative_to(root).as_posix() if root.is_dir() else file.name
            digest.update(name.encode() + b"\0")
            with open(file, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
            digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def text_hash(text: str) -> str:
    """sha256 of a string, for generated datasets that live only in memory."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
