"""Per-sample configuration of the bwrap sandbox (settable from `Task(sandbox=("bwrap", cfg))`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

WORKDIR = "/workspace"
"""Where the sample's private writable work dir appears inside the sandbox (and the exec cwd)."""


class BwrapConfig(BaseModel, frozen=True):
    """Limits and contents of one bwrap sandbox.

    The work dir (`/workspace`) and `/tmp` are private per sample and persist between execs of
    that sample; `mode` says whether the jail itself does too.
    """

    model_config = ConfigDict(extra="forbid")

    memory_mb: int = Field(default=2048, gt=0)
    """Memory limit: per sample (memory cgroup) when cgroups are usable, else per process (RLIMIT_AS)."""

    timeout_s: int = Field(default=600, gt=0)
    """Wall-time limit of an exec when the caller gives no `timeout`."""

    max_processes: int = Field(default=256, gt=0)
    """Process/thread limit (pids cgroup and RLIMIT_NPROC of the sample's private uid)."""

    max_file_mb: int = Field(default=1024, gt=0)
    """Largest file a sandbox process may write (RLIMIT_FSIZE)."""

    disk_mb: int = Field(default=2048, gt=0)
    """Disk quota of the sample: everything it writes to `/workspace` and `/tmp` together (a
    tmpfs of this size; harness as root only, like the cgroups). tmpfs pages are memory, so what
    the sample writes also counts against `memory_mb`."""

    max_open_files: int = Field(default=1024, gt=0)
    """Open files per process (RLIMIT_NOFILE). Lowered at sample start where needed so that
    `max_processes` × this stays within half of the host's file table (fs.file-max)."""

    seccomp: bool = True
    """Apply the seccomp deny-list (keyrings, namespaces, mounts, ptrace, bpf, ...; see
    `sandboxes/README.md`) to everything the sandbox runs."""

    files: dict[str, str] = Field(default_factory=dict)
    """Host files or folders copied into the work dir at sample start: {sandbox path: host path}.
    Relative sandbox paths are relative to the work dir; absolute ones must lie under it."""

    ro_binds: list[str] = Field(default_factory=list)
    """Extra host paths bound read-only at the same path (e.g. a virtual environment)."""

    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables for every exec (the environment is otherwise cleared)."""

    mode: Literal["persistent", "per_exec"] = "persistent"
    """"persistent": one long-lived jail per sample, started in sample_init, whose exec server runs
    each command (one round trip per exec; background processes survive between execs).
    "per_exec": a fresh jail for every exec (nothing outlives its exec)."""

    def __hash__(self) -> int:  # inspect hashes sandbox specs; dict/list fields are not hashable
        return hash(self.model_dump_json())


def config_of(config: object) -> BwrapConfig:
    """The BwrapConfig for inspect's `config` argument (None, a BwrapConfig or a dict)."""
    if config is None or config == "":
        return BwrapConfig()
    if isinstance(config, BwrapConfig):
        return config
    if isinstance(config, dict):
        return BwrapConfig(**config)
    if isinstance(config, BaseModel):
        return BwrapConfig(**config.model_dump())
    raise TypeError(
        f"bwrap sandbox config must be a BwrapConfig or dict, not {type(config).__name__} "
        f"({config!r}); config files are not supported by this provider"
    )
