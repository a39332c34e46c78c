"""Per-sample configuration of the `docker_api` sandbox, and what it reads from compose files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

WORKDIR = "/workspace"
"""The sample's private writable work dir inside the container (the exec cwd and `$HOME`)."""


class DockerConfig(BaseModel, frozen=True):
    """Limits and contents of one container sandbox (one container per sample).

    The same names and meanings as `sandboxes.bwrap.BwrapConfig` where both have the limit, so a
    task's limits carry over between the two providers.
    """

    model_config = ConfigDict(extra="forbid")

    image: str | None = None
    """Image to run; None: the project's sandbox image, built locally on first use
    (`sandboxes.docker.ensure_sandbox_image`). It must have `/usr/bin/python3` (the exec
    server) and `setpriv` (util-linux) and should have no `/root` or `/home` contents the sample must not see."""

    memory_mb: int = Field(default=2048, gt=0)
    """Memory limit of the whole container (its memory cgroup; swap included, so no swap).
    The tmpfs work dir and /tmp count against it."""

    timeout_s: int = Field(default=600, gt=0)
    """Wall-time limit of an exec when the caller gives no `timeout`."""

    max_processes: int = Field(default=256, gt=0)
    """Process/thread limit of the container (pids cgroup)."""

    cpus: float = Field(default=1.0, gt=0)
    """CPU share of the container (CFS quota, in CPUs)."""

    max_file_mb: int = Field(default=1024, gt=0)
    """Largest file a process may write (RLIMIT_FSIZE)."""

    disk_mb: int = Field(default=2048, gt=0)
    """All the container's writable space together: the tmpfs mounts `/workspace` (the rest),
    `/tmp` (a quarter) and `/dev/shm` (a thirty-second), sized from it (`disk_split`); nothing
    else is writable. tmpfs pages are memory: what the sample writes also counts against
    `memory_mb`."""

    max_open_files: int = Field(default=1024, gt=0)
    """Open files per process (RLIMIT_NOFILE)."""

    seccomp: bool = True
    """The project's seccomp profile (Docker's default semantics plus the bwrap sandbox's deny-list:
    keyrings, namespaces, mounts, ptrace, bpf, io_uring, vsock, ...). False: Docker's own default
    profile. `seccomp_unconfined=True` removes seccomp entirely (debugging and tests only)."""

    seccomp_unconfined: bool = False
    """No seccomp filter at all (`seccomp=unconfined`); for the escape suite's control runs."""

    files: dict[str, str] = Field(default_factory=dict)
    """Host files or folders copied into the work dir at sample start: {sandbox path: host path}."""

    ro_binds: list[str] = Field(default_factory=list)
    """Host paths bind-mounted read-only at the same path (e.g. a virtual environment)."""

    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables for every exec."""

    def __hash__(self) -> int:  # inspect hashes sandbox specs; dict/list fields are not hashable
        return hash(self.model_dump_json())


def config_of(config: object) -> DockerConfig:
    """The DockerConfig for inspect's `config` argument: None, a DockerConfig, a dict, another
    pydantic model with the same fields (a `BwrapConfig`: its bwrap-only fields are dropped), or
    the path of a compose file (its `default` service's limits, see `from_compose`)."""
    if config is None or config == "":
        return DockerConfig()
    if isinstance(config, DockerConfig):
        return config
    if isinstance(config, dict):
        return DockerConfig(**config)
    if isinstance(config, BaseModel):
        known = set(DockerConfig.model_fields)
        return DockerConfig(**{k: v for k, v in config.model_dump().items() if k in known})
    if isinstance(config, str | Path):
        return from_compose(Path(config))
    raise TypeError(
        f"docker_api sandbox config must be a DockerConfig, a dict or a compose file path, not "
        f"{type(config).__name__} ({config!r})"
    )


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_FACTOR_MB = {"": 1 / (1024 * 1024), "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}


def _megabytes(value: Any, where: str) -> int:
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f"{where}: cannot read size {value!r} (e.g. 2g, 512m)")
    return max(1, int(float(match.group(1)) * _FACTOR_MB[match.group(2).lower()]))


def from_compose(path: Path) -> DockerConfig:
    """The limits of a compose file's default service (`x-default: true`, else the one named
    `default`, else the only one) as a DockerConfig: `mem_limit`, `pids_limit`, `cpus`,
    `environment`, and the sizes of its `/workspace` and `/tmp` tmpfs mounts (together: `disk_mb`). Its `image`/`build` are for inspect's
    compose-based `docker` sandbox; this provider always runs its own locally built image unless
    the service sets `x-docker-api-image`. Network, root file system, user and capabilities are
    this provider's fixed policy (none, read-only, a private uid, none), whatever the file says."""
    import yaml

    if not path.is_file():
        raise FileNotFoundError(f"docker_api sandbox: compose file {path} does not exist")
    data = yaml.safe_load(path.read_text()) or {}
    services = data.get("services") or {}
    if not services:
        raise ValueError(f"{path}: no services")
    chosen = [s for s in services.values() if isinstance(s, dict) and s.get("x-default")]
    service = chosen[0] if chosen else services.get("default") or next(iter(services.values()))
    values: dict[str, Any] = {}
    if "mem_limit" in service:
        values["memory_mb"] = _megabytes(service["mem_limit"], f"{path}: mem_limit")
    if "pids_limit" in service:
        values["max_processes"] = int(service["pids_limit"])
    if "cpus" in service:
        values["cpus"] = float(service["cpus"])
    if "x-docker-api-image" in service:
        values["image"] = str(service["x-docker-api-image"])
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env if "=" in item)
    if env:
        values["env"] = {str(k): str(v) for k, v in env.items()}
    disk = 0
    for mount in service.get("tmpfs") or []:
        target, _, options = str(mount).partition(":")
        for option in options.split(","):
            if target in (WORKDIR, "/tmp") and option.startswith("size="):
                disk += _megabytes(option[5:], f"{path}: tmpfs {target}")
    if disk:
        values["disk_mb"] = disk
    return DockerConfig(**values)
