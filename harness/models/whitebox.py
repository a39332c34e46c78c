"""White-box handle on a local HF causal LM: per-token logits, LM-head inputs, head weights.

`ood_hallucination` and the LLM anomaly detectors build on this. The LM head's input is read with
a forward pre-hook on the output embedding, so it is exactly what the head multiplies by W (after
the final norm), whatever the architecture calls its hidden states.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.models.embedded import DEFAULT_ALIASES
from harness.models.grammar import Constraint, logits_processors_for
from harness.models.hardware import Device, DtypeChoice, apply_torch_threads, choose_dtype
from harness.models.served import served_model_dtypes, served_models

WHITEBOX_OVERRIDE_ENV = "HARNESS_WHITEBOX_MODEL"


class WhiteBoxError(RuntimeError):
    """A white-box model cannot be resolved or loaded."""


@dataclass
class Generation:
    """One greedy continuation; arrays cover the generated tokens (EOS included when emitted)."""

    prompt: str
    text: str
    token_ids: list[int]
    finish_reason: str  # "stop" (EOS or stop string) or "length"
    prompt_tokens: int
    features: np.ndarray | None = None  # (T, d) float32: LM-head input per generated token
    logits: np.ndarray | None = None  # (T, V) float32: raw logits that produced each token


@dataclass
class ForwardOutput:
    """A teacher-forced pass over one text."""

    token_ids: list[int]
    logits: np.ndarray  # (T, V) float32; row t predicts token t+1
    features: np.ndarray  # (T, d) float32: LM-head input at each position


@dataclass
class _Capture:
    chunks: list[Any] = field(default_factory=list)


class WhiteBoxLM:
    """Greedy generation and teacher-forced passes with access to the LM head's inputs."""

    _shared: dict[str, WhiteBoxLM] = {}
    _shared_lock = threading.Lock()

    def __init__(
        self, model: Any, tokenizer: Any, name: str, dtype_choice: DtypeChoice | None = None
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        #: The dtype the weights run in and why (`harness.models.hardware.choose_dtype`).
        self.dtype_choice = dtype_choice or DtypeChoice(
            _dtype_name(getattr(model, "dtype", None)), "set by the caller"
        )
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        # Generation runs on a worker thread under inspect; one forward at a time per model.
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- construction
    @classmethod
    def load(
        cls, name_or_path: str = "default", device: str = "cpu", dtype: Any = "float32"
    ) -> WhiteBoxLM:
        """Load a fresh copy (use this when you will fine-tune the weights).

        float32 by default, since optimiser updates vanish in bf16 weights; `dtype="auto"` (or
        None) applies the hardware rule that `shared` uses, and a torch dtype or a name
        (`bfloat16`, `float32`, ...) sets it.
        """
        choice = _dtype_choice(dtype, device)
        return cls._load(name_or_path, device, choice)

    @classmethod
    def _load(cls, name_or_path: str, device: str, choice: DtypeChoice) -> WhiteBoxLM:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = resolve_model_path(name_or_path)
        apply_torch_threads()  # one CPU left over: OpenMP threads spin when a CPU is taken
        try:
            tokenizer = AutoTokenizer.from_pretrained(path)
            model = AutoModelForCausalLM.from_pretrained(path, dtype=choice.torch_dtype)
        except OSError as exc:
            raise WhiteBoxError(f"Cannot load a causal LM from {path}: {exc}") from exc
        model.to(device)  # type: ignore[arg-type]  # transformers types .to() as a model
        model.eval()
        return cls(model, tokenizer, name=str(name_or_path), dtype_choice=choice)

    @classmethod
    def shared(cls, name_or_path: str = "default", dtype: Any = None) -> WhiteBoxLM:
        """One read-only instance per model and dtype per process (do not fine-tune it).

        `dtype` None or `auto`: bf16 where the hardware computes it natively, else float32
        (`harness.models.hardware.choose_dtype`; `HARNESS_DTYPE` overrides), the same rule the
        vLLM server and the in-process provider follow.
        """
        choice = _dtype_choice(dtype, "cpu")
        key = f"{resolve_model_path(name_or_path)}|{choice.dtype}"
        with cls._shared_lock:
            if key not in cls._shared:
                cls._shared[key] = cls._load(name_or_path, "cpu", choice)
            return cls._shared[key]

    # ---------------------------------------------------------------- head
    @property
    def lm_head(self) -> Any:
        return self.model.get_output_embeddings()

    @property
    def lm_head_weight(self) -> Any:
        """(V, d) float32 weight of the LM head (tied to the input embeddings for SmolLM2).

        float32 whatever the model runs in (a bf16 weight converts exactly), so geometry on it
        needs no dtype handling.
        """
        return self.lm_head.weight.detach().float()

    @property
    def lm_head_bias(self) -> Any | None:
        """(V,) float32 bias of the LM head, or None for a bias-free head."""
        bias = getattr(self.lm_head, "bias", None)
        return None if bias is None else bias.detach().float()

    @property
    def eos_token_ids(self) -> set[int]:
        ids: set[int] = set()
        for source in (
            self.tokenizer.eos_token_id,
            getattr(self.model.generation_config, "eos_token_id", None),
        ):
            if isinstance(source, int):
                ids.add(source)
            elif isinstance(source, (list, tuple)):
                ids.update(int(i) for i in source)
        return ids

    def chat_prompt(self, user: str, system: str | None = None) -> str:
        """The model's chat template applied to one user turn, ready for generation."""
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user}
        ]
        return self.chat_template(messages)

    def chat_template(self, messages: list[dict[str, str]]) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
        # Base models without a template: a plain transcript.
        lines = [f"{m['role']}: {m['content']}" for m in messages]
        return "\n".join(lines) + "\nassistant:"

    # ---------------------------------------------------------------- generation
    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int = 128,
        *,
        record: bool = True,
        batch_size: int = 8,
        stop: Sequence[str] | None = None,
        min_new_tokens: int = 0,
        constraints: Sequence[Constraint | None] | None = None,
    ) -> list[Generation]:
        """Greedy continuations of already-formatted prompts (apply `chat_prompt` first).

        `min_new_tokens` holds EOS back that long (benchmarks use it to decode a fixed length).
        `constraints` (one per prompt, None = free) restrict decoding to a JSON schema, regex,
        choice list or forced tool call (`harness.models.grammar`); recorded logits stay raw.
        """
        if constraints is not None and len(constraints) != len(prompts):
            raise ValueError(f"{len(constraints)} constraints for {len(prompts)} prompts")
        results: list[Generation] = []
        for start in range(0, len(prompts), max(1, batch_size)):
            batch = list(prompts[start : start + batch_size])
            rows = None if constraints is None else list(constraints[start : start + batch_size])
            results.extend(
                self._generate_batch(
                    batch, max_new_tokens, record, stop or (), min_new_tokens, rows
                )
            )
        return results

    def _generate_batch(
        self,
        prompts: list[str],
        max_new_tokens: int,
        record: bool,
        stop: Sequence[str],
        min_new_tokens: int = 0,
        constraints: list[Constraint | None] | None = None,
    ) -> list[Generation]:
        import torch

        tok = self.tokenizer
        tok.padding_side = "left"
        enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        enc = {k: v.to(self.model.device) for k, v in enc.items()}
        capture = _Capture()
        handle = None
        if record:

            def _hook(_module: Any, inputs: tuple[Any, ...]) -> None:
                capture.chunks.append(inputs[0][:, -1, :].detach().float().cpu())

            handle = self.lm_head.register_forward_pre_hook(_hook)
        eos = sorted(self.eos_token_ids)
        processors = logits_processors_for(
            self, tok, int(self.lm_head.weight.shape[0]), constraints
        )
        try:
            out = _greedy_generate(
                self,
                enc,
                processors,
                eos,
                max_new_tokens,
                min_new_tokens,
                output_logits=record,
                return_dict_in_generate=True,
            )
        finally:
            if handle is not None:
                handle.remove()
        prompt_len = enc["input_ids"].shape[1]
        sequences = out.sequences[:, prompt_len:].cpu().numpy()
        logits = torch.stack(out.logits, dim=1).float().cpu().numpy() if record else None
        feats = torch.stack(capture.chunks, dim=1).numpy() if record else None
        eos_set = set(eos)
        generations = []
        for i, prompt in enumerate(prompts):
            ids, text, finish = _finish(tok, [int(t) for t in sequences[i]], eos_set, stop)
            length = len(ids)
            n_prompt = int(enc["attention_mask"][i].sum())
            generations.append(
                Generation(
                    prompt=prompt,
                    text=text,
                    token_ids=ids,
                    finish_reason=finish,
                    prompt_tokens=n_prompt,
                    features=None if feats is None else np.ascontiguousarray(feats[i, :length]),
                    logits=None if logits is None else np.ascontiguousarray(logits[i, :length]),
                )
            )
        return generations

    # ---------------------------------------------------------------- teacher forcing
    def forward(
        self, texts: Sequence[str], *, add_special_tokens: bool = False
    ) -> list[ForwardOutput]:
        """Logits and LM-head inputs at every position of each text (one text per pass)."""
        import torch

        outputs = []
        for text in texts:
            ids = self.tokenizer(text, return_tensors="pt", add_special_tokens=add_special_tokens)[
                "input_ids"
            ]
            capture = _Capture()

            def _hook(_module: Any, inputs: tuple[Any, ...]) -> None:
                capture.chunks.append(inputs[0][0].detach().float().cpu())  # noqa: B023

            handle = self.lm_head.register_forward_pre_hook(_hook)
            try:
                with self._lock, torch.inference_mode():
                    logits = self.model(input_ids=ids.to(self.model.device)).logits[0]
            finally:
                handle.remove()
            outputs.append(
                ForwardOutput(
                    token_ids=[int(t) for t in ids[0]],
                    logits=logits.float().cpu().numpy(),
                    features=capture.chunks[-1].numpy(),
                )
            )
        return outputs

    def continuation_logprobs(
        self, prompts: Sequence[str], continuations: Sequence[str], batch_size: int = 8
    ) -> list[np.ndarray]:
        """log p(continuation token | prompt, earlier continuation tokens), one array per pair.

        Prompt and continuation are tokenized apart and concatenated, so token boundaries at the
        seam are the continuation's own (as lm-eval-harness does for loglikelihood requests).
        """
        import torch

        if len(prompts) != len(continuations):
            raise ValueError(
                f"continuation_logprobs: {len(prompts)} prompts but {len(continuations)} continuations"
            )
        tok = self.tokenizer
        results: list[np.ndarray] = []
        for start in range(0, len(prompts), max(1, batch_size)):
            pairs = list(
                zip(
                    prompts[start : start + batch_size],
                    continuations[start : start + batch_size],
                    strict=False,
                )
            )
            rows, spans = [], []
            for prompt, cont in pairs:
                p_ids = tok(prompt, add_special_tokens=False)["input_ids"]
                c_ids = tok(cont, add_special_tokens=False)["input_ids"]
                if not c_ids:
                    raise ValueError(
                        f"continuation_logprobs: empty continuation for prompt {prompt[:60]!r}"
                    )
                if not p_ids:
                    # Nothing to condition the first token on: use BOS/EOS as the context.
                    p_ids = [tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id]
                rows.append(p_ids + c_ids)
                spans.append((len(p_ids), len(c_ids)))
            width = max(len(r) for r in rows)
            pad = tok.pad_token_id
            ids = torch.full((len(rows), width), pad, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for i, row in enumerate(rows):  # right padding keeps positions aligned at the start
                ids[i, : len(row)] = torch.tensor(row)
                mask[i, : len(row)] = 1
            with self._lock, torch.inference_mode():
                logits = self.model(
                    input_ids=ids.to(self.model.device), attention_mask=mask.to(self.model.device)
                ).logits
                logprobs = torch.log_softmax(logits.float(), dim=-1).cpu()
            for i, (n_prompt, n_cont) in enumerate(spans):
                targets = ids[i, n_prompt : n_prompt + n_cont]
                rows_lp = logprobs[i, n_prompt - 1 : n_prompt + n_cont - 1]
                results.append(rows_lp.gather(1, targets[:, None])[:, 0].numpy())
        return results


def _greedy_generate(
    lm: Any,
    enc: Any,
    processors: Any,
    eos: list[int],
    max_new_tokens: int,
    min_new_tokens: int,
    **extra: Any,
) -> Any:
    """`generate` on the handle's model (`lm.model`, under `lm._lock`), decoding greedily (the
    model's own sampling settings switched off); `min_new_tokens` holds EOS back that long.
    Shared by the text (`WhiteBoxLM`) and the vision (`VisionLM`) handle."""
    import torch

    with lm._lock, torch.inference_mode():
        return lm.model.generate(
            **enc,
            logits_processor=processors,
            max_new_tokens=max_new_tokens,
            min_new_tokens=min_new_tokens or None,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            eos_token_id=eos or None,
            pad_token_id=lm.tokenizer.pad_token_id,
            **extra,
        )


def _finish(
    tok: Any, ids: list[int], eos: set[int], stop: Sequence[str]
) -> tuple[list[int], str, str]:
    """One row's generated ids up to its first EOS (kept), then cut at the first stop string:
    (ids, decoded text, finish reason "stop" or "length")."""
    length, finish = len(ids), "length"
    for pos, token in enumerate(ids):
        if token in eos:
            length, finish = pos + 1, "stop"
            break
    ids = ids[:length]
    text = tok.decode(ids, skip_special_tokens=True)
    if stop:
        cut = _stop_cut(tok, ids, stop)
        if cut is not None:
            ids, finish = ids[:cut], "stop"
            text = _truncate_at_stop(tok.decode(ids, skip_special_tokens=True), stop)
    return ids, text, finish


def _stop_cut(tok: Any, ids: list[int], stop: Sequence[str]) -> int | None:
    """Smallest token count whose decoded text contains a stop string."""
    for n in range(1, len(ids) + 1):
        text = tok.decode(ids[:n], skip_special_tokens=True)
        if any(s in text for s in stop):
            return n
    return None


def _truncate_at_stop(text: str, stop: Sequence[str]) -> str:
    cut = min((text.find(s) for s in stop if s in text), default=-1)
    return text if cut < 0 else text[:cut]


def _dtype_name(dtype: Any) -> Any:
    name = str(dtype).removeprefix("torch.") if dtype is not None else "float32"
    return name if name in ("bfloat16", "float32", "float16") else "float32"


def _dtype_choice(dtype: Any, device: str) -> DtypeChoice:
    """A DtypeChoice from None/'auto' (hardware rule), a dtype name, or a torch dtype."""
    target: Device = "cuda" if str(device).startswith("cuda") else "cpu"
    if dtype is None or isinstance(dtype, str):
        return choose_dtype(dtype, device=target, source="the caller")
    return DtypeChoice(_dtype_name(dtype), f"{_dtype_name(dtype)}: set by the caller", target, True)


def resolve_model_path(name_or_path: str | os.PathLike[str]) -> Path:
    """Map an alias, an inspect model name or a folder to a local HF model folder."""
    from harness.models.embedded import embedded_model_dir

    name = str(name_or_path)
    if name in DEFAULT_ALIASES:
        return embedded_model_dir()
    for prefix in ("vllm/", "hf/", "harness/", "transformers/", "vllm-completions/"):
        if name.startswith(prefix):
            rest = name[len(prefix) :]
            if rest in DEFAULT_ALIASES or rest == "":
                return embedded_model_dir()
            name = rest
            break
    path = Path(name).expanduser()
    if path.is_dir() and (path / "config.json").is_file():
        return path.resolve()
    raise WhiteBoxError(
        f"No local HF model folder for '{name_or_path}': white-box access needs the weights on this "
        f"machine (a folder with config.json, 'default' for the embedded model, or hf/<path>, "
        f"vllm/<path>). Set {WHITEBOX_OVERRIDE_ENV}=<folder> to name the weights explicitly."
    )


def whitebox_for_model(model_name: str) -> WhiteBoxLM:
    """The white-box handle on the same weights (and dtype) as an inspect model name.

    `HARNESS_WHITEBOX_MODEL` overrides the mapping (for API-served models whose weights are local,
    and for tests driven by the scripted provider). A model the harness serves itself runs here
    in the dtype the server was started with.
    """
    override = os.environ.get(WHITEBOX_OVERRIDE_ENV, "").strip()
    if override:
        return WhiteBoxLM.shared(override)
    name = str(model_name)
    served = _served_model_paths().get(name)
    return WhiteBoxLM.shared(served or name, dtype=served_model_dtypes().get(name))


def _served_model_paths() -> dict[str, str]:
    """Model names the harness itself serves (vLLM), mapped to the folders behind them."""
    return served_models()
