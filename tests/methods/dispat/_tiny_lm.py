"""A tiny randomly initialised Llama and a BPE tokenizer trained on serialised rows, so the LM
detectors' code paths run in a second without the embedded model (shared by the dispat tests)."""

from __future__ import annotations


def tiny_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = [
        f"{c} is {v:.1f}, {d} is {-v:.1f}, E is {v * 3:.1f}"
        for c in "ABCDEFG"
        for d in "ABCDEFG"
        for v in (-2.5, -1.0, -0.3, 0.0, 0.4, 1.7, 12.3)
    ]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<unk>", "<s>", "</s>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
    )


def tiny_lm_factory_for(tokenizer):
    """A factory returning a fresh, identically initialised tiny Llama per call."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    def factory():
        torch.manual_seed(0)
        config = LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=4,
            max_position_embeddings=512,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        return LlamaForCausalLM(config), tokenizer

    return factory
