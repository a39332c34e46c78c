"""dtype and vLLM-CPU settings chosen from the hardware (no model, no server)."""

from __future__ import annotations

import json

import pytest

from harness.models import hardware
from harness.models.hardware import (
    DtypeError,
    choose_dtype,
    kv_bytes_per_token,
    native_bf16_flags,
    vllm_cpu_settings,
)
from harness.models.vllm_server import launch_plan

AVX2 = frozenset({"fma", "avx", "avx2"})
ZEN4 = frozenset({"avx2", "avx512f", "avx512_bf16", "avx512_vnni"})
SAPPHIRE = frozenset({"avx2", "avx512f", "amx_bf16", "amx_tile"})


@pytest.fixture(autouse=True)
def _no_env_override(monkeypatch):
    monkeypatch.delenv(hardware.DTYPE_ENV, raising=False)


def test_cpu_rule_bf16_only_where_native():
    assert choose_dtype(device="cpu", flags=AVX2).dtype == "float32"
    assert "no native bf16" in choose_dtype(device="cpu", flags=AVX2).reason
    zen4 = choose_dtype(device="cpu", flags=ZEN4)
    assert zen4.dtype == "bfloat16" and "avx512_bf16" in zen4.reason and not zen4.overridden
    assert choose_dtype(device="cpu", flags=SAPPHIRE).dtype == "bfloat16"
    assert choose_dtype(device="cpu", flags=frozenset({"fp", "asimd", "bf16"})).dtype == "bfloat16"
    assert native_bf16_flags(AVX2) == [] and native_bf16_flags(SAPPHIRE) == ["amx_bf16"]


def test_override_and_environment(monkeypatch):
    forced = choose_dtype("fp32", device="cpu", flags=ZEN4)
    assert forced.dtype == "float32" and forced.overridden and "model_arg.dtype" in forced.reason
    assert choose_dtype("bf16", device="cpu", flags=AVX2).dtype == "bfloat16"
    assert choose_dtype("auto", device="cpu", flags=AVX2).dtype == "float32"
    monkeypatch.setenv(hardware.DTYPE_ENV, "float16")
    env = choose_dtype(None, device="cpu", flags=ZEN4)
    assert env.dtype == "float16" and hardware.DTYPE_ENV in env.reason
    # An explicit model arg beats the environment.
    assert choose_dtype("float32", device="cpu", flags=ZEN4).dtype == "float32"
    with pytest.raises(DtypeError, match="unknown dtype 'int8'"):
        choose_dtype("int8", device="cpu")


def test_gpu_rule(monkeypatch):
    monkeypatch.setattr(hardware, "cuda_bf16", lambda: (True, "NVIDIA H200"))
    assert choose_dtype(device="cuda").reason == "bfloat16: GPU NVIDIA H200 supports bf16"
    monkeypatch.setattr(hardware, "cuda_bf16", lambda: (False, "Tesla T4"))
    assert choose_dtype(device="cuda").dtype == "float32"


def _llama_config(tmp_path, **extra):
    config = {
        "num_hidden_layers": 30,
        "num_attention_heads": 9,
        "num_key_value_heads": 3,
        "hidden_size": 576,
        "head_dim": 64,
        **extra,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    return tmp_path


def test_kv_cache_threads_and_eager(tmp_path):
    model = _llama_config(tmp_path)
    # SmolLM2-135M: 2 (K, V) x 30 layers x 3 KV heads x 64 dims x 2 bytes.
    assert kv_bytes_per_token(model, "bfloat16") == 23040
    assert kv_bytes_per_token(model, "float32") == 46080
    two = vllm_cpu_settings(
        model, "bfloat16", max_model_len=4096, cpus=[0, 1], memory_gib=20, max_concurrency=16
    )
    # 16 x 4096 x 23040 B = 1.41 GiB -> 2 GiB; CPU 0 left to the API server.
    assert (two.kv_cache_gib, two.omp_threads_bind, two.reserved_cpus) == (2, "1", 1)
    assert two.enforce_eager and "CPU 0 left" in two.reason
    assert two.env()["VLLM_CPU_OMP_THREADS_BIND"] == "1"
    many = vllm_cpu_settings(
        model, "float32", max_model_len=8192, cpus=[0, 1, 2, 3, 6, 7], memory_gib=8
    )
    assert many.omp_threads_bind == "1-3,6-7"
    assert many.kv_cache_gib == 2  # 5.6 GiB needed, capped at 1/4 of 8 GiB
    one = vllm_cpu_settings(model, "float32", max_model_len=512, cpus=[3], memory_gib=2)
    assert (one.omp_threads_bind, one.reserved_cpus, one.kv_cache_gib) == ("3", 0, 1)
    compiled = vllm_cpu_settings(model, "float32", max_model_len=512, enforce_eager=False)
    assert not compiled.enforce_eager and "compiled" in compiled.reason


def test_launch_plan_records_choices_and_respects_environment(tmp_path, monkeypatch):
    model = _llama_config(tmp_path)
    monkeypatch.setattr(hardware, "cpu_flags", lambda: AVX2)
    monkeypatch.setattr(hardware, "default_device", lambda: "cpu")
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    monkeypatch.setenv("VLLM_CPU_OMP_THREADS_BIND", "0-1")
    plan = launch_plan(model, served_model_name="m", port=8000, max_model_len=1024)
    assert plan.command[plan.command.index("--dtype") + 1] == "float32"
    assert "--enforce-eager" in plan.command
    assert plan.env["VLLM_CPU_OMP_THREADS_BIND"] == "0-1"  # the caller's setting wins
    cpu = plan.settings["vllm_cpu"]
    assert cpu["from_environment"] == ["VLLM_CPU_OMP_THREADS_BIND"]
    assert plan.env["VLLM_CPU_KVCACHE_SPACE"] == str(cpu["kv_cache_gib"])
    assert plan.settings["dtype"]["dtype"] == "float32" and plan.settings["dtype"]["reason"]
    forced = launch_plan(model, served_model_name="m", port=1, dtype="bf16", enforce_eager=False)
    assert forced.command[forced.command.index("--dtype") + 1] == "bfloat16"
    assert "--enforce-eager" not in forced.command


def test_torch_threads_leave_one_cpu(monkeypatch):
    from harness.models.hardware import choose_torch_threads

    monkeypatch.delenv("HARNESS_TORCH_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert choose_torch_threads([0, 1]).threads == 1
    assert choose_torch_threads([0]).threads == 1
    assert choose_torch_threads(list(range(16))).threads == 15
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert choose_torch_threads([0, 1]).threads == 3
    monkeypatch.setenv("HARNESS_TORCH_THREADS", "2")
    chosen = choose_torch_threads([0, 1])
    assert chosen.threads == 2 and "HARNESS_TORCH_THREADS" in chosen.reason
