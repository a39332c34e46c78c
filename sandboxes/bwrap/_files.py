"""read_file / write_file run inside the sandbox (as its user, seeing only its mounts), so a
symlink planted in the work dir can never make the host read or write one of its own files.
Exit codes of the small shell scripts below map to the exceptions inspect documents."""

from __future__ import annotations

_NOT_FOUND, _IS_DIR, _DENIED, _NOT_DIR, _TOO_BIG = 52, 53, 54, 55, 56

READ_SCRIPT = f"""
f=$1; max=$2
if [ -d "$f" ]; then exit {_IS_DIR}; fi
if [ ! -e "$f" ]; then
  if [ -L "$f" ]; then exit {_NOT_FOUND}; fi
  d=$(dirname -- "$f"); while [ ! -e "$d" ]; do d=$(dirname -- "$d"); done
  if [ ! -d "$d" ]; then exit {_NOT_DIR}; fi
  exit {_NOT_FOUND}
fi
if [ ! -r "$f" ]; then exit {_DENIED}; fi
size=$(stat -L -c %s -- "$f") || exit {_DENIED}
if [ "$size" -gt "$max" ]; then exit {_TOO_BIG}; fi
cat -- "$f" || exit {_DENIED}
"""

WRITE_SCRIPT = f"""
f=$1
if [ -d "$f" ]; then exit {_IS_DIR}; fi
d=$(dirname -- "$f")
if ! mkdir -p -- "$d" 2>/dev/null; then
  while [ ! -e "$d" ]; do d=$(dirname -- "$d"); done
  if [ ! -d "$d" ]; then exit {_NOT_DIR}; fi
  exit {_DENIED}
fi
cat > "$f" 2>/dev/null || exit {_DENIED}
"""


class FileTooLarge(Exception):
    """The file is larger than inspect's read limit."""


def raise_for_file_status(returncode: int, file: str, stderr: str) -> None:
    """Raise the exception inspect documents for a failed read/write script, if any."""
    if returncode == 0:
        return
    if returncode == _NOT_FOUND:
        raise FileNotFoundError(2, "No such file or directory", file)
    if returncode == _IS_DIR:
        raise IsADirectoryError(21, "Is a directory", file)
    if returncode == _NOT_DIR:
        raise NotADirectoryError(20, "Not a directory", file)
    if returncode == _DENIED:
        raise PermissionError(13, "Permission denied", file)
    if returncode == _TOO_BIG:
        raise FileTooLarge(file)
    raise RuntimeError(f"bwrap sandbox file operation on {file!r} failed ({returncode}): {stderr}")
