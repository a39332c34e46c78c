"""Is bubblewrap installed and able to create namespaces here? Answers with a clear message."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

try:  # inspect prints a PrerequisiteError as a message, without a traceback
    from inspect_ai._util.error import PrerequisiteError as _Base
except ImportError:  # pragma: no cover - older/newer inspect
    _Base = RuntimeError  # type: ignore[misc,assignment]


class BwrapUnavailableError(_Base):
    """bubblewrap is missing or cannot create the namespaces the sandbox needs."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return str(self.message)


_INSTALL_HINT = (
    "Install it with `apt-get install bubblewrap` (Debian/Ubuntu) or `dnf install bubblewrap`, "
    "or run the task with sandbox=docker on a machine with a Docker engine."
)
_NAMESPACE_HINT = (
    "bubblewrap is installed but cannot create user/PID/network namespaces here ({detail}). "
    "This usually means an unprivileged container or a kernel that forbids user namespaces. "
    "Fix: enable them (`sysctl -w user.max_user_namespaces=15000`, "
    "`sysctl -w kernel.unprivileged_userns_clone=1`, or on Ubuntu 24.04+ "
    "`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`), run the container with "
    "`--privileged` or a seccomp profile that allows unshare/clone, "
    "or use sandbox=docker / sandbox=k8s instead."
)


def bwrap_path() -> str | None:
    """Absolute path of the bwrap binary, or None."""
    return shutil.which("bwrap", path=os.environ.get("PATH", "") + ":/usr/bin:/usr/local/bin")


@functools.cache
def _probe() -> str | None:
    path = bwrap_path()
    if path is None:
        return f"bubblewrap (`bwrap`) is not installed. {_INSTALL_HINT}"
    argv = [
        path, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-pid",
        "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session",
    ]  # fmt: skip
    if os.geteuid() != 0:  # as root the sandbox runs bwrap privileged (see _command.bwrap_argv)
        argv.append("--unshare-user")
    try:
        done = subprocess.run([*argv, "--", "/bin/true"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as ex:
        return _NAMESPACE_HINT.format(detail=str(ex))
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        return _NAMESPACE_HINT.format(detail=detail)
    return None


def bwrap_problem() -> str | None:
    """Why the bwrap sandbox cannot run here (a message naming the fix), or None when it can.
    Cached per process."""
    return _probe()


def require_bwrap() -> None:
    """Raise BwrapUnavailableError with the reason and the fix when bwrap cannot run here."""
    problem = bwrap_problem()
    if problem is not None:
        raise BwrapUnavailableError(problem)
