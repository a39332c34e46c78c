"""The white-box handle on the real embedded model (few tokens; CPU)."""

import numpy as np
import pytest
import torch

from harness.models import WhiteBoxError, WhiteBoxLM, resolve_model_path, whitebox_for_model

pytestmark = pytest.mark.embedded


@pytest.fixture(scope="module")
def lm(embedded_dir):
    torch.set_num_threads(1)
    # A fresh process-wide cache: an earlier test (a served model read white-box in the dtype its
    # server used) may have loaded the same weights with its own dtype reason.
    WhiteBoxLM._shared.clear()
    return WhiteBoxLM.shared("default")


def test_generate_records_features_that_reproduce_logits(lm):
    prompt = lm.chat_prompt("What is 2+3?")
    [gen] = lm.generate([prompt], max_new_tokens=12)
    assert gen.text and len(gen.token_ids) == gen.features.shape[0] == gen.logits.shape[0]
    d = lm.lm_head_weight.shape[1]
    assert gen.features.shape[1] == d and gen.logits.shape[1] == lm.lm_head_weight.shape[0]
    # The recorded features are the LM head's input: W f (+ b) gives back the logits (to the
    # rounding of the dtype the head ran in: bf16 keeps 8 bits of mantissa).
    recomputed = gen.features @ lm.lm_head_weight.numpy().T
    bf16 = lm.dtype_choice.dtype == "bfloat16"
    tolerance = {"rtol": 2e-2, "atol": 0.1} if bf16 else {"rtol": 1e-4, "atol": 1e-3}
    np.testing.assert_allclose(recomputed, gen.logits, **tolerance)
    # Greedy: each generated token is the argmax of its logits.
    assert list(gen.logits.argmax(axis=1)) == gen.token_ids
    assert lm.lm_head_bias is None  # SmolLM2's head is tied and bias-free


def test_batched_generation_matches_single(lm):
    prompts = [lm.chat_prompt("What is 2+3?"), lm.chat_prompt("Name a colour.")]
    batch = lm.generate(prompts, max_new_tokens=8, record=False)
    single = [lm.generate([p], max_new_tokens=8, record=False)[0] for p in prompts]
    for b, s in zip(batch, single, strict=False):
        assert b.token_ids[:4] == s.token_ids[:4]


def test_continuation_logprobs_match_forward(lm):
    prompt, cont = "The capital of France is", " Paris."
    [lp] = lm.continuation_logprobs([prompt], [cont])
    [fwd] = lm.forward([prompt + cont])
    n = len(lp)
    logprobs = torch.log_softmax(torch.tensor(fwd.logits), dim=-1).numpy()
    expected = [
        logprobs[i - 1, fwd.token_ids[i]] for i in range(len(fwd.token_ids) - n, len(fwd.token_ids))
    ]
    np.testing.assert_allclose(lp, expected, atol=1e-3)
    assert lp[0] > -3.0  # " Paris" is likely after this prompt
    with pytest.raises(ValueError, match="empty continuation"):
        lm.continuation_logprobs([prompt], [""])


def test_resolution_errors_are_clear(tmp_path, lm):
    assert resolve_model_path("vllm/default") == resolve_model_path("default")
    assert whitebox_for_model("harness/default") is lm
    with pytest.raises(WhiteBoxError, match="No local HF model folder"):
        resolve_model_path("openai/gpt-4o")
    with pytest.raises(WhiteBoxError, match="No local HF model folder"):
        resolve_model_path(str(tmp_path))


def test_dtype_follows_the_hardware_rule_and_the_served_model(lm, monkeypatch):
    import json

    from harness.models.hardware import choose_dtype

    rule = choose_dtype(device="cpu")
    assert lm.dtype_choice.dtype == rule.dtype and lm.dtype_choice.reason == rule.reason
    assert str(lm.model.dtype) == f"torch.{rule.dtype}"
    assert lm.lm_head_weight.dtype == torch.float32  # geometry always gets float32
    fp32 = WhiteBoxLM.shared("default", dtype="float32")
    assert fp32.model.dtype == torch.float32
    # on a host without native bf16 the rule already chose float32: the same shared instance
    assert fp32.dtype_choice.overridden if rule.dtype != "float32" else fp32 is lm
    assert WhiteBoxLM.shared("default", dtype="fp32") is fp32  # one instance per dtype
    # A model the harness serves in float32 is read white-box in float32 too.
    monkeypatch.setenv("HARNESS_SERVED_MODELS", json.dumps({"vllm/x": str(lm.model.name_or_path)}))
    monkeypatch.setenv("HARNESS_SERVED_DTYPES", json.dumps({"vllm/x": "float32"}))
    assert whitebox_for_model("vllm/x") is fp32
    # Logits in the two dtypes agree to bf16 rounding, and greedy picks the same first tokens.
    prompt = lm.chat_prompt("What is 2+3?")
    a, b = lm.forward([prompt])[0], fp32.forward([prompt])[0]
    assert a.logits[-1].argmax() == b.logits[-1].argmax()
    np.testing.assert_allclose(a.logits[-1], b.logits[-1], atol=0.6)
