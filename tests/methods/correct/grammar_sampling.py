"""Replies produced under an AnswerFormat's constraint, without a model: xgrammar (the grammar
engine vLLM uses for structured outputs) masks the embedded model's vocabulary at each step and a
seeded random choice among the allowed tokens stands in for the model — the worst case a
constrained model can produce, so "always parses" is tested on the format, not on a model."""

from __future__ import annotations

import json
from functools import lru_cache

from methods.common import AnswerFormat


@lru_cache(maxsize=2)
def _engine(model_dir: str):
    import xgrammar as xgr
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    info = xgr.TokenizerInfo.from_huggingface(tok)
    return tok, info, xgr.GrammarCompiler(info)


def compile_format(fmt: AnswerFormat, model_dir: str):
    _, _, compiler = _engine(model_dir)
    if fmt.regex is not None:
        return compiler.compile_regex(fmt.regex)
    if fmt.choice is not None:
        return compiler.compile_regex("|".join(f"({c})" for c in fmt.choice))
    return compiler.compile_json_schema(json.dumps(fmt.json_schema), any_whitespace=False)


def constrained_replies(
    fmt: AnswerFormat, model_dir: str, n: int = 3, seed: int = 0, max_tokens: int = 400
) -> list[tuple[str, int]]:
    """`n` replies (text, tokens used) drawn uniformly among the tokens the format allows."""
    import torch
    import xgrammar as xgr

    tok, info, _ = _engine(model_dir)
    grammar = compile_format(fmt, model_dir)
    ids = torch.arange(info.vocab_size)
    gen = torch.Generator().manual_seed(seed)
    stop = set(info.stop_token_ids)
    out = []
    for _ in range(n):
        matcher = xgr.GrammarMatcher(grammar)
        mask = xgr.allocate_token_bitmask(1, info.vocab_size)
        tokens: list[int] = []
        while not matcher.is_terminated() and len(tokens) < max_tokens:
            matcher.fill_next_token_bitmask(mask)
            allowed = ids[((mask[0][ids // 32] >> (ids % 32)) & 1).bool()]
            choice = int(allowed[torch.randint(len(allowed), (1,), generator=gen)])
            assert matcher.accept_token(choice)
            tokens.append(choice)
        assert matcher.is_terminated(), f"{fmt.name}: no end within {max_tokens} tokens"
        out.append((tok.decode([t for t in tokens if t not in stop]), len(tokens)))
    return out
