"""Serving settings chosen from the hardware a model runs on: dtype, vLLM-CPU threads and KV cache.

bfloat16 halves the bytes every decode step reads, but only where the hardware computes it
natively: on x86 CPUs without `avx512_bf16` / AMX, bf16 matrix products are emulated and run
6-8x slower than float32 (measured with vLLM-CPU and transformers on an AVX2-only EPYC). So the
rule is bf16 where the CPU (`avx512_bf16`, `amx_bf16`; `bf16` on Arm) or the GPU
(`torch.cuda.is_bf16_supported()`) has it, float32 otherwise; `model_arg.dtype=` overrides it.
Every back-end (the vLLM server, the in-process provider, the white-box handle) takes its dtype
from `choose_dtype`, so back-ends compared in one run do the same arithmetic, and each records the
choice with its reason in the eval log.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

Dtype = Literal["bfloat16", "float32", "float16"]
Device = Literal["cpu", "cuda"]

# CPU feature flags that mean bf16 dot products run in hardware.
_X86_BF16_FLAGS = ("avx512_bf16", "amx_bf16")
_ARM_BF16_FLAGS = ("bf16",)
_ALIASES: dict[str, Dtype] = {
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
}
#: Environment override for processes that build models without model args (benches, scripts).
DTYPE_ENV = "HARNESS_DTYPE"


class DtypeError(ValueError):
    """An unknown dtype name was asked for."""


@dataclass(frozen=True)
class DtypeChoice:
    """The dtype a model runs in, and why (recorded in the eval log)."""

    dtype: Dtype
    reason: str
    device: Device = "cpu"
    overridden: bool = False

    @property
    def torch_dtype(self) -> Any:
        import torch

        return getattr(torch, self.dtype)

    def as_metadata(self) -> dict[str, Any]:
        return asdict(self)


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags from /proc/cpuinfo (x86 `flags`, Arm `Features`); empty elsewhere."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def native_bf16_flags(flags: frozenset[str] | None = None) -> list[str]:
    """The flags (of `flags`, default this CPU's) that give native bfloat16 arithmetic."""
    flags = cpu_flags() if flags is None else flags
    return [f for f in (*_X86_BF16_FLAGS, *_ARM_BF16_FLAGS) if f in flags]


def cuda_bf16() -> tuple[bool, str] | None:
    """(bf16 supported, GPU name) when a CUDA device is usable, else None."""
    import torch

    if not torch.cuda.is_available():
        return None
    return bool(torch.cuda.is_bf16_supported()), torch.cuda.get_device_name(0)


def default_device() -> Device:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def normalise_dtype(name: str) -> Dtype | None:
    """`bf16`/`bfloat16`/... to the canonical name; `auto` (or empty) to None."""
    key = str(name).strip().lower().removeprefix("torch.")
    if key in ("", "auto", "none"):
        return None
    if key not in _ALIASES:
        raise DtypeError(
            f"unknown dtype {name!r}; expected auto, bfloat16 (bf16), float32 (fp32) or "
            "float16 (fp16)"
        )
    return _ALIASES[key]


def choose_dtype(
    override: str | None = None,
    *,
    device: Device | None = None,
    flags: frozenset[str] | None = None,
    source: str = "model_arg.dtype",
) -> DtypeChoice:
    """The dtype for a model on `device` (default: CUDA if usable, else CPU).

    `override` (`model_arg.dtype=`, else the `HARNESS_DTYPE` environment variable) wins when it
    names a dtype; `auto` or None applies the hardware rule.
    """
    if override is None or normalise_dtype(override) is None:
        env = os.environ.get(DTYPE_ENV, "").strip()
        override, source = (env, DTYPE_ENV) if env else (override, source)
    device = device or default_device()
    forced = normalise_dtype(override) if override is not None else None
    if forced is not None:
        return DtypeChoice(forced, f"{forced}: set by {source}", device, overridden=True)
    if device == "cuda":
        found = cuda_bf16()
        if found is not None and found[0]:
            return DtypeChoice("bfloat16", f"bfloat16: GPU {found[1]} supports bf16", device)
        name = found[1] if found else "unknown GPU"
        return DtypeChoice("float32", f"float32: GPU {name} has no native bf16", device)
    native = native_bf16_flags(flags)
    if native:
        return DtypeChoice(
            "bfloat16", f"bfloat16: the CPU computes bf16 natively ({', '.join(native)})", device
        )
    return DtypeChoice(
        "float32",
        "float32: the CPU has no native bf16 (no avx512_bf16/amx_bf16 flag), where bf16 is "
        "emulated and several times slower",
        device,
    )


# --------------------------------------------------------------------------- in-process threads
#: Environment override for the in-process back-end's torch threads.
THREADS_ENV = "HARNESS_TORCH_THREADS"


@dataclass(frozen=True)
class ThreadChoice:
    threads: int
    reason: str

    def as_metadata(self) -> dict[str, Any]:
        return asdict(self)


def choose_torch_threads(cpus: list[int] | None = None) -> ThreadChoice:
    """Intra-op threads for in-process inference: every usable CPU but one, at least one.

    The CPU left over runs the event loop, tokenisation and any server beside it. OpenMP threads
    wait for each other at every operator: when one of them loses its CPU to another process,
    the rest spin. Measured on this project's shared 2-core machine under load (one greedy
    24-token generation of the embedded model): 1 thread 26 s wall and 1.7 s CPU, 2 threads
    387 s wall and 35 s CPU. vLLM-CPU's binding follows the same rule (`vllm_cpu_settings`).
    `HARNESS_TORCH_THREADS` (or `OMP_NUM_THREADS`) overrides it.
    """
    for env in (THREADS_ENV, "OMP_NUM_THREADS"):
        value = os.environ.get(env, "").strip()
        if value.isdigit() and int(value) > 0:
            return ThreadChoice(int(value), f"{value} threads: set by {env}")
    cpus = usable_cpus() if cpus is None else cpus
    n = max(1, len(cpus) - 1)
    return ThreadChoice(
        n,
        f"{n} thread(s): {len(cpus)} usable CPUs, one left to the event loop and other processes",
    )


def apply_torch_threads() -> ThreadChoice:
    """Set torch's intra-op threads by `choose_torch_threads` (process-wide) and return it."""
    import torch

    choice = choose_torch_threads()
    if torch.get_num_threads() != choice.threads:
        torch.set_num_threads(choice.threads)
    return choice


# --------------------------------------------------------------------------- vLLM on CPU
@dataclass(frozen=True)
class VLLMCPUSettings:
    """What a vLLM-CPU server is started with, beside the dtype; recorded in the log."""

    kv_cache_gib: int
    omp_threads_bind: str
    reserved_cpus: int
    enforce_eager: bool
    reason: str

    def env(self) -> dict[str, str]:
        return {
            "VLLM_CPU_KVCACHE_SPACE": str(self.kv_cache_gib),
            "VLLM_CPU_OMP_THREADS_BIND": self.omp_threads_bind,
            "VLLM_CPU_NUM_OF_RESERVED_CPU": str(self.reserved_cpus),
        }

    def as_metadata(self) -> dict[str, Any]:
        return asdict(self)


def usable_cpus() -> list[int]:
    """CPUs this process may run on (the affinity mask, so cgroup/taskset limits count)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


def available_memory_gib() -> float:
    """MemAvailable from /proc/meminfo (GiB); 8 where it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024**2
    except (OSError, ValueError, IndexError):
        pass
    return 8.0


def kv_bytes_per_token(model_path: str | os.PathLike[str], dtype: Dtype) -> int | None:
    """K and V bytes one token occupies in every layer, from the model's config.json."""
    import json

    try:
        config = json.loads((Path(model_path) / "config.json").read_text())
    except (OSError, ValueError):
        return None
    text = config.get("text_config", config)
    try:
        layers = int(text["num_hidden_layers"])
        heads = int(text["num_attention_heads"])
        kv_heads = int(text.get("num_key_value_heads") or heads)
        head_dim = int(text.get("head_dim") or int(text["hidden_size"]) // heads)
    except (KeyError, TypeError, ValueError):
        return None
    width = 4 if dtype == "float32" else 2
    return 2 * layers * kv_heads * head_dim * width


def vllm_cpu_settings(
    model_path: str | os.PathLike[str],
    dtype: Dtype,
    *,
    max_model_len: int,
    max_concurrency: int = 16,
    enforce_eager: bool | None = None,
    cpus: list[int] | None = None,
    memory_gib: float | None = None,
) -> VLLMCPUSettings:
    """KV-cache space, OpenMP binding and eager/compiled mode for a vLLM-CPU server.

    - KV cache: room for `max_concurrency` full-length sequences, at least 1 GiB, at most a
      quarter of the available memory (vLLM's own default is a flat 4 GiB).
    - Threads: one OpenMP thread per usable CPU except the first, which is left to the API
      server and the engine's scheduler loop (as vLLM's `auto` does: OpenMP threads spin while
      waiting, so a compute thread on the scheduler's core stalls every step); a 1-CPU machine
      binds its only CPU. The list is explicit so the log says which CPUs computed.
    - Eager unless asked otherwise: on CPU, compiling costs a minute or more at every start
      (inductor builds C++ kernels on these cores) for a decode gain the bench measures
      (`bench/bench_roofline.py`); `enforce_eager=False` compiles.
    """
    cpus = usable_cpus() if cpus is None else cpus
    memory = available_memory_gib() if memory_gib is None else memory_gib
    per_token = kv_bytes_per_token(model_path, dtype)
    need = (per_token or 0) * max_model_len * max_concurrency / 1024**3
    cap = max(1, int(memory * 0.25))
    kv = min(cap, max(1, math.ceil(need)))
    compute = cpus[1:] if len(cpus) > 1 else cpus
    bind = _ranges(compute)
    eager = True if enforce_eager is None else enforce_eager
    reason = (
        f"KV cache {kv} GiB ({max_concurrency} x {max_model_len}-token sequences need "
        f"{need:.2f} GiB; capped at 1/4 of {memory:.0f} GiB available); OpenMP on CPUs {bind} "
        f"of {_ranges(cpus)} (CPU {cpus[0]} left to the API server and scheduler); "
        + ("eager" if eager else "compiled (torch.compile)")
    )
    if len(cpus) == 1:
        reason = reason.replace(f" (CPU {cpus[0]} left to the API server and scheduler)", "")
    return VLLMCPUSettings(kv, bind, len(cpus) - len(compute), eager, reason)


def _ranges(ids: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5' (vLLM's CPU list syntax)."""
    parts: list[str] = []
    for i in sorted(ids):
        if parts and i == int(parts[-1].split("-")[-1]) + 1:
            parts[-1] = f"{parts[-1].split('-')[0]}-{i}"
        else:
            parts.append(str(i))
    return ",".join(parts)
