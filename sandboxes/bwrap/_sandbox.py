"""The `bwrap` inspect sandbox environment: one work dir per sample, and either one long-lived
bubblewrap jail per sample running an exec server (mode="persistent") or one jail per exec."""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import secrets
import shlex
import shutil
import signal
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Literal, overload

import anyio.to_thread
from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxConnection,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    SandboxUnavailableError,
    SandboxUserUnsupportedError,
    concurrency,
    sandboxenv,
)
from pydantic import BaseModel
from typing_extensions import override

from sandboxes._live import LiveSamples

from ._cgroup import SampleCgroup, create_sample_cgroup
from ._command import (
    _BASE_ENV,
    CTL_DIR,
    LAUNCHER_FAILED,
    SandboxLayout,
    bwrap_argv,
    check_cwd,
    check_env,
    enter_cwd,
    launcher_argv,
)
from ._config import WORKDIR, BwrapConfig, config_of
from ._disk import mount_quota, unmount_all_under
from ._files import READ_SCRIPT, WRITE_SCRIPT, FileTooLarge, raise_for_file_status
from ._footprint import HostFootprint
from ._jail import FILES_FILE, FILES_SOURCE, SERVER_FILE, SERVER_SOURCE, SOCKET_NAME, PersistentJail
from ._probe import BwrapUnavailableError, bwrap_path, require_bwrap
from ._process import OutputTooLarge, run_process
from ._reaper import (
    OWNER_FILE,
    PREFIX,
    SERVER_UID_OFFSET,
    forget,
    kill_all,
    launching,
    owner_token,
    processes_of,
    reap_orphans,
    reap_orphans_settled,
    reap_stale_samples,
)
from ._seccomp import SeccompUnsupportedError, write_program
from ._trampoline import install_trampoline
from ._tree import chown_tree, remove_tree

_UID_BASE, _UID_SPAN = 1_000_000_000, SERVER_UID_OFFSET  # private per-sample host uids (root only)
# a persistent jail's exec server runs as a second private uid (the sample's + SERVER_UID_OFFSET),
# so commands cannot signal, ptrace or otherwise reach it (uids stay below 2**31)
# CAP_SETPCAP only until the server has emptied its bounding set (see _server.py)
_SERVER_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL", "CAP_DAC_READ_SEARCH")
_JAIL_PYTHON = "/usr/bin/python3"
_SECCOMP_FILE = "seccomp.bpf"
_FILE_TABLE_SHARE = 2  # a sample's processes x RLIMIT_NOFILE stays within 1/2 of fs.file-max
_MIN_OPEN_FILES = 64


def _max_parallel_execs() -> int:
    try:
        from inspect_ai.util._subprocess import max_subprocesses_context_var

        return max(1, int(max_subprocesses_context_var.get()))
    except (ImportError, LookupError, TypeError, ValueError):
        return os.cpu_count() or 1


@functools.cache
def _file_table_size() -> int | None:
    try:
        return int(Path("/proc/sys/fs/file-max").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def effective_open_files(max_open_files: int, max_processes: int) -> int:
    """RLIMIT_NOFILE for a sample: the configured value, lowered so that max_processes x it stays
    within 1/_FILE_TABLE_SHARE of the host's file table, and (without root) within our hard limit."""
    import resource

    limit = max_open_files
    table = _file_table_size()
    if table is not None:
        limit = min(limit, max(_MIN_OPEN_FILES, table // _FILE_TABLE_SHARE // max_processes))
    if os.geteuid() != 0:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
    return limit


@sandboxenv(name="bwrap")
class BwrapSandboxEnvironment(LiveSamples, SandboxEnvironment):
    """Agent commands isolated with bubblewrap: read-only system, private `/workspace` and `/tmp`,
    no network, own PID/IPC/UTS namespaces, an unprivileged uid without capabilities, and
    wall-time, memory, process and output limits. See sandboxes/README.md.
    """

    def __init__(self, config: BwrapConfig, bwrap: str) -> None:
        super().__init__()
        self.config = config
        check_env(config.env)
        self._bwrap = bwrap
        self.uid: int | None = None
        self.server_uid: int | None = None
        if os.geteuid() == 0:
            self.uid = _UID_BASE + secrets.randbelow(_UID_SPAN)
            self.server_uid = self.uid + SERVER_UID_OFFSET
        self._jail: PersistentJail | None = None
        self._setpriv = shutil.which("setpriv", path="/usr/bin:/bin")
        if self.uid is not None and self._setpriv is None:
            raise BwrapUnavailableError(
                "bwrap sandbox: `setpriv` (util-linux) is missing; it drops sandboxed commands "
                "to an unprivileged uid. Install it with `apt-get install util-linux`."
            )
        self._user_name = str(os.getuid() if self.uid is None else self.uid)
        self._oom_seen = 0
        self.cgroup: SampleCgroup | None = None
        self.disk_quota_mb: int | None = None
        """The sample's disk quota in effect (None: no quota, the harness is not root)."""
        self.open_files = effective_open_files(config.max_open_files, config.max_processes)
        """RLIMIT_NOFILE of the sample's processes (see BwrapConfig.max_open_files)."""
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX))
        self._seccomp_path: Path | None = None
        try:
            if self.uid is not None:  # everything the sample writes lands in this tmpfs
                mount_quota(self.root, size_mb=config.disk_mb)
                self.disk_quota_mb = config.disk_mb
            self._write_owner()  # first: a harness killed while copying files in leaves no orphan
            if config.seccomp:
                self._seccomp_path = self.root / _SECCOMP_FILE
                write_program(str(self._seccomp_path))
            self.layout = self._make_folders()
            if self.uid is not None:
                self.cgroup = create_sample_cgroup(
                    self.root.name, memory_mb=config.memory_mb, max_processes=config.max_processes
                )
                self._write_owner()
        except BaseException as ex:
            if self.cgroup is not None:
                self.cgroup.remove()
            unmount_all_under(self.root)
            remove_tree(self.root)
            if isinstance(ex, SeccompUnsupportedError):
                raise BwrapUnavailableError(str(ex)) from None
            if isinstance(ex, OSError) and ex.errno == errno.ENOSPC:
                raise ValueError(
                    f"bwrap sandbox: the files copied into the sample ({sorted(config.files)}) "
                    f"exceed its disk quota of {config.disk_mb} MB (BwrapConfig.disk_mb)"
                ) from None
            raise
        self._nproc = config.max_processes
        if self.uid is None:  # RLIMIT_NPROC counts all of our uid's processes, not just these
            self._nproc += len(processes_of(os.getuid()))
        self.task_name = ""
        self.track()
        if config.mode == "persistent":
            try:
                self._jail = self._start_jail()
            except BaseException:
                self.destroy()
                raise

    def _launcher(self, inner: list[str]) -> list[str]:
        return launcher_argv(
            inner,
            cgroup_procs=self.cgroup.procs_files if self.cgroup else (),
            max_processes=self._nproc,
            max_file_mb=self.config.max_file_mb,
            max_open_files=self.open_files,
            address_space_mb=None if self.cgroup else self.config.memory_mb,
        )

    def _open_seccomp(self) -> int | None:
        """A fresh descriptor on the seccomp program for one bwrap start (bwrap reads it from
        the current offset, so starts never share one)."""
        if self._seccomp_path is None:
            return None
        return os.open(self._seccomp_path, os.O_RDONLY | os.O_CLOEXEC)

    def _start_jail(self) -> PersistentJail:
        """Start this sample's long-lived jail; its main process is the exec server."""
        if not os.path.exists(_JAIL_PYTHON):
            raise BwrapUnavailableError(
                f"bwrap sandbox: mode='persistent' runs its exec server with {_JAIL_PYTHON}, "
                "which this machine lacks; install python3 or use BwrapConfig(mode='per_exec')."
            )
        ctl = self.root / "ctl"
        ctl.mkdir(mode=0o700)
        server_uid = self.server_uid if self.server_uid is not None else os.geteuid()
        os.lchown(ctl, server_uid, server_uid)
        drop_to = None
        if self.uid is not None:
            assert self._setpriv is not None and self.server_uid is not None
            drop_to = (self._setpriv, self.server_uid)
        # a root-owned copy in the server's own folder: readable by the server's uid wherever the
        # project lives, unreachable for the sample's uid
        for name, source in ((SERVER_FILE, SERVER_SOURCE), (FILES_FILE, FILES_SOURCE)):
            (ctl / name).write_text(source)
            os.chmod(ctl / name, 0o444)
        if drop_to is not None:  # a vfork instead of a fork per command (see _trampoline.py)
            install_trampoline(ctl)
        server = [_JAIL_PYTHON, "-I", "-S", f"{CTL_DIR}/{SERVER_FILE}",
                  f"{CTL_DIR}/{SOCKET_NAME}", json.dumps(self.uid)]  # fmt: skip
        seccomp_fd = self._open_seccomp()
        try:
            # no caller environment here: the server gets PATH only, each command its own env
            inner = bwrap_argv(
                self._bwrap, self.layout, server, cwd=None, env=None, drop_to=drop_to,
                keep_caps=_SERVER_CAPS if drop_to else (), ctl_dir=str(ctl),
                seccomp_fd=seccomp_fd,
            )  # fmt: skip
            return PersistentJail.start(
                self._launcher(inner), str(ctl / SOCKET_NAME), self.root / "jail.log",
                pass_fds=() if seccomp_fd is None else (seccomp_fd,),
            )  # fmt: skip
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)

    def _write_owner(self) -> None:
        owner = [owner_token(), str(self.uid if self.uid is not None else "-")]
        owner += [str(d) for d in (self.cgroup.dirs if self.cgroup else ())]
        part = self.root / (OWNER_FILE + ".part")
        part.write_text("\n".join(owner) + "\n")
        os.replace(part, self.root / OWNER_FILE)  # the reaper never reads half a pid

    def _make_folders(self) -> SandboxLayout:
        owner = os.geteuid() if self.uid is None else self.uid
        work, tmp = self.root / "workspace", self.root / "tmp"
        work.mkdir(mode=0o700)
        tmp.mkdir(mode=0o700)
        self._copy_in(work)
        chown_tree(work, owner)
        os.lchown(tmp, owner, owner)
        return SandboxLayout(str(work), str(tmp), tuple(self.config.ro_binds))

    # ---------------------------------------------------------------- lifecycle

    @override
    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        config_of(config)  # reject a bad config before any sample starts
        require_bwrap()
        await anyio.to_thread.run_sync(reap_stale_samples)

    @override
    @classmethod
    async def sample_init(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        metadata: dict[str, str],
    ) -> dict[str, SandboxEnvironment]:
        require_bwrap()
        path = bwrap_path()
        assert path is not None
        environment = await anyio.to_thread.run_sync(cls, config_of(config), path)
        environment.task_name = task_name
        return {"default": environment}

    @classmethod
    def after_task(cls) -> None:
        """Processes of this task's samples that escaped their jail's kill (LiveSamples)."""
        reap_orphans_settled()

    @override
    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        """`inspect sandbox cleanup bwrap`: remove what dead harness processes left behind."""
        await anyio.to_thread.run_sync(reap_stale_samples)

    @override
    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return BwrapConfig(**config)

    def host_footprint(self) -> HostFootprint:
        """What this sample holds on the host (folder, uids, cgroups), for leak accounting."""
        uids = tuple(u for u in (self.uid, self.server_uid) if u is not None)
        return HostFootprint(self.root, uids, self.cgroup.dirs if self.cgroup else ())

    def destroy(self) -> None:
        """Kill whatever still runs for this sample, detach its disk, delete its folders and
        cgroups. Never fails on what the sample built (see `_tree.remove_tree`)."""
        self.untrack()
        if self._jail is not None:
            self._jail.kill()
        self._kill_leftovers()
        unmount_all_under(self.root)
        if self.cgroup is not None:
            self.cgroup.remove()
        report = remove_tree(self.root)
        if not report.ok:
            warnings.warn(
                f"bwrap sandbox: could not remove all of {self.root}: {report.failures[:3]}; "
                "`inspect sandbox cleanup bwrap` retries once this harness has exited",
                RuntimeWarning,
                stacklevel=2,
            )
        reap_orphans_settled()

    def _copy_in(self, work: Path) -> None:
        for target, source in self.config.files.items():
            rel = target
            if target.startswith("/"):
                if not (target + "/").startswith(WORKDIR + "/"):
                    raise ValueError(f"bwrap config files: {target!r} is not under {WORKDIR}")
                rel = os.path.relpath(target, WORKDIR)
            dest = (work / rel).resolve()
            if dest != work and work not in dest.parents:
                raise ValueError(f"bwrap config files: {target!r} leaves the work dir")
            dest.parent.mkdir(parents=True, exist_ok=True)
            if Path(source).is_dir():
                shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True)
            else:
                shutil.copy2(source, dest)

    def _kill_leftovers(self, wait_s: float = 2.0) -> None:
        """SIGKILL every process of this sample (its cgroup, or its private uid) until none is left."""
        deadline = time.monotonic() + wait_s
        while True:
            pids: set[int] = set()
            if self.cgroup is not None:
                pids |= self.cgroup.pids()
            for uid in (self.uid, self.server_uid):
                if uid is not None:
                    pids |= set(processes_of(uid))
            if not pids or time.monotonic() > deadline:
                return
            kill_all(pids)
            time.sleep(0.01)

    # ---------------------------------------------------------------- exec

    def _argv(
        self,
        cmd: list[str],
        cwd: str | None,
        env: dict[str, str] | None,
        seccomp_fd: int | None,
    ) -> list[str]:
        drop_to = None
        if self.uid is not None:
            assert self._setpriv is not None
            drop_to = (self._setpriv, self.uid)
        inner = bwrap_argv(
            self._bwrap, self.layout, cmd, cwd=cwd, env={**self.config.env, **(env or {})},
            drop_to=drop_to, seccomp_fd=seccomp_fd,
        )  # fmt: skip
        return self._launcher(inner)

    async def _run(
        self,
        cmd: list[str],
        *,
        input: str | bytes | None,
        cwd: str | None,
        env: dict[str, str] | None,
        timeout: int | None,
        output_cap: int,
        use_concurrency: bool,
    ) -> tuple[int, bytes, bytes]:
        data = input.encode("utf-8") if isinstance(input, str) else input
        limit = timeout if timeout is not None else self.config.timeout_s
        gate: contextlib.AbstractAsyncContextManager[Any] = contextlib.nullcontext()
        if use_concurrency:
            gate = concurrency("bwrap-exec", _max_parallel_execs(), visible=False)
        if env:
            check_env(env)
        where = check_cwd(cwd)  # a clear error before anything runs
        if self._jail is not None:
            async with gate:
                try:
                    done = await self._jail.request(
                        enter_cwd(cmd, where), cwd=WORKDIR, input=data, timeout=limit,
                        env={**_BASE_ENV, **self.config.env, **(env or {})},
                        output_cap=output_cap,
                    )  # fmt: skip
                except TimeoutError:  # the server has killed the command's process tree
                    raise TimeoutError(
                        f"bwrap sandbox: command timed out after {limit}s and was killed"
                    ) from None
            return done.returncode, done.stdout, done.stderr
        async with gate:
            seccomp_fd = self._open_seccomp()
            spawned: list[int] = []
            try:
                argv = self._argv(cmd, cwd, env, seccomp_fd)
                with launching() as register:

                    def started(pid: int) -> None:
                        register(pid)
                        spawned.append(pid)
                        if seccomp_fd is not None:
                            os.close(seccomp_fd)

                    done = await run_process(
                        argv, input=data, timeout=limit, output_cap=output_cap,
                        pass_fds=() if seccomp_fd is None else (seccomp_fd,), on_spawn=started,
                    )  # fmt: skip
            except TimeoutError:
                await anyio.to_thread.run_sync(self._kill_leftovers)
                raise TimeoutError(
                    f"bwrap sandbox: command timed out after {limit}s and was killed"
                ) from None
            except OutputTooLarge:
                await anyio.to_thread.run_sync(self._kill_leftovers)
                raise
            finally:
                if seccomp_fd is not None and not spawned:
                    os.close(seccomp_fd)
                for pid in spawned:
                    forget(pid)
                reap_orphans()
        if done.returncode == 125 and done.stderr.startswith(LAUNCHER_FAILED.encode()):
            raise SandboxUnavailableError(
                f"bwrap sandbox could not start the command: {done.stderr.decode(errors='replace')}"
            )
        return done.returncode, done.stdout, done.stderr

    @override
    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        if user is not None and user != self._user_name:
            raise SandboxUserUnsupportedError(
                f"bwrap sandbox runs commands as one unprivileged user ({self._user_name}); "
                f"cannot run as {user!r}"
            )
        cap = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
        try:
            rc, out, err = await self._run(
                cmd, input=input, cwd=cwd, env=env, timeout=timeout,
                output_cap=cap, use_concurrency=concurrency,
            )  # fmt: skip
        except OutputTooLarge as ex:
            raise OutputLimitExceededError(
                limit_str=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR,
                truncated_output=ex.head.decode("utf-8", errors="replace"),
            ) from None
        stderr = err.decode("utf-8", errors="replace")
        if rc == 128 + signal.SIGKILL and self.cgroup is not None:
            kills = self.cgroup.oom_kills()
            if kills > self._oom_seen:
                self._oom_seen = kills
                stderr += f"\n[bwrap sandbox: killed, memory limit of {self.config.memory_mb} MB]"
        return ExecResult(
            success=rc == 0,
            returncode=rc,
            stdout=out.decode("utf-8", errors="replace"),
            stderr=stderr,
        )

    # ---------------------------------------------------------------- files

    async def _jail_file(
        self, op: str, file: str, data: bytes, cap: int
    ) -> tuple[int, bytes, bytes]:
        """A read or write done by the persistent jail's file helper (see _server.py)."""
        assert self._jail is not None
        async with concurrency("bwrap-exec", _max_parallel_execs(), visible=False):
            done = await self._jail.file(
                op, file, data=data, cap=cap, timeout=self.config.timeout_s
            )
        return done.returncode, done.stdout, done.stderr

    @override
    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        if self._jail is not None:  # no process of the sample ever holds the contents
            rc, _, err = await self._jail_file("write", file, data, 0)
            raise_for_file_status(rc, file, err.decode("utf-8", errors="replace"))
            return
        rc, _, err = await self._run(
            ["/bin/sh", "-c", WRITE_SCRIPT, "sh", file], input=data, cwd=None, env=None,
            timeout=self.config.timeout_s, output_cap=1 << 16, use_concurrency=True,
        )  # fmt: skip
        raise_for_file_status(rc, file, err.decode("utf-8", errors="replace"))

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    @override
    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
        too_big = OutputLimitExceededError(
            limit_str=SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, truncated_output=None
        )
        try:
            if self._jail is not None:  # read by the file helper, out of the sample's reach
                rc, out, err = await self._jail_file("read", file, b"", limit)
            else:
                rc, out, err = await self._run(
                    ["/bin/sh", "-c", READ_SCRIPT, "sh", file, str(limit)], input=None, cwd=None,
                    env=None, timeout=self.config.timeout_s, output_cap=limit,
                    use_concurrency=True,
                )  # fmt: skip
            raise_for_file_status(rc, file, err.decode("utf-8", errors="replace"))
        except (OutputTooLarge, FileTooLarge):
            raise too_big from None
        return out.decode("utf-8") if text else out

    # ---------------------------------------------------------------- misc

    @override
    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        fd = 9  # the shell that runs the command opens the program there
        argv = self._argv(["/bin/bash", "-i"], None, None, fd if self._seccomp_path else None)
        command = shlex.join(argv)
        if self._seccomp_path is not None:
            command += f" {fd}<{shlex.quote(str(self._seccomp_path))}"
        return SandboxConnection(type="bwrap", command=command)

    @override
    def default_polling_interval(self) -> float:
        return 0.2
