"""Leaks after a run, counted from the host side: what each sample's sandbox held on the host
(recorded when the sample starts) and what of it is still there once the samples are done.

- processes: processes still running that carry one of the run's tags (every command of the task
  runs with `AGENT_STRESS_TAG` set), or that run as one of a bwrap sample's private uids or sit in
  its cgroups;
- zombies: the same, dead but unreaped, plus zombie children of the harness process itself (the
  `[bwrap] <defunct>` kind);
- cgroups, mounts, work_dirs: a bwrap sample's cgroup directories, mounts under its folder, and
  the folder; for `local`, the sample's temporary directory;
- containers: the sample's docker container still present (sandbox=docker only), looked up on
  the engine by the name the project's `docker_api` sandbox gives it (`container_name`). A docker
  sandbox that does not tell its container's name (inspect's compose-based `docker`) leaves
  `containers_measured` false and the count is reported as not measured (nan), never as 0.

After counting, `kill_tagged` SIGKILLs whatever tagged process is left, so a run that leaked
(e.g. with sandbox=local, which has no isolation) still leaves the host clean.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tasks.agent_stress.dataset import TAG_ENV

LEAK_KINDS = ("processes", "zombies", "cgroups", "mounts", "work_dirs", "containers")


@dataclass
class SampleFootprint:
    """What one sample's sandbox holds on the host."""

    sandbox: str
    tag: str
    bwrap: Any = None  # sandboxes.bwrap.HostFootprint
    folder: str | None = None  # local: the sample's temporary directory
    containers: list[str] = field(default_factory=list)

    @property
    def containers_measured(self) -> bool:
        """Whether this sample's containers (if any) are known: always, except for a docker
        sandbox that did not name them."""
        return self.sandbox != "docker" or bool(self.containers)


class FootprintRegistry:
    """Footprints of the samples of one run (every epoch), by sample id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_sample: dict[str, list[SampleFootprint]] = {}

    def add(self, sample_id: str, footprint: SampleFootprint) -> None:
        with self._lock:
            self._by_sample.setdefault(str(sample_id), []).append(footprint)

    def of_samples(self, sample_ids: list[str]) -> list[SampleFootprint]:
        with self._lock:
            return [fp for sid in dict.fromkeys(sample_ids) for fp in self._by_sample.get(sid, [])]


_REGISTRIES: dict[str, FootprintRegistry] = {}


def registry_for(run_tag: str) -> FootprintRegistry:
    """The footprint registry of one run (process-wide, by the run's tag)."""
    return _REGISTRIES.setdefault(run_tag, FootprintRegistry())


def footprint_of(environment: Any, sandbox_kind: str, tag: str) -> SampleFootprint:
    """The footprint of a sample's sandbox environment (any kind; what is known of it)."""
    footprint = SampleFootprint(sandbox=sandbox_kind, tag=tag)
    # inspect hands a sample its environments wrapped in an event-recording proxy that has none
    # of the provider's own attributes: look at the provider's environment itself
    from inspect_ai.util import SandboxEnvironment

    if isinstance(environment, SandboxEnvironment):
        # as_type takes the abstract base: inspect's API, which mypy cannot see is fine here.
        environment = environment.as_type(SandboxEnvironment)  # type: ignore[type-abstract]
    host_footprint = getattr(environment, "host_footprint", None)
    if callable(host_footprint):  # the bwrap sandbox
        footprint.bwrap = host_footprint()
    name = getattr(environment, "container_name", None)  # the docker_api sandbox
    if isinstance(name, str) and name:
        footprint.containers = [name]
    directory = getattr(environment, "directory", None)  # inspect's local sandbox
    folder = getattr(directory, "name", None)
    if isinstance(folder, str):
        footprint.folder = folder
    return footprint


def _environ_tags(prefix: str) -> dict[int, tuple[str, bool]]:
    """{pid: (tag, zombie)} of host processes whose environment carries a tag starting with
    `prefix`."""
    found: dict[int, tuple[str, bool]] = {}
    needle = f"{TAG_ENV}={prefix}".encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            environ = Path(entry.path, "environ").read_bytes()
        except OSError:
            continue
        at = environ.find(needle)
        if at < 0 or (at > 0 and environ[at - 1] != 0):
            continue
        tag = environ[at + len(TAG_ENV) + 1 :].split(b"\0", 1)[0].decode(errors="replace")
        found[int(entry.name)] = (tag, _state(entry.name) == "Z")
    return found


def _state(pid: str) -> str:
    try:
        stat = Path("/proc", pid, "stat").read_bytes()
        return stat.rpartition(b")")[2].split()[0].decode()
    except (OSError, IndexError):
        return "?"


def tagged_processes(tag: str) -> list[int]:
    """Live (non-zombie) host processes of one operation or sample (tag prefix)."""
    return [pid for pid, (_, zombie) in _environ_tags(tag).items() if not zombie]


def kill_tagged(prefix: str) -> int:
    """SIGKILL every process whose tag starts with `prefix`; returns how many were signalled."""
    pids = tagged_processes(prefix)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(pids)


def _zombie_children() -> int:
    count = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0
    for tid in tasks:
        with contextlib.suppress(OSError):
            for pid in Path(f"/proc/self/task/{tid}/children").read_text().split():
                count += _state(pid) == "Z"
    return count


def _containers(names: list[str]) -> int:
    """How many of these containers the engine still has (running or not). An engine that is
    gone by now raises (DockerUnavailableError): the run needed it, and an uncounted 0 would lie."""
    if not names:
        return 0
    from sandboxes.docker import require_docker

    api = require_docker().api
    left = 0
    for name in names:  # the name filter is a regular expression over "/<name>"
        left += len(api.containers(all=True, quiet=True, filters={"name": f"^/{name}$"}))
    return left


def count_leaks(footprints: list[SampleFootprint]) -> dict[str, int]:
    """What these samples left on the host (see the module docstring). Zombie children of the
    harness process are not included (see `zombie_children`)."""
    counts = dict.fromkeys(LEAK_KINDS, 0)
    leaked: dict[int, bool] = {}
    for fp in footprints:
        leaked.update({pid: zombie for pid, (_, zombie) in _environ_tags(fp.tag).items()})
    table = None
    for fp in footprints:
        if fp.bwrap is not None:
            if table is None:
                from sandboxes.bwrap import process_table

                table = process_table()
            leaked.update(fp.bwrap.processes(table))
            left = fp.bwrap.leftovers(table)
            for key in ("cgroups", "mounts", "work_dirs"):
                counts[key] += left[key]
        if fp.folder is not None:
            counts["work_dirs"] += int(Path(fp.folder).exists())
        counts["containers"] += _containers(fp.containers)
    counts["zombies"] = sum(leaked.values())
    counts["processes"] = len(leaked) - counts["zombies"]
    return counts


def count_leaks_settled(footprints: list[SampleFootprint], settle_s: float = 1.0) -> dict[str, int]:
    """`count_leaks`, re-counted for up to `settle_s` while something is still exiting (a
    process SIGKILLed by the cleanup is gone a few milliseconds later, not at once)."""
    deadline = time.monotonic() + settle_s
    while True:
        counts = count_leaks(footprints)
        if not any(counts.values()) or time.monotonic() > deadline:
            return counts
        time.sleep(0.1)


def zombie_children() -> int:
    """Zombie children of this (the harness) process, e.g. `[bwrap] <defunct>`."""
    return _zombie_children()
