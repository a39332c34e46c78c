"""Model specs → inspect names, and the dtype each local back-end is given (no model loaded)."""

from __future__ import annotations

from harness.models import hardware
from harness.models.aliases import ModelServers, ResolvedModel, resolve_model


def test_specs_resolve_to_backends():
    assert resolve_model("default-hf").name == "harness/default"
    assert resolve_model("default", "transformers").name == "harness/default"
    served = resolve_model("default")
    assert served.needs_vllm and served.name == "vllm/smollm2-135m-instruct"
    assert resolve_model("scripted/x") == ResolvedModel("scripted/x")


def test_in_process_models_get_the_hardware_dtype_recorded(monkeypatch):
    monkeypatch.delenv(hardware.DTYPE_ENV, raising=False)
    monkeypatch.setattr(hardware, "default_device", lambda: "cpu")
    monkeypatch.setattr(hardware, "cpu_flags", lambda: frozenset({"avx2"}))
    with ModelServers() as servers:
        prepared = servers.prepare(ResolvedModel("harness/default"))
        assert prepared.args == {"dtype": "float32"}
        forced = servers.prepare(ResolvedModel("harness/other", {"dtype": "bf16"}))
        assert forced.args == {"dtype": "bfloat16"}
        # Models the harness does not run are passed through untouched.
        assert servers.prepare(ResolvedModel("scripted/x")) == ResolvedModel("scripted/x")
        meta = servers.serving_metadata()
    assert set(meta) == {"harness/default", "harness/other"}
    assert meta["harness/default"]["backend"] == "in-process"
    assert "no native bf16" in meta["harness/default"]["dtype"]["reason"]
    assert meta["harness/other"]["dtype"]["overridden"] is True


def test_vlm_specs_resolve_and_are_labelled_untrained(monkeypatch):
    from harness.models.vlm import VLM_NAME

    assert resolve_model("default-vlm", "transformers").name == "harness/default-vlm"
    assert resolve_model("default-vlm-hf").name == "harness/default-vlm"
    served = resolve_model("default-vlm")
    assert served.needs_vllm and served.name == f"vllm/{VLM_NAME}" and "untrained" in VLM_NAME
    monkeypatch.delenv(hardware.DTYPE_ENV, raising=False)
    with ModelServers() as servers:
        servers.prepare(ResolvedModel("harness/default-vlm"))
        meta = servers.serving_metadata()["harness/default-vlm"]
    assert meta["untrained_vision_encoder"] is True and "UNTRAINED" in meta["label"]
