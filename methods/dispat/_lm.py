"""Causal-LM plumbing shared by AnoLLM and DiSPaT: encoding with value masks, token NLL,
sequence log-probabilities, fine-tuning steps, sampling, LoRA.

Everything takes a transformers causal LM and its (fast) tokenizer; nothing here knows about
inspect or the harness, so the unit tests run it on a tiny randomly initialised model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from methods.dispat._serialize import SerializedRow

LMFactory = Callable[[], tuple[Any, Any]]  # () -> (fresh causal LM, tokenizer)
Finetune = Literal["full", "lora"]
ScoreTokens = Literal["values", "all"]

# AnoLLM's LoRA targets (written for SmolLM; every Llama-style block has them).
_LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass
class EncodedRows:
    """Right-padded token ids; ``value_mask`` marks tokens overlapping a value's characters."""

    input_ids: torch.Tensor  # (B, T) long
    attention_mask: torch.Tensor  # (B, T) long
    value_mask: torch.Tensor  # (B, T) bool

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])

    def select(self, idx: Sequence[int] | np.ndarray) -> EncodedRows:
        index = torch.as_tensor(np.asarray(idx), dtype=torch.long)
        return EncodedRows(
            self.input_ids[index], self.attention_mask[index], self.value_mask[index]
        )


def special_ids(tokenizer: Any) -> tuple[int, int, int]:
    """(start, eos, pad) ids. Rows start with BOS (or EOS when there is none), so the first
    column name is predicted too, and end with EOS, so the LM learns where a row stops."""
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ValueError("the tokenizer has no eos_token_id; the LM detectors need one")
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else eos
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
    return int(start), int(eos), int(pad)


def encode_rows(
    tokenizer: Any, rows: Sequence[SerializedRow], *, max_length: int = 1024
) -> EncodedRows:
    """Tokenise serialised rows as ``[start] text [eos]``; marks the value tokens."""
    if not rows:
        raise ValueError("encode_rows: no rows")
    start, eos, pad = special_ids(tokenizer)
    seqs: list[list[int]] = []
    masks: list[list[bool]] = []
    for i, row in enumerate(rows):
        enc = tokenizer(row.text, add_special_tokens=False, return_offsets_mapping=True)
        ids = list(enc["input_ids"])
        vmask = [_overlaps(s, e, row.value_spans) for s, e in enc["offset_mapping"]]
        seq = [start, *ids, eos]
        if len(seq) > max_length:
            raise ValueError(
                f"serialised row {i} is {len(seq)} tokens, above max_length={max_length}; "
                "raise max_length or use shorter column names/binning"
            )
        seqs.append(seq)
        masks.append([False, *vmask, False])
    width = max(len(s) for s in seqs)
    input_ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    attention = torch.zeros((len(seqs), width), dtype=torch.long)
    value_mask = torch.zeros((len(seqs), width), dtype=torch.bool)
    for i, (seq, vm) in enumerate(zip(seqs, masks, strict=False)):
        input_ids[i, : len(seq)] = torch.tensor(seq)
        attention[i, : len(seq)] = 1
        value_mask[i, : len(seq)] = torch.tensor(vm)
    return EncodedRows(input_ids, attention, value_mask)


def _overlaps(start: int, end: int, spans: Sequence[tuple[int, int]]) -> bool:
    # A BPE token such as " 0" starts on the space before the value: overlap, not containment.
    return end > start and any(start < b and end > a for a, b in spans)


def token_nll(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Per-position NLL of token t+1 given tokens <= t: shape (B, T-1), zero where padded."""
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1, :]
    targets = input_ids[:, 1:]
    # cross_entropy avoids materialising a second (B, T, V) log-softmax tensor (V = 49k here).
    nll = torch.nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none"
    ).view(targets.shape)
    return nll * attention_mask[:, 1:].to(nll.dtype)


def sequence_logprob(
    model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor
) -> torch.Tensor:
    """log p(x) of each whole sequence (every attended token after the start token): (B,)."""
    return -token_nll(model, input_ids, attention_mask).sum(dim=1)


@torch.no_grad()
def score_encoded(
    model: Any, enc: EncodedRows, *, score_tokens: ScoreTokens = "values", batch_size: int = 16
) -> np.ndarray:
    """Summed NLL per row over the value tokens (``values``) or every token (``all``)."""
    if score_tokens not in ("values", "all"):
        raise ValueError(f"score_tokens must be 'values' or 'all', got {score_tokens!r}")
    was_training = model.training
    model.eval()
    out = np.empty(len(enc), dtype=np.float64)
    try:
        for lo in range(0, len(enc), batch_size):
            b = enc.select(range(lo, min(lo + batch_size, len(enc))))
            width = int(b.attention_mask.sum(dim=1).max())  # trim padding shared by the batch
            ids, att = b.input_ids[:, :width], b.attention_mask[:, :width]
            nll = token_nll(model, ids, att)
            mask = b.value_mask[:, 1:width] if score_tokens == "values" else att[:, 1:].bool()
            out[lo : lo + len(b)] = (nll * mask.to(nll.dtype)).sum(dim=1).double().numpy()
    finally:
        model.train(was_training)
    return out


def lm_loss(model: Any, enc: EncodedRows) -> torch.Tensor:
    """Mean causal-LM loss over the attended target tokens (the AnoLLM training objective)."""
    width = int(enc.attention_mask.sum(dim=1).max())
    ids, att = enc.input_ids[:, :width], enc.attention_mask[:, :width]
    nll = token_nll(model, ids, att)
    return nll.sum() / att[:, 1:].sum().clamp(min=1)


@torch.no_grad()
def sample_sequences(
    model: Any,
    tokenizer: Any,
    n: int,
    *,
    max_new_tokens: int,
    temperature: float = 1.0,
    seed: int = 0,
    batch_size: int = 16,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Ancestral samples from the LM starting at the start token (pure sampling, no top-k/p).

    Returns right-padded ``(input_ids, attention_mask)`` including the start token; tokens after
    the first EOS are masked out (the EOS itself is kept: it is part of the sampled row).
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    start, eos, pad = special_ids(tokenizer)
    was_training = model.training
    model.eval()
    torch.manual_seed(seed)
    chunks: list[torch.Tensor] = []
    try:
        for lo in range(0, n, batch_size):
            m = min(batch_size, n - lo)
            prompt = torch.full((m, 1), start, dtype=torch.long)
            out = model.generate(
                input_ids=prompt,
                attention_mask=torch.ones_like(prompt),
                do_sample=True,
                temperature=temperature,
                top_k=0,
                top_p=1.0,
                max_new_tokens=max_new_tokens,
                min_new_tokens=1,
                pad_token_id=pad,
                eos_token_id=eos,
            )
            chunks.append(out)
    finally:
        model.train(was_training)
    width = max(c.shape[1] for c in chunks)
    ids = torch.full((n, width), pad, dtype=torch.long)
    att = torch.zeros_like(ids)
    row = 0
    for c in chunks:
        for k in range(c.shape[0]):
            ids[row, : c.shape[1]] = c[k]
            hits = (c[k, 1:] == eos).nonzero()
            # Up to and including the first EOS; a row without EOS ran to its chunk's length.
            length = 1 + (int(hits[0]) + 1 if len(hits) else c.shape[1] - 1)
            att[row, :length] = 1
            row += 1
    return ids, att


def prepare_finetuning(
    model: Any,
    finetune: Finetune,
    *,
    lora_r: int = 8,
    lora_alpha: int = 32,
    lora_dropout: float = 0.1,
) -> Any:
    """Full fine-tuning (every weight trainable) or LoRA adapters on the attention/MLP projections."""
    if finetune == "full":
        for p in model.parameters():
            p.requires_grad_(True)
        return model
    if finetune != "lora":
        raise ValueError(f"finetune must be 'full' or 'lora', got {finetune!r}")
    from peft import LoraConfig, get_peft_model

    present = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    targets = [t for t in _LORA_TARGETS if t in present]
    if not targets:
        raise ValueError(f"no LoRA target modules ({', '.join(_LORA_TARGETS)}) found in the model")
    config = LoraConfig(
        r=lora_r,
        lora_alpha=lora_alpha,
        lora_dropout=lora_dropout,
        target_modules=targets,
        bias="none",
    )
    return get_peft_model(model, config)


def make_optimizer(model: Any, lr: float, total_steps: int) -> tuple[torch.optim.Optimizer, Any]:
    """AdamW with a linear decay to zero (the HF Trainer default AnoLLM trained with)."""
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    total = max(1, total_steps)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: max(0.0, 1.0 - step / total))
    return opt, sched
