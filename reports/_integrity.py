"""Is a log file whole? inspect's ``.eval`` logs are zip archives: every member is read and its
CRC checked; ``.json`` logs must parse. A log that fails is never used (a copy with a block of
zeros in the middle still has a readable header and summaries, so reading those is no check)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

_CHUNK = 1 << 20


def integrity_problem(path: Path) -> str | None:
    """What is wrong with the log at ``path``, or None when it is whole."""
    if path.suffix == ".json":
        try:
            json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            return f"not valid JSON: {_first_line(exc)}"
        return None
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        return f"not a readable zip archive: {_first_line(exc)}"
    with archive:
        for member in archive.infolist():
            try:
                with archive.open(member) as fh:
                    while fh.read(_CHUNK):
                        pass
            except Exception as exc:  # noqa: BLE001 - zlib, zstd (inspect's codec), CRC, EOF: damaged
                return f"member {member.filename}: {_first_line(exc)}"
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160]}" if text else type(exc).__name__
