"""The Kubernetes values (sandboxes/k8s): committed files = rendered, valid under the
inspect_k8s_sandbox chart's schema (merged onto its defaults as Helm does), no network, limits,
and the vLLM manifest's GPU limit matching `gpus=` (the docker device request)."""

from __future__ import annotations

import pytest
import yaml

from harness.models.docker_server import parse_gpus
from sandboxes import harness_sandbox
from sandboxes.k8s import (
    GPU_RESOURCE,
    LIMITS,
    TASKS,
    merge_values,
    render_values,
    sandbox_values,
    validate_values,
    values_path,
    vllm_manifest,
)


@pytest.mark.parametrize("task", TASKS)
def test_committed_values_are_rendered_and_valid(task: str) -> None:
    text = values_path(task).read_text()
    assert text == render_values(task), "run `python -m sandboxes.k8s render`"
    values = yaml.safe_load(text)
    validate_values(values)
    service = values["services"]["default"]
    limits = service["resources"]["limits"]
    assert limits["memory"] == f"{int(LIMITS[task]['memory_mb'])}Mi"
    assert limits["cpu"] == f"{int(LIMITS[task]['cpus'] * 1000)}m"
    assert GPU_RESOURCE not in limits  # agent sandboxes get no GPU by default
    context = service["securityContext"]
    assert context["runAsNonRoot"] and context["readOnlyRootFilesystem"]
    assert context["capabilities"] == {"drop": ["ALL"]} and not context["allowPrivilegeEscalation"]


@pytest.mark.parametrize("task", TASKS)
def test_no_network_at_all(task: str) -> None:
    values = sandbox_values(task, image="x")
    # the chart's Cilium policies: nothing beyond the environment's own DNS is reachable
    assert values["allowDomains"] == values["allowCIDR"] == values["allowEntities"] == []
    assert values["networkPolicy"] == {"enabled": True}
    # and a plain NetworkPolicy: every pod of the release, both directions, no allow rule
    [policy] = [yaml.safe_load(r) for r in values["additionalResources"]]
    assert policy["kind"] == "NetworkPolicy"
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert "ingress" not in policy["spec"] and "egress" not in policy["spec"]
    selector = policy["spec"]["podSelector"]["matchLabels"]
    assert selector == {"app.kubernetes.io/instance": "{{ .Release.Name }}"}


def test_schema_check_catches_bad_values() -> None:
    good = sandbox_values("anchor", image="x")
    validate_values(good)
    bad_name = {**good, "services": {"Default_Service": good["services"]["default"]}}
    with pytest.raises(ValueError, match="services"):
        validate_values(bad_name)
    bad_field = merge_values(good, {"services": {"default": {"privileged": True}}})
    with pytest.raises(ValueError, match="privileged"):
        validate_values(bad_field)
    with pytest.raises(ValueError, match="networkPolicy"):
        validate_values({**good, "networkPolicy": {"enabled": True, "egress": "all"}})


def test_merge_follows_helm() -> None:
    base = {"a": {"b": 1, "c": [1, 2]}, "d": 1, "e": 2}
    merged = merge_values(base, {"a": {"c": [3]}, "d": None, "f": 4})
    assert merged == {"a": {"b": 1, "c": [3]}, "e": 2, "f": 4}


@pytest.mark.parametrize(
    ("gpus", "tp", "dp", "limit"),
    [("all", 2, 1, 2), ("all", 2, 2, 4), ("3", 1, 1, 3), ("0,1", 2, 1, 2), ("none", 1, 1, 0)],
)
def test_vllm_gpu_limit_matches_device_request(gpus: str, tp: int, dp: int, limit: int) -> None:
    request = parse_gpus(gpus)
    [deployment, service] = vllm_manifest(
        "/models/m", served_model_name="m", gpus=request.limit(tp, dp), tp=tp, dp=dp
    )
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["resources"].get("limits", {}).get(GPU_RESOURCE, 0) == limit
    assert container["args"][container["args"].index("--tensor-parallel-size") + 1] == str(tp)
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    devices = request.device_requests()
    if limit == 0:
        assert devices == []
    elif request.device_ids:
        assert len(devices[0]["DeviceIDs"]) == limit
    elif request.count > 0:
        assert devices[0]["Count"] == limit


def test_harness_sandbox_k8s_spec() -> None:
    from k8s_sandbox import K8sSandboxEnvironmentConfig

    spec = harness_sandbox("k8s", "anchor")
    assert spec.type == "k8s" and isinstance(spec.config, K8sSandboxEnvironmentConfig)
    assert spec.config.values == values_path("anchor") and spec.config.values.is_file()
    with pytest.raises(ValueError, match="no Kubernetes values for task 'dispat'"):
        harness_sandbox("k8s", "dispat")
    assert harness_sandbox("docker", "anchor").type == "docker_api"
    assert harness_sandbox("bwrap", "anchor") is None
