"""Sandbox environments for agent tasks: `bwrap` (bubblewrap), `docker_api` (the Docker engine
API; `harness eval sandbox=docker`), compose files for inspect's own `docker` provider
(`sandboxes/docker/compose.yaml`, where Compose v2 exists) and Helm values for inspect_k8s_sandbox's
`k8s` provider (`sandboxes/k8s/`, `harness eval sandbox=k8s`). sandboxes/README.md says which to
use when."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import bwrap as bwrap  # registers the `bwrap` sandbox with inspect
from . import docker as docker  # registers the `docker_api` sandbox with inspect

COMPOSE_FILE = Path(__file__).resolve().parent / "docker" / "compose.yaml"


def compose_docker_spec() -> Any:
    """A task's own `sandbox="docker"`: inspect's compose-based `docker` provider with the
    project's compose file (its limits), or inspect's default container where the file is gone."""
    return ("docker", str(COMPOSE_FILE)) if COMPOSE_FILE.exists() else "docker"


def harness_sandbox(kind: str | None, task_name: str) -> Any:
    """The sandbox spec `harness eval sandbox=<kind>` gives a task, where the harness chooses it
    rather than the task: `docker` → the `docker_api` provider with the limits of the task's
    compose file; `k8s` → inspect_k8s_sandbox with the task's values file (anchor, swe_abs).
    None: keep the task's own spec (bwrap, local, no sandbox= given)."""
    from inspect_ai.util import SandboxEnvironmentSpec

    if kind == "docker":
        return SandboxEnvironmentSpec("docker_api", str(COMPOSE_FILE))
    if kind == "k8s":
        from . import k8s

        if task_name not in k8s.TASKS:
            raise ValueError(
                f"sandbox=k8s: no Kubernetes values for task {task_name!r} "
                f"(there are for {', '.join(k8s.TASKS)})"
            )
        return k8s.k8s_sandbox_spec(task_name)
    return None


__all__ = ["COMPOSE_FILE", "bwrap", "compose_docker_spec", "docker", "harness_sandbox"]
