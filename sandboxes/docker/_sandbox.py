"""The `docker_api` inspect sandbox environment: one container per sample on the Docker engine API.

Each sample gets a container from the locally built sandbox image with no network, a read-only
root, private tmpfs `/workspace` and `/tmp` and a small `/dev/shm` (together `disk_mb`), a
read-only `/dev/mqueue`, memory/pids/CPU/file-size/open-file limits, no-new-privileges and the
project's seccomp profile. Its commands run as a private unprivileged uid, started by the
container's exec server (`_server.py`, run by the engine as the container's root with only
CAP_SETUID/SETGID/KILL), whose engine attach streams are the only way results come back
(`_channel.py`): no process of the sample can reach them. File reads and writes resolve their
paths as the sample's uid (so a symlink the sample planted resolves inside the container, with
the sample's permissions).
"""

from __future__ import annotations

import contextlib
import errno as errno_module
import os
import secrets
import threading
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
from sandboxes.bwrap import NotRegularFileError

from ._channel import ChannelPool, SupervisorError
from ._config import WORKDIR, DockerConfig, config_of
from ._engine import own_containers, owner_labels, reap_stale_containers, require_docker
from ._images import ensure_sandbox_image
from ._seccomp import seccomp_profile

PROVIDER = "docker_api"
_UID_BASE, _UID_SPAN = 1_000_000_000, 1_000_000_000
# The container's user is root, so that an engine exec as root (the exec server) gets the
# capabilities below (the engine gives an exec effective capabilities only where the container's
# user is root); its idle process drops to nobody with no capabilities at all. Only the init
# (docker-init, reaping orphans) and the exec servers stay root; the sample can signal neither.
_CONTAINER_USER = "0:0"
_IDLE = [
    "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
    "--bounding-set=-all", "sleep", "infinity",
]  # fmt: skip
# Capabilities of the container's root, i.e. of the exec server alone (the sample's processes run
# as another uid with none, under no-new-privileges): start commands as the sample's uid, kill
# their trees; SETPCAP only to empty the server's bounding set at its start.
_SERVER_CAPS = ["SETUID", "SETGID", "KILL", "SETPCAP"]
_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_HOST_GRACE_S = 60.0  # the host's deadline beyond the supervisor's own
# Docker's defaults (engine 20.10+) plus /proc/key-users (the host's per-uid key quotas).
MASKED_PATHS = (
    "/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/key-users",
    "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
    "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
)  # fmt: skip
# Docker's read-only defaults, plus /proc itself (as in the bwrap sandbox: nothing under /proc is
# writable, not even the sample's own /proc/self files) and /dev/mqueue (POSIX message queues:
# kernel memory outside disk_mb).
READONLY_PATHS = (
    "/proc", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", "/dev/mqueue",
)  # fmt: skip


def disk_split(disk_mb: int) -> dict[str, int]:
    """The container's writable places and their sizes in KiB, which add up to `disk_mb`:
    `/tmp` a quarter, `/dev/shm` a thirty-second (64 MiB at the default 2048), `/workspace` the
    rest. Separate tmpfs mounts cannot share one quota, so each is sized from the one limit."""
    total = disk_mb * 1024
    tmp, shm = max(64, total // 4), max(64, total // 32)
    return {WORKDIR: total - tmp - shm, "/tmp": tmp, "/dev/shm": shm}


def _exec_slots() -> int:
    return max(4, 2 * (os.cpu_count() or 1))


def _raise_for(header: dict[str, Any], file: str) -> None:
    status = header.get("status")
    if status == "ok":
        return
    message = str(header.get("message", status))
    if status == "not_regular":
        raise NotRegularFileError(file, str(header.get("kind", "")))
    if status == "too_large":
        raise OutputLimitExceededError(
            limit_str=SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, truncated_output=None
        )
    name = str(header.get("errno", "EIO"))
    code = getattr(errno_module, name, errno_module.EIO)
    kind: type[OSError] = OSError
    if code == errno_module.ENOENT:
        kind = FileNotFoundError
    elif code in (errno_module.EACCES, errno_module.EPERM, errno_module.EROFS):
        kind = PermissionError
    elif code == errno_module.EISDIR:
        kind = IsADirectoryError
    elif code == errno_module.ENOTDIR:
        kind = NotADirectoryError
    raise kind(code, message, file)


@sandboxenv(name=PROVIDER)
class DockerSandboxEnvironment(LiveSamples, SandboxEnvironment):
    """One container per sample (see the module docstring and sandboxes/README.md)."""

    def __init__(
        self, config: DockerConfig, container_id: str, uid: int, image: str, name: str = ""
    ) -> None:
        super().__init__()
        self.config = config
        self.container_id = container_id
        self.container_name = name
        """The container's name (`icml26-sbx-<hex>`): what host-side accounting looks it up by."""
        self.uid = uid
        self.image = image
        self.task_name = ""
        self._user = f"{uid}:{uid}"
        self._channels = ChannelPool(container_id, uid, WORKDIR)
        self.track()

    # ---------------------------------------------------------------- lifecycle

    @classmethod
    def create(cls, config: DockerConfig, task_name: str = "") -> DockerSandboxEnvironment:
        """Start the sample's container (blocking; sample_init runs it in a thread)."""
        from docker.types import Ulimit

        client = require_docker()
        api = client.api
        image = config.image or ensure_sandbox_image()
        uid = _UID_BASE + secrets.randbelow(_UID_SPAN)
        sizes = disk_split(config.disk_mb)
        tmpfs = {
            path: f"rw,exec,nosuid,nodev,size={sizes[path]}k,mode=0700,uid={uid},gid={uid}"
            for path in (WORKDIR, "/tmp")
        }
        security = ["no-new-privileges:true"]
        if config.seccomp_unconfined:
            security.append("seccomp=unconfined")
        elif config.seccomp:
            security.append(f"seccomp={seccomp_profile()}")
        file_bytes = config.max_file_mb * 1024 * 1024
        host_config = api.create_host_config(
            network_mode="none",
            read_only=True,
            mem_limit=f"{config.memory_mb}m",
            memswap_limit=f"{config.memory_mb}m",
            pids_limit=config.max_processes,
            nano_cpus=int(config.cpus * 1e9),
            cap_drop=["ALL"],
            cap_add=_SERVER_CAPS,
            security_opt=security,
            tmpfs=tmpfs,
            shm_size=sizes["/dev/shm"] * 1024,
            ulimits=[
                Ulimit(name="nofile", soft=config.max_open_files, hard=config.max_open_files),
                Ulimit(name="fsize", soft=file_bytes, hard=file_bytes),
                Ulimit(name="core", soft=0, hard=0),
                # POSIX message queues are kernel memory outside disk_mb: none (mq_open reaches
                # the IPC namespace's own queue mount, whatever /dev/mqueue's mount says)
                Ulimit(name="msgqueue", soft=0, hard=0),
            ],
            init=True,
            ipc_mode="private",
            binds={path: {"bind": path, "mode": "ro"} for path in config.ro_binds},
        )
        host_config["MaskedPaths"] = list(MASKED_PATHS)
        host_config["ReadonlyPaths"] = list(READONLY_PATHS)
        name = f"icml26-sbx-{secrets.token_hex(6)}"
        with _STARTING:
            return cls._start(api, config, image, uid, host_config, name, task_name)

    @classmethod
    def _start(
        cls,
        api: Any,
        config: DockerConfig,
        image: str,
        uid: int,
        host_config: Any,
        name: str,
        task_name: str,
    ) -> DockerSandboxEnvironment:
        created = api.create_container(
            image,
            command=_IDLE,
            user=_CONTAINER_USER,
            working_dir=WORKDIR,
            environment={"HOME": WORKDIR},
            hostname="sandbox",
            network_disabled=True,
            labels=owner_labels("sandbox", task=task_name[:200]),
            host_config=host_config,
            name=name,
        )
        container_id = created["Id"]
        try:
            api.start(container_id)
        except BaseException:
            with contextlib.suppress(Exception):
                api.remove_container(container_id, force=True, v=True)
            raise
        environment = cls(config, container_id, uid, image, name)
        environment.task_name = task_name
        return environment

    @classmethod
    def destroy_all_now(cls) -> None:
        """At exit: every tracked sample, then every container this process labelled as its own
        that no sample tracks yet (an interrupted start: created, not yet handed over), once the
        starts in flight have returned (at most 10 s; none may begin from here)."""
        _STARTING.close_and_wait(10.0)
        super().destroy_all_now()
        with contextlib.suppress(Exception):
            api = require_docker().api
            for summary in own_containers("sandbox"):
                with contextlib.suppress(Exception):
                    api.remove_container(summary["Id"], force=True, v=True)

    @override
    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        resolved = config_of(config)  # reject a bad config before any sample starts
        require_docker()
        await anyio.to_thread.run_sync(reap_stale_containers, "sandbox")
        if resolved.image is None:
            await anyio.to_thread.run_sync(ensure_sandbox_image)

    @override
    @classmethod
    async def sample_init(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        metadata: dict[str, str],
    ) -> dict[str, SandboxEnvironment]:
        resolved = config_of(config)
        environment = await anyio.to_thread.run_sync(cls.create, resolved, task_name)
        try:
            await environment._channels.warm()
            await environment.copy_in()
        except BaseException:
            await anyio.to_thread.run_sync(environment.destroy)
            raise
        return {"default": environment}

    @override
    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        """`inspect sandbox cleanup docker_api [id]`: one container, or every container whose
        harness process has died."""
        if id:
            api = require_docker().api
            await anyio.to_thread.run_sync(
                lambda: api.remove_container(id, force=True, v=True)
            )  # fmt: skip
        else:
            await anyio.to_thread.run_sync(reap_stale_containers, None)

    @override
    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return DockerConfig(**config)

    def destroy(self) -> None:
        """Remove the container (SIGKILL to everything in it, its tmpfs mounts go with it)."""
        import docker.errors

        self.untrack()
        self._channels.close()
        try:
            require_docker().api.remove_container(self.container_id, force=True, v=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as ex:
            if "already in progress" not in str(ex):
                raise

    async def copy_in(self) -> None:
        """Copy `config.files` (host files or folders) into the work dir, as the sample's uid."""
        for target, source in self.config.files.items():
            path = Path(source)
            if path.is_dir():
                for item in sorted(path.rglob("*")):
                    if item.is_file():
                        rel = item.relative_to(path).as_posix()
                        await self.write_file(f"{target.rstrip('/')}/{rel}", item.read_bytes())
            else:
                await self.write_file(target, path.read_bytes())

    # ---------------------------------------------------------------- calls

    async def _call(
        self, request: dict[str, Any], payload: bytes, *, timeout: float, reply_cap: int
    ) -> Any:
        import docker.errors

        try:
            return await self._channels.call(
                request, payload, reply_cap=reply_cap, host_timeout=timeout + _HOST_GRACE_S
            )
        except docker.errors.NotFound as ex:
            raise SandboxUnavailableError(
                f"docker_api sandbox: this sample's container {self.container_id[:12]} is gone "
                f"({ex.explanation}); other samples are unaffected"
            ) from None
        except docker.errors.APIError as ex:
            if ex.response is not None and ex.response.status_code == 409:  # not running
                raise SandboxUnavailableError(
                    f"docker_api sandbox: this sample's container {self.container_id[:12]} is "
                    f"not running ({ex.explanation}); other samples are unaffected"
                ) from None
            raise

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
        if user is not None and user not in (self._user, str(self.uid)):
            raise SandboxUserUnsupportedError(
                f"docker_api sandbox runs commands as one unprivileged user ({self.uid}); "
                f"cannot run as {user!r}"
            )
        if not cmd:
            raise ValueError("exec needs a command")
        limit = timeout if timeout is not None else self.config.timeout_s
        workdir = WORKDIR if cwd is None else cwd if cwd.startswith("/") else f"{WORKDIR}/{cwd}"
        environment = {"PATH": _PATH, "HOME": WORKDIR, "LANG": "C.UTF-8"}
        environment.update(self.config.env)
        environment.update(env or {})
        cap = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
        request = {
            "op": "exec",
            "argv": list(cmd),
            "cwd": workdir,
            "env": environment,
            "timeout": limit,
            "cap": cap,
        }
        data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
        try:
            if concurrency:
                async with _gate():
                    reply = await self._call(request, data, timeout=limit, reply_cap=2 * cap + 64)
            else:
                reply = await self._call(request, data, timeout=limit, reply_cap=2 * cap + 64)
        except SupervisorError as ex:
            # The server died (the container ran out of memory, or is being removed): the
            # command's fate is unknown, reported as a failure of that command only.
            return ExecResult(False, 137, "", f"[docker_api sandbox: {ex}]")
        status = reply.header["status"]
        if status == "timeout":
            raise TimeoutError(f"Command timed out after {limit} seconds: {cmd!r}")
        if status == "overflow":
            raise OutputLimitExceededError(
                limit_str=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR,
                truncated_output=reply.out[:cap].decode("utf-8", errors="replace"),
            )
        rc = int(reply.header["returncode"])
        return ExecResult(
            success=rc == 0,
            returncode=rc,
            stdout=reply.out.decode("utf-8", errors="replace"),
            stderr=reply.err.decode("utf-8", errors="replace"),
        )

    @override
    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        try:
            async with _gate():
                reply = await self._call(
                    {"op": "write", "path": file}, data,
                    timeout=self.config.timeout_s, reply_cap=1 << 16,
                )  # fmt: skip
        except SupervisorError as ex:
            raise OSError(errno_module.EIO, str(ex), file) from None
        _raise_for(reply.header, file)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    @override
    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
        try:
            async with _gate():
                reply = await self._call(
                    {"op": "read", "path": file, "cap": limit}, b"",
                    timeout=self.config.timeout_s, reply_cap=limit + (1 << 16),
                )  # fmt: skip
        except SupervisorError as ex:
            raise OSError(errno_module.EIO, str(ex), file) from None
        _raise_for(reply.header, file)
        return reply.out.decode("utf-8") if text else reply.out

    @override
    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        return SandboxConnection(
            type=PROVIDER,
            command=f"docker exec -it --user {self._user} -w {WORKDIR} {self.container_id} bash",
            container=self.container_id,
        )

    @override
    def default_polling_interval(self) -> float:
        return 0.2


class _InFlight:
    """How many container starts are running (in threads), and a wait until there are none.

    Once closed (the exit sweep has begun) no start may begin: a worker thread still preparing
    one when the process ends would otherwise create its container after the sweep listed
    them, and it would outlive the process (seen under load: a second Ctrl-C while a wave of
    samples was starting left four)."""

    def __init__(self) -> None:
        self._count = 0
        self._closed = False
        self._idle = threading.Condition()

    def __enter__(self) -> None:
        with self._idle:
            if self._closed:
                raise SandboxUnavailableError(
                    "docker_api sandbox: the process is ending; no new container is started"
                )
            self._count += 1

    def __exit__(self, *exc: object) -> None:
        with self._idle:
            self._count -= 1
            self._idle.notify_all()

    def close_and_wait(self, timeout: float) -> bool:
        """Refuse new starts; wait (at most `timeout` s) for those running to return."""
        with self._idle:
            self._closed = True
            return self._idle.wait_for(lambda: self._count == 0, timeout=timeout)


_STARTING = _InFlight()


def _gate() -> Any:
    return concurrency(PROVIDER, _exec_slots())
