"""Solvers: the OCR baseline, the model under test (image or OCR regions in, ``{reasoning,
answer, bbox}`` out), the feedback loop, and the teacher for trace distillation.

Every method leaves ``state.metadata["docval"]``: the final prediction, the per-round history
(feedback loop), the OCR engine used, and the page's OCR lines (VAL's regions).

Feedback loop (``method=feedback``), three named variants:

- ``feedback_source=gold_free`` (default): only label-free checks (``methods.docval.gold_free``)
  produce feedback; the model (``feedback_applier=model``) or a rule that snaps the box onto its
  own answer's text (``feedback_applier=rule``) applies it. Nothing from the label reaches the
  model: this is a deviation from DocVAL, whose feedback is used for training, not at test time.
- ``feedback_source=oracle``: VAL's verifier feedback, which contains the gold answer and pixel
  offsets to the gold box, is given to the model: a *control* that shows how much the label
  leaks. With ``feedback_applier=rule`` the oracle's corrected output replaces the prediction
  (the ceiling: a model that applies the offsets scores ~100 %).

With ``constrained=on`` (a harness option) every model reply is decoded under the style's
``reply_format`` (``methods.docval.model_io``); either way each reply is classed ``ok`` /
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

from harness.constrained import AnswerFormat as DecodingFormat
from harness.constrained import constrained_enabled
from harness.paths import cache_dir
from methods.docval import (
    BaselineRule,
    Prediction,
    PromptStyle,
    Region,
    ValConfig,
    Validator,
    Word,
    answer_with_ocr,
    build_prompt,
    cached_ocr,
    feedback_prompt,
    gold_free_check,
    lines_from_words,
    make_ocr_engine,
    parse_output,
    regions_to_dicts,
    reply_format,
    snap_to_answer,
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


def _record(pred: Prediction, **extra: Any) -> dict[str, Any]:
    return {**pred.to_dict(), **extra}


def _gold(state: TaskState) -> tuple[list[str], tuple[float, float, float, float] | None]:
    box = state.metadata.get("gold_box")
    return list(state.metadata["answers"]), (None if box is None else tuple(box))  # type: ignore[return-value]


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
    decoding: DecodingFormat | None = None
    try:
        fmt = reply_format(style, box_format, max_new_tokens)
        decoding = DecodingFormat(regex=fmt.regex, name=fmt.name)
    except ValueError:
        if constrained_enabled():  # too few tokens for any reply under the format
            raise

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
            info["prediction"] = _record(pred)
            state.metadata[DOCVAL_KEY] = info
            return state

        model = (
            get_model(role="teacher", default=get_model()) if method == "distill" else get_model()
        )
        gen_config = GenerateConfig(
            max_tokens=max_new_tokens, **(decoding.generate_args() if decoding else {})
        )
        reply_status: list[str | None] = []
        if model_input == "image":
            prompt = build_prompt(question, image_size=size, box_format=box_format, style=style)  # type: ignore[arg-type]
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
                style=style,  # type: ignore[arg-type]
            )
            first = ChatMessageUser(content=prompt)
        messages: list[ChatMessage] = [first]
        output = await model.generate(messages, config=gen_config)
        reply_status.append(decoding.reply_status(output) if decoding else None)
        messages.append(output.message)
        pred = parse_output(output.completion, image_size=size, box_format=box_format)  # type: ignore[arg-type]
        history = [_record(pred, round=0, reply_status=reply_status[-1])]
        info["teacher"] = str(model) if method == "distill" else None

        if method == "feedback":
            validator = Validator(config, mode="verifier")
            answers, gold_box = _gold(state)
            for r in range(1, feedback_rounds + 1):
                if feedback_source == "gold_free":
                    check = gold_free_check(pred, words, regions, config=config)
                    passed, feedback = check.passed, check.feedback
                    history[-1]["gold_free"] = check.to_dict()
                else:
                    if gold_box is None:
                        raise ValueError(
                            f"sample {state.sample_id}: feedback_source=oracle needs a gold box"
                        )
                    report = validator.validate(pred, answers, gold_box, regions)
                    passed, feedback = report.passed, report.priority_fixes
                    history[-1]["oracle_fixes"] = report.priority_fixes
                    if feedback_applier == "rule" and not passed:
                        assert report.corrected_output is not None
                        co = report.corrected_output
                        pred = Prediction(co["answer"], tuple(co["bbox"]), list(co["reasoning"]))  # type: ignore[arg-type]
                        history.append(_record(pred, round=r, applied="oracle corrected output"))
                        continue
                if passed or not feedback:
                    break
                if feedback_applier == "rule":
                    pred = snap_to_answer(pred, words)
                    history.append(_record(pred, round=r, applied="snap box to own answer text"))
                    continue
                messages.append(ChatMessageUser(content=feedback_prompt(feedback, box_format)))
                output = await model.generate(messages, config=gen_config)
                reply_status.append(decoding.reply_status(output) if decoding else None)
                messages.append(output.message)
                pred = parse_output(output.completion, image_size=size, box_format=box_format)  # type: ignore[arg-type]
                history.append(_record(pred, round=r, reply_status=reply_status[-1]))
        state.messages = messages
        state.output = output
        info["prediction"] = _record(pred)
        info["reply_status"] = reply_status
        info["constrained"] = bool(gen_config.extra_body)
        info["history"] = history
        info["loop"] = method == "feedback"
        state.metadata[DOCVAL_KEY] = info
        return state

    return solve
