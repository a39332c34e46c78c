"""vLLM in a Docker container: `harness serve backend=docker model=<dir|name> [gpus=] [tp=] [dp=]`.

On a GPU host the stock `vllm/vllm-openai` image runs with the GPUs as the engine's device
request (`gpus=all|N|<id>,<id>`); on a CPU machine a locally built image
(`sandboxes.docker.ensure_vllm_image`: Debian base, no vLLM inside) runs the project's own
virtual environment and base interpreter, mounted read-only at their host paths, so nothing is
fetched inside a container. Either way the container uses the host's network namespace and vLLM
listens on the host's loopback only (no bridge network on these machines), the model folder is
mounted read-only, the root file system is read-only, capabilities are dropped, and the engine
restarts a server that dies (a bounded number of times, `restarts=`); a server that stays dead
is reported, never waited on forever.

Several roles each get their own server (`role=<r>`): each prints the environment that points
inspect at it (`VLLM_BASE_URL` for `model=vllm/<name>`, or `<ROLE>_BASE_URL` for
`role.<r>=openai-api/<role>/<name>`, inspect's OpenAI-compatible provider).
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.models.hardware import DtypeChoice, choose_dtype, default_device, normalise_dtype
from harness.models.vllm_server import (
    TOOL_PARSER_PLUGIN,
    free_port,
    launch_plan,
    stopped_on_failure,
    wait_until_healthy,
)

STOCK_GPU_IMAGE = "vllm/vllm-openai:latest"
DEFAULT_RESTARTS = 2
#: Environment passed from the launch plan into the container (the rest of the host's is not).
_ENV_PREFIXES = ("VLLM_", "OMP_", "HF_", "TRANSFORMERS_", "TOKENIZERS_", "CUDA_", "NCCL_")
_GPU_ID = r"(\d+|(GPU|MIG)-[A-Za-z0-9/-]+)"  # an index or an NVIDIA device UUID
_GPU_IDS = re.compile(rf"^{_GPU_ID}(,{_GPU_ID})*$")


@dataclass(frozen=True)
class GpuRequest:
    """What `gpus=` asks for: all GPUs (`count=-1`), a number of them, or named devices."""

    count: int = 0
    device_ids: tuple[str, ...] = ()

    @property
    def wanted(self) -> bool:
        return self.count != 0 or bool(self.device_ids)

    def device_requests(self) -> list[dict[str, Any]]:
        """The engine's `HostConfig.DeviceRequests` (what `docker run --gpus` sends)."""
        if not self.wanted:
            return []
        from docker.types import DeviceRequest

        if self.device_ids:
            request = DeviceRequest(
                driver="nvidia", device_ids=list(self.device_ids), capabilities=[["gpu"]]
            )
        else:
            request = DeviceRequest(driver="nvidia", count=self.count, capabilities=[["gpu"]])
        return [request]

    def limit(self, tp: int = 1, dp: int = 1) -> int:
        """The matching Kubernetes `nvidia.com/gpu` limit (an integer: `all` becomes the GPUs
        vLLM will use, tensor-parallel size × data-parallel size)."""
        if self.device_ids:
            return len(self.device_ids)
        if self.count < 0:
            return tp * dp
        return self.count


def parse_gpus(value: str | int | None) -> GpuRequest:
    """`gpus=` as given on the command line: none/0, all, a count, or comma-separated ids."""
    text = "" if value is None else str(value).strip()
    if text in ("", "none", "0"):
        return GpuRequest()
    if text == "all":
        return GpuRequest(count=-1)
    if text.isdigit():
        return GpuRequest(count=int(text))
    if _GPU_IDS.match(text):
        return GpuRequest(device_ids=tuple(text.split(",")))
    raise ValueError(f"gpus={text!r}: expected all, a number, or GPU ids like 0,1 or GPU-<uuid>")


def _gpu_dtype(dtype: str) -> DtypeChoice:
    """The GPU server's dtype: as given, else the hardware rule where this host sees the GPU,
    else bfloat16 (what vLLM's GPU images run on every GPU they support well)."""
    forced = normalise_dtype(dtype)
    if forced is not None:
        return DtypeChoice(forced, f"{forced}: set by dtype=", "cuda", overridden=True)
    if default_device() == "cuda":
        return choose_dtype(None, device="cuda")
    return DtypeChoice("bfloat16", "bfloat16: GPU in a container, not visible here", "cuda")


@dataclass
class ContainerSpec:
    """Everything the engine is asked for; built without touching the engine (tests read it)."""

    image: str
    command: list[str]
    environment: dict[str, str]
    host_config: dict[str, Any]
    labels: dict[str, str]
    name: str
    base_url: str
    served_model_name: str
    settings: dict[str, Any] = field(default_factory=dict)


def container_spec(
    model_path: str | Path,
    *,
    served_model_name: str,
    port: int,
    gpus: GpuRequest,
    tp: int = 1,
    dp: int = 1,
    role: str = "",
    image: str | None = None,
    max_model_len: int = 4096,
    dtype: str = "auto",
    enforce_eager: bool | None = None,
    restarts: int = DEFAULT_RESTARTS,
    memory_gb: float | None = None,
) -> ContainerSpec:
    """The container for one server. GPU: the stock image (its entry point is vLLM's API server;
    the model folder is mounted at /models/<name>). CPU: the local image running the host's
    interpreter and virtual environment, read-only, at their own paths."""
    from docker.types import Ulimit

    from sandboxes.docker import ensure_vllm_image, owner_labels

    model = Path(model_path).resolve()
    extra = ["--tensor-parallel-size", str(tp), "--data-parallel-size", str(dp)]
    binds: dict[str, dict[str, str]] = {}
    # GPU: the model at /models/<name> in the stock image, with vLLM's own chat template.
    target = f"/models/{model.name}" if gpus.wanted else str(model)
    plan = launch_plan(
        target,
        served_model_name=served_model_name,
        port=port,
        max_model_len=max_model_len,
        dtype=_gpu_dtype(dtype) if gpus.wanted else dtype,
        enforce_eager=enforce_eager,
        extra_args=extra,
        chat_template=None if gpus.wanted else "auto",
        # The stock image's vLLM is not the one the harness's tool parser was written against.
        forced_tool_calls="vllm" if gpus.wanted else "bounded",
    )
    if gpus.wanted:
        command = plan.command[3:]  # after `python -m vllm.entrypoints.openai.api_server`
        chosen_image = image or STOCK_GPU_IMAGE
        binds[str(model)] = {"bind": target, "mode": "ro"}
    else:
        command = plan.command
        chosen_image = image or ensure_vllm_image()
        # The harness's tool parser plugin (and the grammar file beside it) at its own path.
        for path in {Path(sys.prefix), Path(sys.base_prefix), model, TOOL_PARSER_PLUGIN.parent}:
            binds[str(path)] = {"bind": str(path), "mode": "ro"}
        template = plan.settings.get("chat_template", "")
        if template and Path(template).is_file():
            folder = Path(template).resolve().parent
            binds[str(folder)] = {"bind": str(folder), "mode": "ro"}
    environment = {k: v for k, v in plan.env.items() if k.startswith(_ENV_PREFIXES)}
    environment.update(
        {"HOME": "/cache", "VLLM_CACHE_ROOT": "/cache/vllm", "XDG_CACHE_HOME": "/cache"}
    )
    host_config: dict[str, Any] = {
        "NetworkMode": "host",  # vLLM listens on the host's loopback; no bridge network
        "ReadonlyRootfs": True,
        "CapDrop": ["ALL"],
        "SecurityOpt": ["no-new-privileges:true"],
        "Binds": [f"{host}:{m['bind']}:{m['mode']}" for host, m in sorted(binds.items())],
        "Tmpfs": {"/tmp": "rw,exec,size=4g", "/cache": "rw,exec,size=4g"},
        "ShmSize": 2 * 1024**3,
        "RestartPolicy": {"Name": "on-failure", "MaximumRetryCount": restarts},
        "Init": True,
        "Ulimits": [Ulimit(name="core", soft=0, hard=0)],
    }
    if gpus.wanted:
        host_config["DeviceRequests"] = gpus.device_requests()
        host_config["IpcMode"] = "host"  # vLLM's documented setting for its shared tensors
    if memory_gb is not None:
        host_config["Memory"] = int(memory_gb * 1024**3)
        host_config["MemorySwap"] = int(memory_gb * 1024**3)
    labels = owner_labels("vllm", role=role or "model", model=served_model_name[:200])
    suffix = re.sub(r"[^a-zA-Z0-9_.-]", "-", role or served_model_name)[:40]
    settings = {
        **plan.settings,
        "backend": "docker",
        "image": chosen_image,
        "gpus": {"count": gpus.count, "device_ids": list(gpus.device_ids)},
        "tp": tp,
        "dp": dp,
    }
    return ContainerSpec(
        image=chosen_image,
        command=command,
        environment=environment,
        host_config=host_config,
        labels=labels,
        name=f"icml26-vllm-{suffix}-{port}",
        base_url=f"http://127.0.0.1:{port}/v1",
        served_model_name=served_model_name,
        settings=settings,
    )


@dataclass
class DockerVLLMServer:
    """A running server container; `stop()` removes it."""

    container_id: str
    spec: ContainerSpec
    startup_s: float = 0.0
    log_path: Path | None = None

    @property
    def base_url(self) -> str:
        return self.spec.base_url

    def state(self) -> dict[str, Any]:
        from sandboxes.docker import docker_client

        return dict(docker_client().api.inspect_container(self.container_id)["State"])

    def restart_count(self) -> int:
        from sandboxes.docker import docker_client

        return int(docker_client().api.inspect_container(self.container_id)["RestartCount"])

    def logs(self, lines: int = 30) -> str:
        from sandboxes.docker import docker_client

        try:
            raw = docker_client().api.logs(self.container_id, tail=lines)
        except Exception as ex:  # noqa: BLE001 - the container is gone; say so instead
            return f"(no logs: {ex})"
        return bytes(raw).decode("utf-8", errors="replace")

    def dead(self) -> bool:
        """Exited for good: the engine will not restart it again."""
        state = self.state()
        return not state.get("Running") and not state.get("Restarting")

    def save_logs(self) -> Path | None:
        """The container's whole log into `log_path` (it goes with the container)."""
        from sandboxes.docker import docker_client

        if self.log_path is None:
            return None
        try:
            raw = docker_client().api.logs(self.container_id)
        except Exception:  # noqa: BLE001 - already gone: keep what an earlier save wrote
            return self.log_path
        self.log_path.write_bytes(bytes(raw))
        return self.log_path

    def restart(self, startup_timeout_s: float = 600.0) -> None:
        """Start the exited container again and wait until it answers."""
        from sandboxes.docker import docker_client

        self.save_logs()
        docker_client().api.start(self.container_id)
        _wait_healthy(self, startup_timeout_s)

    def stop(self) -> None:
        import docker.errors

        from sandboxes.docker import docker_client

        self.save_logs()
        try:
            docker_client().api.remove_container(self.container_id, force=True)
        except docker.errors.NotFound:
            pass

    def __enter__(self) -> DockerVLLMServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_docker_vllm_server(
    spec: ContainerSpec, *, startup_timeout_s: float = 600.0
) -> DockerVLLMServer:
    """Create and start the container, then wait until `/v1/models` answers (or fail with the
    container's log tail when it dies for good or the time runs out)."""
    from sandboxes.docker import docker_client, reap_stale_containers

    api = docker_client().api
    reap_stale_containers("vllm")  # servers of harness processes that died (SIGKILL)
    started = time.monotonic()
    created = api.create_container(
        spec.image,
        command=spec.command,
        environment=spec.environment,
        labels=spec.labels,
        name=spec.name,
        host_config=spec.host_config,
    )
    log_path = Path(tempfile.mkstemp(prefix=f"{spec.name}-", suffix=".log")[1])
    server = DockerVLLMServer(created["Id"], spec, log_path=log_path)
    with stopped_on_failure(server):
        api.start(server.container_id)
        _wait_healthy(server, startup_timeout_s)
    server.startup_s = time.monotonic() - started
    return server


def _wait_healthy(server: DockerVLLMServer, timeout_s: float) -> None:
    def exited() -> str | None:
        if not server.dead():
            return None
        return (
            f"the vLLM container exited with code {server.state().get('ExitCode')} during "
            f"start-up (restarted {server.restart_count()} time(s)). Its last lines:\n"
            f"{server.logs()}"
        )

    wait_until_healthy(
        server.base_url,
        timeout_s,
        exited=exited,
        not_ready=lambda: (
            f"the vLLM container did not become healthy within {timeout_s:.0f} s. Its last "
            f"lines:\n{server.logs()}"
        ),
    )


SERVE_OPTIONS: dict[str, type] = {
    "model": str,
    "port": int,
    "max_model_len": int,
    "dtype": str,
    "served_name": str,
    "enforce_eager": bool,
    "gpus": str,
    "tp": int,
    "dp": int,
    "role": str,
    "image": str,
    "restarts": int,
    "memory_gb": float,
    "startup_timeout_s": float,
}


def parse_serve_options(args: list[str]) -> dict[str, Any]:
    """`key=value` arguments of `harness serve backend=docker` converted to SERVE_OPTIONS' types
    (ValueError naming the option for an unknown key or a bad value)."""
    values: dict[str, Any] = {}
    for arg in args:
        key, sep, raw = arg.partition("=")
        if not sep or key not in SERVE_OPTIONS:
            raise ValueError(
                f"harness serve backend=docker: unknown option {arg[:80]!r}; expected "
                f"{', '.join(f'{k}=' for k in SERVE_OPTIONS)}"
            )
        kind = SERVE_OPTIONS[key]
        try:
            if kind is bool:
                if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError("expected true or false")
                values[key] = raw.lower() in ("true", "1", "yes")
            else:
                values[key] = kind(raw)
        except ValueError as ex:
            raise ValueError(f"{key}={raw[:80]!r}: expected {kind.__name__} ({ex})") from None
    return values


def serve_in_docker(args: list[str], console: Any, err: Any) -> int:
    """`harness serve backend=docker ...`: start the container, print how to use it, keep it
    running until Ctrl-C/SIGTERM (the engine restarts it if it dies; after `restarts` failed
    restarts this command ends with an error)."""
    import signal

    from harness.models.embedded import EMBEDDED_NAME, embedded_model_dir

    values = parse_serve_options(args)
    gpus = parse_gpus(values.get("gpus"))
    model = values.get("model", "default")
    embedded = model in ("default", "embedded")
    path = str(embedded_model_dir()) if embedded else model
    if not Path(path).is_dir():
        raise ValueError(
            f"model={model[:200]}: backend=docker serves a local model folder (download it "
            "first; containers have no network)"
        )
    served = values.get("served_name") or (EMBEDDED_NAME if embedded else Path(path).name)
    role = values.get("role", "")
    spec = container_spec(
        path,
        served_model_name=served,
        port=values.get("port") or free_port(),
        gpus=gpus,
        tp=values.get("tp", 1),
        dp=values.get("dp", 1),
        role=role,
        image=values.get("image"),
        max_model_len=values.get("max_model_len", 4096),
        dtype=values.get("dtype", "auto"),
        enforce_eager=values.get("enforce_eager"),
        restarts=values.get("restarts", DEFAULT_RESTARTS),
        memory_gb=values.get("memory_gb"),
    )
    console.print(f"starting vLLM in a container ({spec.image}) on {path} …")
    server = start_docker_vllm_server(
        spec, startup_timeout_s=values.get("startup_timeout_s", 600.0)
    )
    console.print(f"[green]ready[/green] in {server.startup_s:.0f} s")
    console.print(f"container: {server.container_id[:12]} ({spec.name})")
    console.print(f"base_url:  {server.base_url}")
    console.print(f"model:     {served}")
    console.print(f"use:       VLLM_BASE_URL={server.base_url} harness eval model=vllm/{served} …")
    if role:
        env = role.upper().replace("-", "_")
        console.print(
            f"  or role: {env}_BASE_URL={server.base_url} {env}_API_KEY=none harness eval "
            f"role.{role}=openai-api/{role}/{served} …"
        )
    console.print(f"log:       {server.log_path} (written when the container stops)")
    console.print("Ctrl-C or SIGTERM stops and removes the container")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    budget = values.get("restarts", DEFAULT_RESTARTS)
    seen, own = 0, 0
    try:
        while True:
            time.sleep(2)
            if server.dead():
                code = server.state().get("ExitCode")
                used = server.restart_count() + own
                if used >= budget:
                    err.print(
                        f"[red]the vLLM container exited for good (code {code}, after {used} "
                        f"restart(s)); its log: {server.save_logs()}[/red]"
                    )
                    return 1
                # the engine restarts only failures (code != 0); a clean exit nobody asked for
                # is a dead server too
                own += 1
                err.print(f"[yellow]the vLLM container exited (code {code}); restarting it")
                server.restart()
                console.print(f"[green]ready again[/green] at {server.base_url}")
            count = server.restart_count()
            if count > seen:
                seen = count
                err.print(f"[yellow]the vLLM container died; the engine restarted it ({count})")
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()
