import numpy as np
import pytest
import torch

from methods.dispat import TabularSerializer, encode_rows, score_encoded
from methods.dispat._lm import lm_loss, prepare_finetuning, sample_sequences, sequence_logprob


@pytest.fixture
def rows():
    X = np.array([[0.0, 1.0, 2.0], [1.0, -1.0, 12.0], [3.0, 0.5, 0.0]])
    s = TabularSerializer(binning="none").fit(X)
    return s.serialize(X, rng=np.random.default_rng(0))


def test_value_mask_covers_exactly_the_value_characters(tiny_tokenizer, rows):
    enc = encode_rows(tiny_tokenizer, rows)
    for i, row in enumerate(rows):
        n = int(enc.attention_mask[i].sum())
        ids = enc.input_ids[i, :n].tolist()
        assert ids[0] == tiny_tokenizer.bos_token_id and ids[-1] == tiny_tokenizer.eos_token_id
        value_text = tiny_tokenizer.decode(
            [t for t, m in zip(ids, enc.value_mask[i, :n].tolist(), strict=False) if m]
        )
        expected = "".join(row.text[a:b] for a, b in row.value_spans)
        # Tokens overlapping a value may carry its leading space: compare without spaces.
        assert value_text.replace(" ", "") == expected.replace(" ", "")
        assert not enc.value_mask[i, n:].any()


def test_value_score_is_the_masked_sum_of_token_nll(tiny_lm_factory, rows):
    model, tok = tiny_lm_factory()
    enc = encode_rows(tok, rows)
    got_values = score_encoded(model, enc, score_tokens="values", batch_size=2)
    got_all = score_encoded(model, enc, score_tokens="all", batch_size=2)
    for i in range(len(rows)):
        n = int(enc.attention_mask[i].sum())
        ids = enc.input_ids[i : i + 1, :n]
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=ids).logits[0, :-1], -1)
        nll = -logp[torch.arange(n - 1), ids[0, 1:]]
        assert got_values[i] == pytest.approx(float(nll[enc.value_mask[i, 1:n]].sum()), rel=1e-5)
        assert got_all[i] == pytest.approx(float(nll.sum()), rel=1e-5)
        assert got_values[i] < got_all[i]


def test_max_length_and_bad_mode_errors(tiny_tokenizer, rows, tiny_lm_factory):
    with pytest.raises(ValueError, match="above max_length=5"):
        encode_rows(tiny_tokenizer, rows, max_length=5)
    with pytest.raises(ValueError, match="no rows"):
        encode_rows(tiny_tokenizer, [])
    model, tok = tiny_lm_factory()
    with pytest.raises(ValueError, match="score_tokens"):
        score_encoded(model, encode_rows(tok, rows), score_tokens="names")  # type: ignore[arg-type]


def test_samples_are_masked_after_the_first_eos(tiny_lm_factory):
    model, tok = tiny_lm_factory()
    ids, att = sample_sequences(model, tok, 5, max_new_tokens=12, seed=3, batch_size=2)
    assert ids.shape[0] == 5 and ids.shape[1] <= 13
    assert (ids[:, 0] == tok.bos_token_id).all()
    for i in range(5):
        n = int(att[i].sum())
        assert att[i, :n].all() and not att[i, n:].any()
        gen = ids[i, 1:n].tolist()
        assert tok.eos_token_id not in gen[:-1]  # an EOS can only be the last kept token
        assert gen[-1] == tok.eos_token_id or n == 13
    again, _ = sample_sequences(model, tok, 5, max_new_tokens=12, seed=3, batch_size=2)
    assert torch.equal(ids, again)  # seeded


def test_lora_trains_only_adapters_and_full_trains_everything(tiny_lm_factory, rows):
    model, tok = tiny_lm_factory()
    lora = prepare_finetuning(model, "lora", lora_r=2, lora_alpha=4, lora_dropout=0.0)
    trainable = [n for n, p in lora.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    enc = encode_rows(tok, rows)
    loss = lm_loss(lora, enc)
    loss.backward()
    full, _ = tiny_lm_factory()
    full = prepare_finetuning(full, "full")
    assert all(p.requires_grad for p in full.parameters())
    lp = sequence_logprob(full, enc.input_ids, enc.attention_mask)
    assert lp.shape == (len(rows),) and (lp < 0).all()
    with pytest.raises(ValueError, match="finetune"):
        prepare_finetuning(full, "qlora")  # type: ignore[arg-type]
