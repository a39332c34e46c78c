"""Solvers: the OCR baseline, the model under test (image or OCR regions in, ``{reasoning,
answer, bbox}`` out), the feedback loop, and the teacher for trace distillation.

Every method leaves ``state.metadata["docval"]``: the final prediction, the per-round history
(feedback loop), the OCR engine used, and the page's OCR lines (VAL's regions).

Feedback loop (``method=feedback``), three named variants:

- ``feedback_source=gold_free`` (default): only label-free checks (``methods.docval.gold_free_check``)
  produce feedback; the model (``feedback_applier=model``) or a rule that snaps the box onto its
  own answer's text (``feedback_applier=rule``) applies it. Nothing from the label reaches the
  model: this is a deviation from DocVAL, whose feedback is used for training, not at test time.
- ``feedback_source=oracle``: VAL's verifier feedback, which contains the gold answer and pixel
  offsets to the gold box, is given to the model: a *control* that shows how much the label
  leaks. With ``feedback_applier=rule`` the oracle's corrected output replaces the prediction
  (the ceiling: a model that applies the offsets scores ~100 %).

With ``constrained=on`` (a harness option) every model reply is decoded under the style's
``reply_format`` (``methods.docval.reply_format``); either way each reply is classed ``ok`` /
``truncated`` (cut by the token limit) / ``format_failure`` in ``reply_status``, so format is
told apart from skill.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from pathlib import Path
from typing import Any, Literal

from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from harness.constrained import constrained_enabled, decoding_format, generate_args
from harness.constrained import reply_status as reply_status_of
from harness.paths import cache_dir
from methods.common import AnswerFormat
from methods.docval import (
    BaselineRule,
    Check,
    Prediction,
    PromptStyle,
    Region,
    ValConfig,
    Validator,
    Word,
    answer_with_ocr,
    build_prompt,
    cached_ocr,
    feedback_loop,
    feedback_prompt,
    gold_free_checker,
    history_entry,
    lines_from_words,
    make_ocr_engine,
    oracle_checker,
    parse_output,
    regions_to_dicts,
    reply_format,
    words_from_dicts,
)
from scorers.boxes import BoxFormat

__all__ = [
    "DOCVAL_KEY",
    "FeedbackApplier",
    "FeedbackSource",
    "Method",
    "ModelInput",
    "OcrChoice",
    "docval_solver",
    "image_data_uri",
    "load_page",
]

DOCVAL_KEY = "docval"
Method = Literal["model", "ocr", "feedback", "distill"]
ModelInput = Literal["ocr", "image"]
OcrChoice = Literal["tesseract", "rapidocr", "gold"]
FeedbackSource = Literal["gold_free", "oracle"]
FeedbackApplier = Literal["model", "rule"]

# OCR runs in worker threads; tesseract and onnxruntime each want a core, and the machines this
# runs on are small, so at most two pages are read at once.
_OCR_SLOTS = threading.BoundedSemaphore(2)
_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


def image_data_uri(path: str | Path) -> str:
    """The image file as a ``data:`` URI (what inspect's ``ContentImage`` sends to a VLM)."""
    p = Path(path)
    mime = _MIME.get(p.suffix.lower(), "image/png")
    return f"data:{mime};base64," + base64.b64encode(p.read_bytes()).decode("ascii")


def _open_image(path: str) -> Any:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            return img.convert("RGB")
    except (FileNotFoundError, UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"image {path} cannot be read ({exc})") from exc


def _read_words(path: str | None, sample_id: Any) -> list[Word]:
    if not path:
        raise ValueError(
            f"sample {sample_id}: ocr_engine=gold needs the source's own word boxes; this "
            "dataset has none (use tesseract or rapidocr)"
        )
    return words_from_dicts(json.loads(Path(path).read_text()))


def _ocr_sync(engine_name: OcrChoice, metadata: dict[str, Any], sample_id: Any) -> list[Word]:
    if engine_name == "gold":
        return _read_words(metadata.get("gold_words"), sample_id)
    image_path = metadata["image"]
    with _OCR_SLOTS:
        return cached_ocr(
            make_ocr_engine(engine_name),
            lambda: _open_image(image_path),
            cache_dir() / "docval" / "ocr",
            key=Path(image_path).read_bytes(),
        )


async def load_page(state: TaskState, engine_name: OcrChoice) -> tuple[list[Word], list[Region]]:
    """The page's OCR words and lines (cached on disk per image and engine)."""
    words = await asyncio.to_thread(_ocr_sync, engine_name, state.metadata, state.sample_id)
    return words, lines_from_words(words)


def _checker(
    state: TaskState,
    source: FeedbackSource,
    words: list[Word],
    regions: list[Region],
    config: ValConfig,
) -> Check:
    """The loop's check: label-free, or VAL's verifier against the sample's gold (oracle)."""
    if source == "gold_free":
        return gold_free_checker(words, regions, config)
    answers, gold_box = _gold(state)
    if gold_box is None:
        raise ValueError(f"sample {state.sample_id}: feedback_source=oracle needs a gold box")
    return oracle_checker(Validator(config, mode="verifier"), answers, gold_box, regions)


def _gold(state: TaskState) -> tuple[list[str], tuple[float, float, float, float] | None]:
    box = state.metadata.get("gold_box")
    return list(state.metadata["answers"]), (None if box is None else tuple(box))


@solver
def docval_solver(
    method: Method,
    *,
    ocr_engine: OcrChoice,
    answer_rule: BaselineRule,
    model_input: ModelInput,
    box_format: BoxFormat,
    prompt_style: PromptStyle,
    max_new_tokens: int,
    feedback_source: FeedbackSource,
    feedback_applier: FeedbackApplier,
    feedback_rounds: int,
    val_config: ValConfig | None = None,
) -> Solver:
    """Answer the sample's question with text and box (see the module docstring). The settings
    come from the task, which owns their defaults."""
    if feedback_rounds < 1:
        raise ValueError(f"feedback_rounds must be at least 1, got {feedback_rounds}")
    config = val_config or ValConfig()
    style: PromptStyle = "docval_cot" if method == "distill" else prompt_style
    fmt: AnswerFormat | None = None
    try:
        fmt = reply_format(style, box_format, max_new_tokens)
        decoding_format(fmt)  # checked at task load by the decoding engine's rules
    except ValueError:
        if constrained_enabled():  # too few tokens for any reply under the format
            raise
        fmt = None

    async def solve(state: TaskState, generate: Generate) -> TaskState:  # noqa: ARG001 - the model is called directly (roles)
        words, regions = await load_page(state, ocr_engine)
        size = tuple(state.metadata["image_size"])
        question = state.metadata["question"]
        info: dict[str, Any] = {"ocr_engine": ocr_engine, "regions": regions_to_dicts(regions)}
        if method == "ocr":
            pred = answer_with_ocr(question, words, rule=answer_rule, page_height=size[1])
            state.output = ModelOutput.from_content(
                f"ocr-{ocr_engine}/{answer_rule}", pred.answer or ""
            )
            info["prediction"] = history_entry(pred)
            state.metadata[DOCVAL_KEY] = info
            return state

        model = (
            get_model(role="teacher", default=get_model()) if method == "distill" else get_model()
        )
        gen_config = GenerateConfig(max_tokens=max_new_tokens, **generate_args(fmt))
        reply_status: list[str | None] = []
        if model_input == "image":
            prompt = build_prompt(question, image_size=size, box_format=box_format, style=style)
            content: list[Any] = [
                ContentImage(image=image_data_uri(state.metadata["image"])),
                ContentText(text=prompt),
            ]
            first = ChatMessageUser(content=content)
        else:
            prompt = build_prompt(
                question,
                image_size=size,
                box_format=box_format,
                regions=regions,
                style=style,
            )
            first = ChatMessageUser(content=prompt)
        messages: list[ChatMessage] = [first]
        output = await model.generate(messages, config=gen_config)
        reply_status.append(reply_status_of(fmt, output) if fmt else None)
        messages.append(output.message)
        pred = parse_output(output.completion, image_size=size, box_format=box_format)
        history = [history_entry(pred, round=0, reply_status=reply_status[-1])]
        info["teacher"] = str(model) if method == "distill" else None

        if method == "feedback":

            async def reask(feedback: list[str]) -> tuple[Prediction, dict[str, Any]]:
                nonlocal output
                messages.append(ChatMessageUser(content=feedback_prompt(feedback, box_format)))
                output = await model.generate(messages, config=gen_config)
                reply_status.append(reply_status_of(fmt, output) if fmt else None)
                messages.append(output.message)
                reply = parse_output(output.completion, image_size=size, box_format=box_format)
                return reply, {"reply_status": reply_status[-1]}

            pred = await feedback_loop(
                pred,
                history,
                check=_checker(state, feedback_source, words, regions, config),
                reask=reask,
                applier=feedback_applier,
                rounds=feedback_rounds,
                words=words,
            )
        state.messages = messages
        state.output = output
        info["prediction"] = history_entry(pred)
        info["reply_status"] = reply_status
        info["constrained"] = bool(gen_config.extra_body)
        info["history"] = history
        info["loop"] = method == "feedback"
        state.metadata[DOCVAL_KEY] = info
        return state

    return solve
