"""Kubernetes sandboxes: values for the `inspect_k8s_sandbox` package's `agent-env` Helm chart
(`sandbox=k8s`), one file per task that runs agents (`anchor-values.yaml`,
`swe_abs-values.yaml`), and the matching manifest for a vLLM server with a GPU limit.

The values carry the same contract as the bwrap and docker_api sandboxes: no network (the
chart's Cilium policies with nothing allowed, plus a plain Kubernetes NetworkPolicy that denies
all ingress and egress of the release's pods, for clusters without Cilium), memory/CPU/ephemeral
storage limits, a non-root user, a read-only root file system with writable `emptyDir` work dir
and /tmp, no capabilities, no privilege escalation, the runtime's default seccomp profile. The
committed files are `render_values(task)` output (a test keeps them equal) and validate against
the chart's own `values.schema.json` (`validate_values`).

Images: a cluster pulls from a registry, so `image=` names one there (default: the sandbox
image's tag, which the cluster's nodes must have; `python -m sandboxes.docker images` builds it,
then `docker tag`/`docker push` it to the cluster's registry).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml

HERE = Path(__file__).resolve().parent
TaskName = Literal["anchor", "swe_abs"]
TASKS: tuple[TaskName, ...] = ("anchor", "swe_abs")
WORKDIR = "/workspace"
SANDBOX_UID = 1000
#: Per task: memory (MiB), CPUs, work-dir size (MiB); the same limits as its bwrap/docker config.
LIMITS: dict[str, dict[str, float]] = {
    "anchor": {"memory_mb": 2048, "cpus": 1.0, "disk_mb": 2048},
    "swe_abs": {"memory_mb": 4096, "cpus": 2.0, "disk_mb": 4096},
}
GPU_RESOURCE = "nvidia.com/gpu"


def values_path(task: TaskName) -> Path:
    """The committed values file of `task` (what `sandbox=k8s` passes to inspect_k8s_sandbox)."""
    return HERE / f"{task}-values.yaml"


def _deny_all_policy() -> str:
    # A string: the chart passes it through Helm's template engine (the release's name).
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "{{ .Release.Name }}-deny-all"},
        "spec": {
            "podSelector": {"matchLabels": {"app.kubernetes.io/instance": "{{ .Release.Name }}"}},
            "policyTypes": ["Ingress", "Egress"],
        },
    }
    return yaml.safe_dump(policy, sort_keys=False)


def sandbox_values(
    task: TaskName,
    *,
    image: str | None = None,
    memory_mb: int | None = None,
    cpus: float | None = None,
    disk_mb: int | None = None,
    gpus: int = 0,
    runtime_class: str | None = "gvisor",
) -> dict[str, Any]:
    """The chart values for `task`'s sandbox. `gpus`: an `nvidia.com/gpu` limit (0: none)."""
    if task not in LIMITS:
        raise ValueError(f"k8s sandbox values: unknown task {task!r}; known: {', '.join(TASKS)}")
    limits = LIMITS[task]
    memory = int(memory_mb or limits["memory_mb"])
    cpu = float(cpus or limits["cpus"])
    disk = int(disk_mb or limits["disk_mb"])
    if image is None:
        from sandboxes.docker import sandbox_image_tag

        image = sandbox_image_tag()
    resource_limits: dict[str, Any] = {
        "memory": f"{memory}Mi",
        "cpu": f"{int(cpu * 1000)}m",
        "ephemeral-storage": f"{disk}Mi",
    }
    if gpus:
        resource_limits[GPU_RESOURCE] = int(gpus)
    service: dict[str, Any] = {
        "image": image,
        "command": ["tail", "-f", "/dev/null"],
        "workingDir": WORKDIR,
        "env": [{"name": "HOME", "value": WORKDIR}, {"name": "LANG", "value": "C.UTF-8"}],
        "resources": {"requests": dict(resource_limits), "limits": resource_limits},
        "securityContext": {
            "runAsUser": SANDBOX_UID,
            "runAsGroup": SANDBOX_UID,
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumes": [
            {"name": "workspace", "emptyDir": {"sizeLimit": f"{disk}Mi"}},
            {"name": "tmp", "emptyDir": {"sizeLimit": f"{disk}Mi"}},
        ],
        "volumeMounts": [
            {"name": "workspace", "mountPath": WORKDIR},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
    }
    if runtime_class:
        service["runtimeClassName"] = runtime_class
    return {
        "allowDomains": [],
        "allowCIDR": [],
        "allowEntities": [],
        "networkPolicy": {"enabled": True},
        "automountServiceAccountToken": False,
        "labels": {"icml26-harness/task": task.replace("_", "-")},
        "services": {"default": service},
        "additionalResources": [_deny_all_policy()],
    }


def render_values(task: TaskName, **options: Any) -> str:
    """`sandbox_values` as the YAML file the chart reads."""
    header = (
        f"# inspect_k8s_sandbox values for the {task} sandbox (sandbox=k8s). Generated by\n"
        f"# `python -m sandboxes.k8s render`; edit sandboxes/k8s/__init__.py, not this file.\n"
    )
    return header + yaml.safe_dump(sandbox_values(task, **options), sort_keys=False, width=100)


def _chart_dir() -> Path:
    import k8s_sandbox

    return Path(k8s_sandbox.__file__).parent / "resources" / "helm" / "agent-env"


@cache
def chart_schema() -> dict[str, Any]:
    """The `agent-env` chart's values schema, from the installed inspect_k8s_sandbox."""
    return dict(json.loads((_chart_dir() / "values.schema.json").read_text()))


def chart_defaults() -> dict[str, Any]:
    """The chart's own values.yaml (what Helm merges ours onto)."""
    return dict(yaml.safe_load((_chart_dir() / "values.yaml").read_text()))


def merge_values(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Helm's merge of user values onto chart defaults: maps merge key by key, anything else
    (lists included) is replaced; a null removes the key."""
    merged = dict(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_values(merged[key], value)
        else:
            merged[key] = value
    return merged


def validate_values(values: dict[str, Any]) -> None:
    """Check `values`, merged onto the chart's defaults as Helm does, against the chart's
    `values.schema.json` (what `helm install` checks first). ValueError naming the first
    violation and where it is."""
    import jsonschema

    merged = merge_values(chart_defaults(), values)
    errors = sorted(
        jsonschema.Draft7Validator(chart_schema()).iter_errors(merged), key=lambda e: e.path
    )
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(top level)"
        raise ValueError(f"k8s sandbox values break the chart's schema at {where}: "
                         f"{errors[0].message[:300]}")  # fmt: skip


def k8s_sandbox_spec(task: TaskName) -> Any:
    """The inspect sandbox spec for `task` on Kubernetes (needs a cluster and kubeconfig)."""
    from inspect_ai.util import SandboxEnvironmentSpec
    from k8s_sandbox import K8sSandboxEnvironmentConfig

    return SandboxEnvironmentSpec("k8s", K8sSandboxEnvironmentConfig(values=values_path(task)))


def vllm_manifest(
    model: str,
    *,
    served_model_name: str,
    gpus: int,
    tp: int = 1,
    dp: int = 1,
    image: str = "vllm/vllm-openai:latest",
    port: int = 8000,
) -> list[dict[str, Any]]:
    """A Deployment and Service running vLLM with `gpus` as the container's `nvidia.com/gpu`
    limit (`harness.models.docker_server.GpuRequest.limit` gives the number matching `gpus=`)."""
    name = "vllm-" + "".join(c if c.isalnum() else "-" for c in served_model_name.lower())[:40]
    labels = {"app.kubernetes.io/name": name}
    container: dict[str, Any] = {
        "name": "vllm",
        "image": image,
        "args": [
            "--model",
            model,
            "--served-model-name",
            served_model_name,
            "--port",
            str(port),
            "--tensor-parallel-size",
            str(tp),
            "--data-parallel-size",
            str(dp),
        ],  # fmt: skip
        "ports": [{"containerPort": port}],
        "resources": {"limits": {GPU_RESOURCE: gpus}} if gpus else {},
        "readinessProbe": {"httpGet": {"path": "/health", "port": port}, "periodSeconds": 10},
        "securityContext": {"allowPrivilegeEscalation": False},
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [container],
                    "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "labels": labels},
        "spec": {"selector": labels, "ports": [{"port": port, "targetPort": port}]},
    }
    return [deployment, service]


__all__ = [
    "GPU_RESOURCE",
    "LIMITS",
    "TASKS",
    "chart_defaults",
    "chart_schema",
    "k8s_sandbox_spec",
    "merge_values",
    "render_values",
    "sandbox_values",
    "validate_values",
    "values_path",
    "vllm_manifest",
]
