"""The command line of one sandboxed exec: a tiny launcher shell, then bubblewrap."""

from __future__ import annotations

import functools
import os
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ._config import WORKDIR

CTL_DIR = "/.bwrap-exec"
"""Where a persistent jail's exec-server socket folder appears inside the jail."""

SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_BASE_ENV = {
    "PATH": SANDBOX_PATH,
    "HOME": WORKDIR,
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "dumb",
    "USER": "sandbox",
    "LOGNAME": "sandbox",
    "SHELL": "/bin/bash",
    "PYTHONDONTWRITEBYTECODE": "1",
}
_SYSTEM_RO = ("/usr", "/etc")
_ENV = "/usr/bin/env"
# Hidden from /proc (Docker's masked paths, plus /proc/key-users); the rest of /proc is read-only.
_PROC_MASKED_FILES = ("kcore", "keys", "key-users", "latency_stats", "timer_list", "timer_stats",
                      "sched_debug")  # fmt: skip
_PROC_MASKED_DIRS = ("acpi", "asound", "scsi")
_MAYBE_LINKED = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

# Runs on the host (as root when sandboxes get a private uid): join the sample's cgroups (paths in
# $1..$n up to "--"), lower the rlimits, then exec the rest: bwrap. dash builtins only. (Python's
# own setuid in Popen would cost a full fork instead of a vfork.)
LAUNCHER_FAILED = "bwrap-sandbox-launcher-failed"
_LAUNCHER = r"""
fail() { echo "LAUNCHER_FAILED: $1" >&2; exit 125; }
while [ "$1" != "--" ]; do echo $$ > "$1" || fail "cannot join cgroup $1"; shift; done; shift
umask 022 && ulimit -c 0 && ulimit -p "$1" && ulimit -f "$2" && ulimit -n "$3" \
  || fail "cannot set rlimits"
if [ "$4" != 0 ]; then ulimit -v "$4" || fail "cannot set RLIMIT_AS"; fi
shift 4; exec "$@"
""".replace("LAUNCHER_FAILED", LAUNCHER_FAILED)


@dataclass(frozen=True)
class SandboxLayout:
    """Host folders of one sample and what else is bound into its sandboxes."""

    work_dir: str
    tmp_dir: str
    ro_binds: tuple[str, ...] = ()


@functools.cache
def _proc_hardening() -> tuple[str, ...]:
    """Mask what a sample has no business reading in /proc, then make all of /proc read-only
    (bwrap itself leaves /proc/sys and /proc/sysrq-trigger writable when it runs as root)."""
    args: list[str] = []
    for name in _PROC_MASKED_FILES:
        if os.path.isfile(f"/proc/{name}"):
            args += ["--ro-bind", "/dev/null", f"/proc/{name}"]
    for name in _PROC_MASKED_DIRS:
        if os.path.isdir(f"/proc/{name}"):
            args += ["--tmpfs", f"/proc/{name}", "--remount-ro", f"/proc/{name}"]
    return (*args, "--remount-ro", "/proc")


def check_env(env: Mapping[str, str]) -> None:
    """Refuse variable names the environment cannot carry (a clear error instead of a mangled one)."""
    for key, value in env.items():
        if not key or "=" in key or "\0" in key or "\0" in value:
            raise ValueError(f"bwrap sandbox: invalid environment variable {key!r}={value!r}")


def _with_env(cmd: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """`cmd` started by `env -i` with exactly `env` (a command name containing '=' would be read
    as a variable by env, so such a name goes through `sh -c 'exec "$0" "$@"'`)."""
    pairs = [f"{key}={value}" for key, value in env.items()]
    tail = list(cmd)
    if tail and "=" in tail[0]:
        tail = ["/bin/sh", "-c", 'exec "$0" "$@"', *tail]
    return [_ENV, "-i", "--", *pairs, *tail]


@functools.cache
def _system_binds() -> tuple[str, ...]:
    args: list[str] = []
    for path in _SYSTEM_RO:
        if os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in _MAYBE_LINKED:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return tuple(args)


def _parents(path: str, made: set[str]) -> list[str]:
    """`--dir` for each missing ancestor of a bind target, world-searchable (bwrap's own are 0700,
    which the sample's uid could not traverse)."""
    args: list[str] = []
    parts = posixpath.normpath(path).strip("/").split("/")[:-1]
    for i in range(len(parts)):
        parent = "/" + "/".join(parts[: i + 1])
        if parent in made or parent in _SYSTEM_RO or parent in _MAYBE_LINKED:
            continue
        made.add(parent)
        args += ["--perms", "0755", "--dir", parent]
    made.add(posixpath.normpath(path))
    return args


SAMPLE_DIRS = (WORKDIR, "/tmp")
"""The sample's own folders: the only places a command may start in."""

# Runs inside the jail as the sample's uid (after setpriv / the server's setuid), before the
# command: enter the caller's cwd there, so it is resolved with the sample's rights and its view
# of the jail (never by bwrap or the server, which still hold capabilities and descriptors of the
# host), and refuse it unless it physically lies in the sample's folders (a symlink planted by the
# sample may point anywhere). dash builtins only, no subshell: `cd -P` sets $PWD to the physical
# path (getcwd), so no pipe exists that another process could write a fake path into.
ENTER_CWD = r"""
cd -P -- "$1" 2>/dev/null \
  || { printf 'bwrap sandbox: cwd %s: no such directory\n' "$1" >&2; exit 1; }
case $PWD in /workspace|/workspace/*|/tmp|/tmp/*) ;; *)
  printf "bwrap sandbox: cwd %s leads to %s, outside the sample's folders (/workspace, /tmp)\n" \
    "$1" "$PWD" >&2; exit 1;;
esac
shift; exec "$@"
"""


def check_cwd(cwd: str | None) -> str | None:
    """The caller's cwd as an absolute path in the jail (relative ones start at /workspace), or
    None for the default (/workspace). Raises ValueError, naming it, for one that does not lie
    (as written) in /workspace or /tmp: /proc, /etc, ... are never a command's cwd. Symlinks are
    resolved later, inside the jail, by ENTER_CWD."""
    if cwd is None:
        return None
    if not isinstance(cwd, str) or "\0" in cwd or not cwd:
        raise ValueError(f"bwrap sandbox: exec cwd {cwd!r} is not a path")
    path = posixpath.normpath(posixpath.join(WORKDIR, cwd))
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    if not any(path == d or path.startswith(d + "/") for d in SAMPLE_DIRS):
        raise ValueError(
            f"bwrap sandbox: exec cwd {cwd!r} (i.e. {path}) lies outside the sample's folders "
            f"/workspace and /tmp; a command may only start in one of them"
        )
    return None if path == WORKDIR else path


def enter_cwd(cmd: Sequence[str], cwd: str | None) -> list[str]:
    """`cmd`, started in `cwd` (from check_cwd) by ENTER_CWD where that is not the default."""
    if cwd is None:
        return list(cmd)
    return ["/bin/sh", "-c", ENTER_CWD, "sh", cwd, *cmd]


def bwrap_argv(
    bwrap: str,
    layout: SandboxLayout,
    cmd: Sequence[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    drop_to: tuple[str, int] | None = None,
    keep_caps: Sequence[str] = (),
    ctl_dir: str | None = None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The bubblewrap command that runs `cmd` isolated: read-only system folders, private
    /workspace and /tmp, fresh /proc and minimal /dev, new PID, network (loopback only), IPC, UTS
    and cgroup namespaces, no capabilities.

    `drop_to=(setpriv, uid)` is the root path: bwrap runs privileged (so it can bind any host path,
    and the mounts belong to the host's user namespace, beyond the sandbox's reach), and inside the
    jail `setpriv` turns the command into host uid `uid` with no capabilities and no_new_privs.
    Without it bwrap runs unprivileged in a new user namespace, as the calling user.

    The environment is the base one plus `env`. On the root path it reaches only `cmd`: bwrap and
    `setpriv` (which still holds capabilities) run with `PATH` alone, and `env -i` sets the rest
    after the uid has changed, so e.g. a caller's LD_PRELOAD never loads into a privileged
    process. `env=None` on the root path: `cmd` gets `PATH` only (the exec server).

    `keep_caps` (root path only) leaves those capabilities to `cmd` (the persistent jail's exec
    server, which needs CAP_SETUID/SETGID/SETPCAP to start commands as the sample's uid and
    CAP_KILL to kill them). `ctl_dir` is a host folder bound writable at `CTL_DIR` (the server's
    socket folder, which only the server's uid can enter). `seccomp_fd`: an open descriptor
    holding the seccomp program (`_seccomp.py`), applied to everything the jail runs.
    """
    args = [bwrap, "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--cap-drop", "ALL"]
    if drop_to is None:
        args += ["--unshare-user"]
    else:
        # kept only up to setpriv, whose setuid clears them: DAC_READ_SEARCH lets bwrap chdir
        # into the sample's 0700 folders, SETUID/SETGID let setpriv become the sample's uid,
        # SETPCAP lets it empty the bounding set
        caps = ("CAP_DAC_READ_SEARCH", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
        for cap in caps + tuple(c for c in keep_caps if c not in caps):
            args += ["--cap-add", cap]
    args += list(_system_binds())
    made: set[str] = set()

    # Paths under /tmp (a project cloned there, its .venv) are bound after the private /tmp, or
    # that mount would hide them.
    def _under_tmp(path: str) -> bool:
        return path == "/tmp" or path.startswith("/tmp/")

    late = [p for p in sorted(layout.ro_binds, key=len) if _under_tmp(p)]
    for path in sorted(layout.ro_binds, key=len):
        if not _under_tmp(path):
            args += _parents(path, made)
            args += ["--ro-bind", path, path]
    args += ["--proc", "/proc", *_proc_hardening(), "--dev", "/dev"]
    args += ["--bind", layout.work_dir, WORKDIR, "--bind", layout.tmp_dir, "/tmp"]
    made.add("/tmp")
    for path in late:
        args += _parents(path, made)
        args += ["--ro-bind", path, path]
    if ctl_dir is not None:
        args += ["--bind", ctl_dir, CTL_DIR]
    args += ["--remount-ro", "/"]  # the root tmpfs bwrap builds: read-only once populated
    # bwrap changes directory while it still holds capabilities and the host's /proc (its fd 3):
    # only ever into the fixed work dir; the caller's cwd is entered by ENTER_CWD, unprivileged
    args += ["--chdir", WORKDIR, "--clearenv"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    full_env = {**_BASE_ENV, **(env or {})}
    check_env(full_env)
    where = check_cwd(cwd)
    if drop_to is None:  # unprivileged bwrap: nothing privileged ever runs with this environment
        for key, value in full_env.items():
            args += ["--setenv", key, value]
        return [*args, "--", *enter_cwd(cmd, where)]
    setpriv, uid = drop_to
    args += ["--setenv", "PATH", SANDBOX_PATH, "--"]
    args += setpriv_argv(setpriv, uid, keep_caps)
    # ENTER_CWD (if any) runs right after setpriv, with PATH only, and then `env -i` and cmd
    return args + enter_cwd(list(cmd) if env is None else _with_env(cmd, full_env), where)


def setpriv_argv(setpriv: str, uid: int, keep_caps: Sequence[str] = ()) -> list[str]:
    """`setpriv` as host uid `uid` with no_new_privs and no capabilities but `keep_caps` (kept
    through the exec as ambient capabilities)."""
    keep = "".join(",+" + cap.lower().removeprefix("cap_") for cap in keep_caps)
    argv = [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", f"--inh-caps=-all{keep}"]
    if keep:
        argv.append(f"--ambient-caps=-all{keep}")
    return argv + [f"--bounding-set=-all{keep}", "--no-new-privs", "--"]


def launcher_argv(
    bwrap_cmd: Sequence[str],
    *,
    cgroup_procs: Sequence[str],
    max_processes: int,
    max_file_mb: int,
    max_open_files: int,
    address_space_mb: int | None,
) -> list[str]:
    """Wrap a bwrap command in the launcher shell that applies the cgroups and rlimits."""
    vmem_kb = 0 if address_space_mb is None else address_space_mb * 1024
    fsize_blocks = max_file_mb * 2048  # dash counts 512-byte blocks
    return [
        "/bin/sh", "-c", _LAUNCHER, "sh", *cgroup_procs, "--",
        str(max_processes), str(fsize_blocks), str(max_open_files), str(vmem_kb), *bwrap_cmd,
    ]  # fmt: skip
