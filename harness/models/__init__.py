"""Model back-ends: the embedded default, the white-box handle, vLLM serving, scripted test models."""

from harness.models.embedded import EmbeddedModelError, embedded_gguf_path, embedded_model_dir
from harness.models.whitebox import (
    ForwardOutput,
    Generation,
    WhiteBoxError,
    WhiteBoxLM,
    resolve_model_path,
    whitebox_for_model,
)

__all__ = [
    "EmbeddedModelError",
    "ForwardOutput",
    "Generation",
    "WhiteBoxError",
    "WhiteBoxLM",
    "embedded_gguf_path",
    "embedded_model_dir",
    "resolve_model_path",
    "whitebox_for_model",
]
