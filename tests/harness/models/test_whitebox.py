"""The white-box handle on the real embedded model (few tokens; CPU)."""

import numpy as np
import pytest
import torch

from harness.models import WhiteBoxError, WhiteBoxLM, resolve_model_path, whitebox_for_model

pytestmark = pytest.mark.embedded


@pytest.fixture(scope="module")
def lm(embedded_dir):
    torch.set_num_threads(1)
    return WhiteBoxLM.shared("default")


def test_generate_records_features_that_reproduce_logits(lm):
    prompt = lm.chat_prompt("What is 2+3?")
    [gen] = lm.generate([prompt], max_new_tokens=12)
    assert gen.text and len(gen.token_ids) == gen.features.shape[0] == gen.logits.shape[0]
    d = lm.lm_head_weight.shape[1]
    assert gen.features.shape[1] == d and gen.logits.shape[1] == lm.lm_head_weight.shape[0]
    # The recorded features are the LM head's input: W f (+ b) gives back the logits.
    recomputed = gen.features @ lm.lm_head_weight.numpy().T
    np.testing.assert_allclose(recomputed, gen.logits, rtol=1e-4, atol=1e-3)
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
