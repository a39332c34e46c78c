"""The model path: prompts that ask for ``{reasoning, answer, bbox}`` and the parser of replies.

A vision-language model gets the page image (the task adds it as image content) and the
question; a text-only model gets the OCR text lines with their boxes, in the DocVAL teacher's
region format (``Region #i: [x1, y1, x2, y2] → "text"``). Coordinates in prompts and replies
use ``box_format``: ``pixels``, ``0-1000`` or ``0-1`` of the image size (VLMs differ).

Two reply formats are read, whichever the reply uses: a JSON object
``{"reasoning": ..., "answer": ..., "bbox": [x1, y1, x2, y2]}`` (``prompt_style="json"``) and
DocVAL's seven-step CoT with ``ANSWER:`` and ``BBOX:`` lines (``prompt_style="docval_cot"``, the
teacher's and student's format). Several boxes in one reply are merged into their enclosing box.
A JSON reply cut off before its closing brace (the token limit reached) is read field by field:
a complete ``"answer": "..."`` and ``"bbox": [...]`` count, with a note saying so.
Anything unusable is a ``Prediction`` with ``failure`` set to the reason (a scored miss).

``reply_format`` declares each style's reply as an ``AnswerFormat`` (a regex over the whole reply)
for constrained decoding: every reply in it parses, and its free-text fields are sized so that
even one token per character ends within ``max_new_tokens``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any, Literal, get_args

from methods.common import AnswerFormat
from methods.docval._types import Prediction, Region
from scorers.boxes import BoxFormat, clip_box, enclosing_box, from_pixels, to_pixels, validate_box

__all__ = [
    "PROMPT_STYLES",
    "PromptStyle",
    "build_prompt",
    "feedback_prompt",
    "format_regions",
    "parse_output",
    "reply_format",
]

PromptStyle = Literal["json", "docval_cot"]
PROMPT_STYLES: tuple[PromptStyle, ...] = get_args(PromptStyle)

_UNITS = {
    "pixels": "pixels",
    "0-1000": "thousandths of the image width (x) and height (y), from 0 to 1000",
    "0-1": "fractions of the image width (x) and height (y), from 0 to 1",
}

_COT_STEPS = """Please provide a 7-step chain-of-thought analysis following this structure:
Step 1: Document understanding - the document type and its structure.
Step 2: Question interpretation - what information is requested.
Step 3: Visual region localization - where in the document to look.
Step 4: Field/label identification - the label or field that holds the answer.
Step 5: Answer extraction - the answer text from that region.
Step 6: Spatial verification - check the position and neighbours.
Step 7: Bbox determination - the box [x1, y1, x2, y2] of the answer.

OUTPUT FORMAT:
REASONING:
Step 1: ...
Step 2: ...
Step 3: ...
Step 4: ...
Step 5: ...
Step 6: ...
Step 7: ...

ANSWER: [extracted answer text]
BBOX: [x1, y1, x2, y2]"""

_JSON_FORMAT = (
    "Reply with one JSON object and nothing else, in this form:\n"
    '{"reasoning": "<how you found the answer>", "answer": "<the answer text as written in '
    'the document>", "bbox": [x1, y1, x2, y2]}'
)


def _fmt(v: float, box_format: BoxFormat) -> str:
    if box_format == "0-1":
        return f"{v:.3f}"
    return f"{v:.0f}"


def format_regions(
    regions: Sequence[Region], box_format: BoxFormat, image_size: tuple[int, int]
) -> str:
    """Regions as ``Region #i: [x1, y1, x2, y2] → "text"`` lines (coordinates in ``box_format``)."""
    if not regions:
        return "No text regions detected."
    out = []
    for r in regions:
        box = from_pixels(r.bbox, box_format, image_size)
        coords = ", ".join(_fmt(v, box_format) for v in box)
        out.append(f'Region #{r.id}: [{coords}] → "{r.text}"')
    return "\n".join(out)


def build_prompt(
    question: str,
    *,
    image_size: tuple[int, int],
    box_format: BoxFormat = "pixels",
    regions: Sequence[Region] | None = None,
    style: PromptStyle = "json",
) -> str:
    """The user prompt. With ``regions`` (text-only models) the OCR lines are listed; without,
    the model is expected to see the image, which the caller attaches."""
    w, h = image_size
    units = _UNITS[box_format]
    if regions is not None:
        head = (
            "You answer questions about a document image. You cannot see the image; you get "
            f"its text lines from OCR, each with its box [x1, y1, x2, y2] in {units} "
            f"(the image is {w} x {h} pixels; x grows to the right, y grows downwards).\n\n"
            f"DETECTED TEXT REGIONS IN DOCUMENT:\n{format_regions(regions, box_format, image_size)}"
        )
    else:
        head = (
            "You answer questions about the document image above and locate the answer in it. "
            f"Give boxes as [x1, y1, x2, y2] in {units} (the image is {w} x {h} pixels; x grows "
            "to the right, y grows downwards)."
        )
    tail = _COT_STEPS if style == "docval_cot" else _JSON_FORMAT
    return f"{head}\n\nQUESTION: {question}\n\n{tail}"


def feedback_prompt(feedback: Sequence[str], box_format: BoxFormat) -> str:
    """A follow-up turn after the model's reply: the validator's feedback, asking for a new one."""
    items = "\n".join(f"- {f}" for f in feedback)
    return (
        f"A validator checked your answer and found problems:\n{items}\n\n"
        f"Correct your answer. Boxes are in {_UNITS[box_format]}. Reply in the same format as "
        "before."
    )


# --------------------------------------------------------------------------- reply formats
# Free text: printable ASCII without quote or backslash (valid inside a JSON string as it is; at
# most one token per character for a byte-level tokenizer, so a field is sized in characters).
_FREE = r"[ !#-\[\]-~]"
_VISIBLE = r"[!#-\[\]-~]"
_COORD = {
    "pixels": r"\d{1,4}",
    "0-1000": r"\d{1,4}",
    "0-1": r"(0(\.\d{1,3})?|1(\.0{1,3})?)",
}
_COORD_CHARS = {"pixels": 4, "0-1000": 4, "0-1": 5}
_JSON_FIXED = '{"reasoning": "", "answer": "", "bbox": [, , , ]}'
_COT_FIXED = (
    "REASONING:\n" + "".join(f"Step {i}: \n" for i in range(1, 8)) + "\nANSWER: \nBBOX: [, , , ]"
)
_MIN_FIELD = 8


def _text(max_chars: int, *, non_empty: bool) -> str:
    if non_empty:
        return _VISIBLE + (f"{_FREE}{{0,{max_chars - 1}}}" if max_chars > 1 else "")
    return f"{_FREE}{{0,{max_chars}}}"


def reply_format(
    style: PromptStyle, box_format: BoxFormat, max_new_tokens: int, answer_chars: int = 100
) -> AnswerFormat:
    """The reply of ``style`` as a regex ``AnswerFormat`` (decoded under it with
    ``constrained=on``): JSON ``{"reasoning": "...", "answer": "...", "bbox": [x1, y1, x2, y2]}``
    or the 7-step CoT with ``ANSWER:`` and ``BBOX:`` lines, in the order the prompt shows. The
    answer is non-empty printable ASCII of at most ``answer_chars`` characters (less when the
    budget is small); the reasoning (split over the seven steps for the CoT) gets the rest of
    ``max_new_tokens`` counted as one token per character, so a reply always ends in budget."""
    coord = _COORD[box_format]
    box = rf"\[{coord}, {coord}, {coord}, {coord}\]"
    fixed = len(_JSON_FIXED if style == "json" else _COT_FIXED) + 4 * _COORD_CHARS[box_format]
    free = max_new_tokens - fixed - 1  # the end-of-text token
    if free < 2 * _MIN_FIELD:
        raise ValueError(
            f"max_new_tokens={max_new_tokens} leaves no room for a {style} reply under "
            f"constraints (needs at least {fixed + 1 + 2 * _MIN_FIELD})"
        )
    answer = max(_MIN_FIELD, min(answer_chars, free // 2))
    reasoning = free - answer
    if style == "json":
        regex = (
            r'\{"reasoning": "'
            + _text(reasoning, non_empty=False)
            + r'", "answer": "'
            + _text(answer, non_empty=True)
            + r'", "bbox": '
            + box
            + r"\}"
        )
    else:
        step = max(1, reasoning // 7)
        steps = "".join(f"Step {i}: {_text(step, non_empty=True)}\\n" for i in range(1, 8))
        regex = f"REASONING:\\n{steps}\\nANSWER: {_text(answer, non_empty=True)}\\nBBOX: {box}"
    return AnswerFormat(f"docval_{style}", regex=regex)


# --------------------------------------------------------------------------- parsing

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_NUM = r"(-?\d+(?:\.\d+)?)"
_BOX4 = re.compile(r"\[\s*" + r"\s*,\s*".join([_NUM] * 4) + r"\s*\]")
_BOX_LINE = re.compile(
    r"BBOX\s*:\s*\[?\s*" + r"\s*,\s*".join([_NUM] * 4) + r"\s*\]?", re.IGNORECASE
)
_ANSWER_LINE = re.compile(r"^\s*\**ANSWER\**\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
# fields of a JSON reply cut off before its closing brace (the token limit hit in the reasoning
# or after the box): read what is complete
_OPEN_ANSWER = re.compile(r'"answer"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)')
_OPEN_BBOX = re.compile(r'"(?:bbox|box)"\s*:\s*\[\s*' + r"\s*,\s*".join([_NUM] * 4) + r"\s*\]")
_STEP = re.compile(r"Step\s*\d+\s*:\s*(.*?)(?=\n\s*Step\s*\d+\s*:|\n\s*ANSWER\s*:|\Z)", re.S | re.I)


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in the text (fenced blocks first), in order of appearance."""
    decoder = json.JSONDecoder()
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    found: list[dict[str, Any]] = []
    for source in sources:
        i = source.find("{")
        while i != -1:
            try:
                obj, end = decoder.raw_decode(source, i)
            except ValueError:
                i = source.find("{", i + 1)
                continue
            if isinstance(obj, dict):
                found.append(obj)
            i = source.find("{", end)
    return found


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, str):
        try:
            f = float(v.strip())
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


def _box_value(raw: Any) -> tuple[list[list[float]] | None, str | None]:
    """One or several boxes from a JSON value, or the reason it is not one."""
    if raw is None:
        return None, "no bbox in the reply"
    if isinstance(raw, dict):
        keys = [
            ("x1", "y1", "x2", "y2"),
            ("xmin", "ymin", "xmax", "ymax"),
            ("left", "top", "right", "bottom"),
        ]
        for ks in keys:
            if all(k in raw for k in ks):
                raw = [raw[k] for k in ks]
                break
        else:
            return None, f"bbox object without x1/y1/x2/y2: {raw!r}"
    if isinstance(raw, str):
        m = _BOX4.search(raw) or re.search(r"\s*,\s*".join([_NUM] * 4), raw)
        if not m:
            return None, f"bbox string without four numbers: {raw!r}"
        return [[float(g) for g in m.groups()]], None
    if isinstance(raw, list | tuple):
        if raw and all(isinstance(b, list | tuple) for b in raw):
            boxes = []
            for b in raw:
                nums = [_number(v) for v in b]
                if len(nums) != 4 or any(n is None for n in nums):
                    return None, f"bbox list item is not 4 numbers: {b!r}"
                boxes.append([n for n in nums if n is not None])
            return (boxes, None) if boxes else (None, "empty bbox list")
        nums = [_number(v) for v in raw]
        if len(nums) != 4 or any(n is None for n in nums):
            return None, f"bbox is not 4 numbers: {raw!r}"
        return [[n for n in nums if n is not None]], None
    return None, f"bbox of type {type(raw).__name__}: {raw!r}"


def _steps(raw: Any) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, list):
        return [str(s).strip() for s in raw if str(s).strip()]
    text = str(raw)
    steps = [s.strip() for s in _STEP.findall(text) if s.strip()]
    return steps or ([text.strip()] if text.strip() else [])


def _answer_value(raw: Any) -> tuple[str | None, str | None]:
    if raw is None:
        return None, "no answer in the reply"
    if isinstance(raw, bool) or isinstance(raw, dict | list):
        return None, f"answer is not text: {raw!r}"
    text = str(raw).strip()
    if not text:
        return None, "empty answer"
    return text, None


def parse_output(
    text: str,
    *,
    image_size: tuple[int, int],
    box_format: BoxFormat = "pixels",
    edge_tolerance: float = 2.0,
) -> Prediction:
    """A reply → ``Prediction`` in pixels; ``failure`` names the first problem found."""
    if not text or not text.strip():
        return Prediction(None, None, [], "empty reply")
    objs = [o for o in _json_objects(text) if {"answer", "bbox", "box"} & set(o)]
    problems: list[str] = []
    incomplete = False
    if objs:
        obj = objs[0]
        answer, answer_problem = _answer_value(obj.get("answer"))
        boxes, box_problem = _box_value(obj.get("bbox", obj.get("box")))
        reasoning = _steps(obj.get("reasoning", obj.get("cot_steps")))
    elif _OPEN_ANSWER.search(text) or _OPEN_BBOX.search(text):
        ma, mb = _OPEN_ANSWER.search(text), _OPEN_BBOX.search(text)
        try:
            raw_answer = json.loads(ma.group(1)) if ma else None
        except ValueError:  # a string with an escape JSON does not know
            raw_answer = ma.group(1).strip('"') if ma else None
        answer, answer_problem = _answer_value(raw_answer)
        boxes, box_problem = (
            ([[float(g) for g in mb.groups()]], None) if mb else (None, "no bbox in the reply")
        )
        r = re.search(r'"reasoning"\s*:\s*"((?:[^"\\]|\\.)*)', text)
        reasoning = _steps(r.group(1) if r else None)
        incomplete = True
    else:
        m = _ANSWER_LINE.search(text)
        b = _BOX_LINE.search(text)
        if m is None and b is None:
            return Prediction(
                None, None, _steps(text), "unparseable: no JSON object and no ANSWER:/BBOX: lines"
            )
        answer, answer_problem = _answer_value(m.group(1) if m else None)
        boxes, box_problem = (
            ([[float(g) for g in b.groups()]], None) if b else (None, "no BBOX: line")
        )
        r = re.search(r"REASONING\s*:(.*?)(?=\n\s*\**ANSWER\**\s*:|\Z)", text, re.S | re.I)
        reasoning = _steps(r.group(1) if r else text[: m.start()] if m else "")
    if answer_problem:
        problems.append(answer_problem)
    notes: list[str] = ["incomplete JSON object: fields read one by one"] if incomplete else []
    bbox = None
    if boxes is not None:
        if len(boxes) > 1:
            notes.append(f"{len(boxes)} boxes merged into their enclosing box")
        merged = enclosing_box(boxes)
        pixels = to_pixels(merged, box_format, image_size)
        reason = validate_box(pixels, image_size)
        if reason is not None and "crosses the edge" in reason:
            clipped = clip_box(pixels, image_size)
            if validate_box(clipped) is None:
                if validate_box(pixels, image_size, tolerance=edge_tolerance) is not None:
                    notes.append(f"box clipped to the image: {reason}")
                pixels, reason = clipped, None
        if reason is None:
            bbox = pixels
        else:
            problems.append(f"bbox: {reason}")
    elif box_problem:
        problems.append(box_problem)
    return Prediction(answer, bbox, reasoning, "; ".join(problems) or None, notes)
