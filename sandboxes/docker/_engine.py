"""The Docker engine connection, whether it is usable, and who owns a container (labels)."""

from __future__ import annotations

import functools
import os
import socket
from pathlib import Path
from typing import Any

LABEL_KIND = "org.icml26-harness.kind"
"""`sandbox` (one sample's container) or `vllm` (a model server)."""
LABEL_OWNER = "org.icml26-harness.owner"
"""`<boot id>:<pid>:<start time>` of the harness process that started the container."""
LABEL_HOST = "org.icml26-harness.host"
"""The host name of the machine the owner runs on."""
LABEL_TASK = "org.icml26-harness.task"
LABEL_ROLE = "org.icml26-harness.role"


class DockerUnavailableError(RuntimeError):
    """No usable Docker engine (SDK missing, daemon not running, no permission)."""


_POOL_SIZE = 128


@functools.cache
def docker_client() -> Any:
    """The engine client (`docker.from_env()`, i.e. `DOCKER_HOST` or the local socket), shared by
    the process. Long timeouts: image builds and a loaded machine's container starts are slow.
    A pool as large as a run's concurrent samples: the SDK's default of 10 connections made
    busy runs drop and re-open connections ("Connection pool is full")."""
    try:
        import docker
    except ImportError as ex:
        raise DockerUnavailableError(
            "the `docker` Python SDK is not installed (pip install docker; it is in pyproject.toml)"
        ) from ex
    try:
        client = docker.from_env(timeout=600, max_pool_size=_POOL_SIZE)
        client.ping()
    except Exception as ex:  # noqa: BLE001 - any failure means: no engine; the reason is shown
        raise DockerUnavailableError(
            f"no Docker engine reachable ({type(ex).__name__}: {ex}). Start one with "
            "`dockerd --bridge=none --iptables=false --ip6tables=false &` as root (as `make "
            "docker` does), or set DOCKER_HOST"
        ) from None
    return client


def docker_problem() -> str | None:
    """Why the Docker sandbox cannot run here, or None when it can."""
    try:
        docker_client()
    except DockerUnavailableError as ex:
        docker_client.cache_clear()
        return str(ex)
    return None


def require_docker() -> Any:
    """The client, or DockerUnavailableError naming the cause and the fix."""
    try:
        return docker_client()
    except DockerUnavailableError:
        docker_client.cache_clear()
        raise


@functools.cache
def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown-boot"


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22: start time in clock ticks since boot


def owner_labels(kind: str, **extra: str) -> dict[str, str]:
    """Labels naming this harness process as the owner of a new container."""
    pid = os.getpid()
    labels = {
        LABEL_KIND: kind,
        LABEL_OWNER: f"{_boot_id()}:{pid}:{_start_time(pid)}",
        LABEL_HOST: socket.gethostname(),
    }
    labels.update({f"org.icml26-harness.{k}": v for k, v in extra.items()})
    return labels


def owner_alive(labels: dict[str, str]) -> bool | None:
    """True when the owning harness process still runs, False when it is gone, None when this
    machine cannot tell (another host shares the engine)."""
    owner = labels.get(LABEL_OWNER, "")
    try:
        boot, pid, start = owner.split(":")
    except ValueError:
        return False  # not written by this project's code: malformed owner
    if boot != _boot_id():
        # an earlier boot of this machine (its processes are all gone) or another machine
        return False if labels.get(LABEL_HOST) == socket.gethostname() else None
    return _start_time(int(pid)) == start


def reap_stale_containers(kind: str | None = None) -> int:
    """Remove (force) every container of the project whose owning harness process has died on
    this machine: what a harness killed with SIGKILL left behind. Returns how many."""
    client = docker_client()
    filters = {"label": [LABEL_KIND if kind is None else f"{LABEL_KIND}={kind}"]}
    removed = 0
    for summary in client.api.containers(all=True, filters=filters):
        if owner_alive(summary.get("Labels") or {}) is False:
            try:
                client.api.remove_container(summary["Id"], force=True, v=True)
                removed += 1
            except Exception:  # noqa: BLE001 - already gone, or removal in progress elsewhere
                pass
    return removed


def own_containers(kind: str | None = None) -> list[dict[str, Any]]:
    """Summaries of the containers this process owns (running or not)."""
    client = docker_client()
    me = owner_labels("x")[LABEL_OWNER]
    filters = {"label": [f"{LABEL_OWNER}={me}"]}
    found = client.api.containers(all=True, filters=filters)
    return [c for c in found if kind is None or (c.get("Labels") or {}).get(LABEL_KIND) == kind]
