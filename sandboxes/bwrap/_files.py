"""read_file / write_file run inside the sandbox (as its user, seeing only its mounts), so a
symlink planted in the work dir can never make the host read or write one of its own files.
Exit codes of the small shell scripts below map to the exceptions inspect documents.

Only regular files are read or written: a FIFO, socket or device at the path fails at once with
`NotRegularFileError`, and the file is opened non-blocking (`dd iflag/oflag=nonblock`) and its
type checked again afterwards, so a FIFO swapped in between the check and the open cannot block
the call either."""

from __future__ import annotations

import errno

_NOT_FOUND, _IS_DIR, _DENIED, _NOT_DIR, _TOO_BIG = 52, 53, 54, 55, 56
_NOT_REGULAR, _NO_SPACE, _FILE_SIZE = 57, 58, 59

# `[ -f ]` follows symlinks, like the open that follows; the type goes to stderr for the message
_REFUSE_SPECIAL = f"""
not_regular() {{ stat -L -c %F -- "$f" >&2 2>/dev/null; exit {_NOT_REGULAR}; }}
"""

READ_SCRIPT = (
    _REFUSE_SPECIAL
    + f"""
f=$1; max=$2
if [ -d "$f" ]; then exit {_IS_DIR}; fi
if [ ! -e "$f" ]; then
  if [ -L "$f" ]; then exit {_NOT_FOUND}; fi
  d=$(dirname -- "$f"); while [ ! -e "$d" ]; do d=$(dirname -- "$d"); done
  if [ ! -d "$d" ]; then exit {_NOT_DIR}; fi
  exit {_NOT_FOUND}
fi
if [ ! -f "$f" ]; then not_regular; fi
if [ ! -r "$f" ]; then exit {_DENIED}; fi
size=$(stat -L -c %s -- "$f") || exit {_DENIED}
if [ "$size" -gt "$max" ]; then exit {_TOO_BIG}; fi
dd if="$f" iflag=nonblock bs=65536 status=none 2>/dev/null; rc=$?
if [ ! -f "$f" ]; then not_regular; fi
[ $rc = 0 ] || exit {_DENIED}
"""
)

WRITE_SCRIPT = (
    _REFUSE_SPECIAL
    + f"""
f=$1
if [ -d "$f" ]; then exit {_IS_DIR}; fi
if [ -e "$f" ] && [ ! -f "$f" ]; then not_regular; fi
d=$(dirname -- "$f")
if ! mkdir -p -- "$d" 2>/dev/null; then
  while [ ! -e "$d" ]; do d=$(dirname -- "$d"); done
  if [ ! -d "$d" ]; then exit {_NOT_DIR}; fi
  exit {_DENIED}
fi
msg=$(dd of="$f" oflag=nonblock bs=65536 status=none 2>&1); rc=$?
if [ -e "$f" ] && [ ! -f "$f" ]; then not_regular; fi
case "$rc:$msg" in
  0:*) exit 0 ;;
  *"No space left"*|*"quota exceeded"*) exit {_NO_SPACE} ;;
  153:*|*"File too large"*) exit {_FILE_SIZE} ;;
esac
exit {_DENIED}
"""
)


class FileTooLarge(Exception):
    """The file is larger than inspect's read limit."""


class NotRegularFileError(PermissionError):
    """The path is a FIFO, socket or device: the sandbox's file helpers only handle regular files
    (a FIFO would block them). A PermissionError, so callers that treat "cannot access" alike
    need no change; catch this class to tell it apart."""

    def __init__(self, file: str, kind: str) -> None:
        super().__init__(
            errno.EPERM,
            f"not a regular file ({kind or 'special file'}); the sandbox reads and writes only "
            "regular files",
            file,
        )
        self.kind = kind


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
    if returncode == _NO_SPACE:
        raise OSError(errno.ENOSPC, "No space left on device (the sample's disk quota)", file)
    if returncode == _FILE_SIZE:
        raise OSError(errno.EFBIG, "File too large (the sandbox's file size limit)", file)
    if returncode == _NOT_REGULAR:
        raise NotRegularFileError(file, stderr.strip().splitlines()[-1] if stderr.strip() else "")
    raise RuntimeError(f"bwrap sandbox file operation on {file!r} failed ({returncode}): {stderr}")
