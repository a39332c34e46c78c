"""vLLM in Docker (harness.models.docker_server): `gpus=` as the engine's device request in the
request body the docker SDK sends, the CPU container's mounts and isolation, option parsing, and
(with an engine) a real server on the embedded model."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.models.docker_server import (
    GpuRequest,
    container_spec,
    parse_gpus,
    parse_serve_options,
    start_docker_vllm_server,
)


def _sent_create_body(spec: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The JSON body `create_container` posts to the engine (captured before it is sent)."""
    import docker

    sent: dict[str, Any] = {}

    def capture(self: Any, url: str, data: Any, **kwargs: Any) -> Any:
        sent["url"], sent["body"] = url, json.loads(json.dumps(data))

        class Response:
            status_code = 201

            def json(self) -> dict[str, str]:
                return {"Id": "0" * 64}

            def raise_for_status(self) -> None:
                return None

        return Response()

    monkeypatch.setattr(docker.APIClient, "_post_json", capture)
    api = docker.APIClient(base_url="unix:///nonexistent.sock", version="1.41")
    api.create_container(
        spec.image,
        command=spec.command,
        environment=spec.environment,
        labels=spec.labels,
        name=spec.name,
        host_config=api.create_host_config(
            device_requests=spec.host_config.get("DeviceRequests"),
            network_mode=spec.host_config["NetworkMode"],
            read_only=spec.host_config["ReadonlyRootfs"],
        ),
    )
    assert sent["url"].endswith("/containers/create")
    return dict(sent["body"])


@pytest.mark.parametrize(
    ("gpus", "expected"),
    [
        ("all", {"Driver": "nvidia", "Count": -1, "DeviceIDs": []}),
        ("2", {"Driver": "nvidia", "Count": 2, "DeviceIDs": []}),
        ("0,3", {"Driver": "nvidia", "Count": 0, "DeviceIDs": ["0", "3"]}),
    ],
)
def test_gpus_become_the_device_request_sent(
    gpus: str, expected: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = container_spec(
        tmp_path, served_model_name="m", port=8123, gpus=parse_gpus(gpus), tp=2, image="img:1"
    )
    body = _sent_create_body(spec, monkeypatch)
    [request] = body["HostConfig"]["DeviceRequests"]
    assert {k: request[k] for k in expected} == expected
    assert request["Capabilities"] == [["gpu"]]
    assert body["HostConfig"]["NetworkMode"] == "host"
    # the stock image's entry point is vLLM's server: the spec passes only its arguments
    assert body["Cmd"][:2] == ["--model", f"/models/{tmp_path.name}"]
    assert body["Cmd"][body["Cmd"].index("--tensor-parallel-size") + 1] == "2"
    assert spec.host_config["Binds"] == [f"{tmp_path}:/models/{tmp_path.name}:ro"]


def test_no_gpus_no_device_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = container_spec(
        tmp_path, served_model_name="m", port=8123, gpus=parse_gpus(None), image="img:1"
    )
    body = _sent_create_body(spec, monkeypatch)
    assert not body["HostConfig"].get("DeviceRequests")
    # CPU: the host's interpreter and virtual environment, read-only at their own paths
    binds = spec.host_config["Binds"]
    for path in (sys.prefix, sys.base_prefix, str(tmp_path.resolve())):
        assert f"{path}:{path}:ro" in binds, binds
    assert spec.command[:3] == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    config = spec.host_config
    assert config["ReadonlyRootfs"] and config["CapDrop"] == ["ALL"]
    assert config["RestartPolicy"] == {"Name": "on-failure", "MaximumRetryCount": 2}
    assert "PATH" not in spec.environment  # only the server's settings cross over
    assert spec.environment["HF_HUB_OFFLINE"] == "1"


def test_gpu_parsing_and_limits() -> None:
    assert parse_gpus("all") == GpuRequest(count=-1) and parse_gpus("all").limit(4, 2) == 8
    assert parse_gpus("0") == GpuRequest() and not parse_gpus("none").wanted
    assert parse_gpus("GPU-abc,GPU-def").limit() == 2
    with pytest.raises(ValueError, match="gpus='two'"):
        parse_gpus("two ")
    with pytest.raises(ValueError, match="gpus="):
        parse_gpus("0;rm")


def test_serve_options() -> None:
    values = parse_serve_options(["gpus=all", "tp=2", "role=judge", "enforce_eager=true"])
    assert values == {"gpus": "all", "tp": 2, "role": "judge", "enforce_eager": True}
    with pytest.raises(ValueError, match="unknown option 'tpp=2'"):
        parse_serve_options(["tpp=2"])
    with pytest.raises(ValueError, match="tp='x': expected int"):
        parse_serve_options(["tp=x"])


@pytest.mark.vllm
@pytest.mark.slow
def test_embedded_model_served_from_a_container(docker_ok: None) -> None:
    from harness.models.embedded import EMBEDDED_NAME, embedded_model_dir
    from harness.models.vllm_server import free_port
    from sandboxes.docker import own_containers

    spec = container_spec(
        embedded_model_dir(),
        served_model_name=EMBEDDED_NAME,
        port=free_port(),
        gpus=GpuRequest(),
        max_model_len=1024,
    )
    with start_docker_vllm_server(spec, startup_timeout_s=600) as server:
        assert [c["Id"] for c in own_containers("vllm")] == [server.container_id]
        reply = httpx.post(
            server.base_url + "/chat/completions",
            json={
                "model": EMBEDDED_NAME,
                "messages": [{"role": "user", "content": "Say hi."}],
                "max_tokens": 8,
                "temperature": 0,
            },
            timeout=120,
        )
        assert reply.status_code == 200, reply.text
        assert reply.json()["choices"][0]["message"]["content"].strip()
        assert server.state()["Running"]
    assert own_containers("vllm") == []
