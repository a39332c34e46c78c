"""Parse a verifier's reply: ``<think>…</think>`` then one JSON object.

The object the task asks for::

    {"answer": false,
     "boxes": [[x1, y1, x2, y2]],                       # the error (pixels), when answer is false
     "point": [x, y],                                    # point rationale (rationale=point)
     "action": {"type": "Add" | "Delete" | "Modify", "text": "..."},  # M1-TTS's semantic action
     "explanation": "..."}

Rules (each one decides a reward, so they are explicit):

- **Format** (``format_ok``, the paper's R_f): the reply is exactly one ``<think>…</think>`` block
  followed by a non-empty answer, and that answer is one JSON object whose ``answer`` is a JSON
  boolean. Anything else (no think block, code fences, prose after the JSON) fails R_f.
- **Answer** (for R_acc): taken from the JSON after ``</think>`` (or the whole reply when there
  is no think block); if no JSON object parses there, the regex ``"answer": true|false`` of the
  OmniVerifier release is tried. ``"true"``/``"false"`` as strings are accepted (``how`` says so).
  No answer → ``answer is None``: a scored model failure.
- **Boxes**: ``boxes`` (a list of boxes), or ``box``/``bbox`` (one box). A box is four numbers in
  ``box_format`` (pixels, 0–1000 or 0–1 of the image), converted to pixels. A box crossing the
  image edge is clipped to the image; a box wholly outside the image, degenerate, or not four
  finite numbers is dropped, with the reason in ``problems``.
- **Action**: ``{"type", "text"}`` with type Add/Delete/Modify (case-insensitive), or the string
  ``"Modify: make the circle red"``; anything else is dropped with a reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from methods.common import AnswerFormat
from methods.omniverifier._scene import EditAction
from scorers.boxes import BoxFormat, clip_box, to_pixels, validate_box

__all__ = [
    "VerifierOutput",
    "format_verifier_output",
    "parse_verifier_output",
    "verifier_reply_format",
]

Box = tuple[float, float, float, float]

_THINK = re.compile(r"\A\s*<think>(.*?)</think>(.*)\Z", re.DOTALL)
_ANSWER_RE = re.compile(r'"answer"\s*:\s*"?(true|false)"?', re.IGNORECASE)
_ACTIONS = {"add": "Add", "delete": "Delete", "modify": "Modify"}


@dataclass(frozen=True)
class VerifierOutput:
    """A parsed verifier reply. ``answer``: True (image consistent), False, or None (unusable)."""

    answer: bool | None
    boxes: tuple[Box, ...] = ()
    points: tuple[tuple[float, float], ...] = ()
    action: EditAction | None = None
    format_ok: bool = False
    think: str | None = None
    explanation: str | None = None
    how: str = ""
    problems: tuple[str, ...] = ()
    score: float | None = None  # higher = more likely wrong (verifiers that have one)
    raw: str = ""

    @property
    def failure(self) -> str | None:
        """Why the reply gives no judgment (None when it does)."""
        if self.answer is not None:
            return None
        return "; ".join(self.problems) or "no answer"


def _first_object(text: str) -> tuple[Mapping[str, Any] | None, int, int]:
    """The first JSON object in ``text`` and its span (None, -1, -1 if none decodes)."""
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch != "{":
            continue
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value, i, end
    return None, -1, -1


def _answer(value: Any) -> tuple[bool | None, str]:
    if isinstance(value, bool):
        return value, "json"
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true", "json-string"
    return None, ""


def _raw_boxes(obj: Mapping[str, Any], problems: list[str]) -> list[Any]:
    if "boxes" in obj:
        raw = obj["boxes"]
        if raw is None:
            return []
        if isinstance(raw, list) and raw and all(isinstance(v, int | float) for v in raw):
            return [raw]  # one box written without the outer list
        if not isinstance(raw, list):
            problems.append(f"'boxes' must be a list of [x1, y1, x2, y2], got {raw!r}")
            return []
        return list(raw)
    for key in ("box", "bbox"):
        if key in obj and obj[key] is not None:
            return [obj[key]]
    return []


def _boxes(
    obj: Mapping[str, Any],
    image_size: tuple[int, int] | None,
    box_format: BoxFormat,
    problems: list[str],
) -> tuple[Box, ...]:
    out: list[Box] = []
    for i, raw in enumerate(_raw_boxes(obj, problems)):
        reason = validate_box(raw)
        if reason is not None:
            problems.append(f"box {i} dropped: {reason}")
            continue
        if box_format != "pixels" and image_size is None:
            problems.append(f"box {i} dropped: {box_format} boxes need the image size")
            continue
        box = to_pixels(raw, box_format, image_size or (1, 1))
        if image_size is not None:
            reason = validate_box(box, image_size)
            if reason is not None and "outside" in reason:
                problems.append(f"box {i} dropped: {reason}")
                continue
            if reason is not None:  # crosses the edge: clip (the stated rule)
                box = clip_box(box, image_size)
                problems.append(f"box {i} clipped to the image")
        out.append(box)
    return tuple(out)


def _points(obj: Mapping[str, Any], problems: list[str]) -> tuple[tuple[float, float], ...]:
    raw: Any = obj.get("points")
    if raw is None and obj.get("point") is not None:
        raw = [obj["point"]]
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.append(f"'points' must be a list of [x, y], got {raw!r}")
        return ()
    out = []
    for i, p in enumerate(raw):
        if (
            isinstance(p, list | tuple)
            and len(p) == 2
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in p)
        ):
            out.append((float(p[0]), float(p[1])))
        else:
            problems.append(f"point {i} dropped: expected [x, y], got {p!r}")
    return tuple(out)


def _action(obj: Mapping[str, Any], problems: list[str]) -> EditAction | None:
    raw = obj.get("action")
    if raw is None:
        return None
    kind: Any
    text: Any
    if isinstance(raw, str):
        kind, _, text = raw.partition(":")
    elif isinstance(raw, Mapping):
        kind, text = raw.get("type"), raw.get("text", "")
    else:
        problems.append(f"action dropped: expected {{type, text}}, got {raw!r}")
        return None
    name = _ACTIONS.get(str(kind).strip().lower())
    if name is None:
        problems.append(f"action dropped: type {kind!r} is not Add, Delete or Modify")
        return None
    return EditAction(name, str(text).strip())  # type: ignore[arg-type]


def parse_verifier_output(
    text: str,
    *,
    image_size: tuple[int, int] | None = None,
    box_format: BoxFormat = "pixels",
) -> VerifierOutput:
    """Parse one reply (rules in the module docstring). Never raises on model text."""
    if not isinstance(text, str):
        return VerifierOutput(answer=None, problems=(f"reply is {type(text).__name__}",), raw="")
    problems: list[str] = []
    m = _THINK.match(text)
    think = m.group(1).strip() if m else None
    rest = m.group(2) if m else text
    if m is None:
        problems.append("no <think>…</think> block at the start")
    elif "<think>" in rest or "</think>" in rest:
        problems.append("more than one think block")
    obj, start, end = _first_object(rest)
    answer: bool | None = None
    how = ""
    if obj is not None:
        answer, how = _answer(obj.get("answer"))
        if answer is None:
            problems.append(f"JSON 'answer' is {obj.get('answer')!r}, not true/false")
    if answer is None:
        found = _ANSWER_RE.search(rest)
        if found:
            answer, how = found.group(1).lower() == "true", "regex"
        elif obj is None:
            problems.append("no JSON object with an answer")
    format_ok = (
        m is not None
        and not problems
        and obj is not None
        and how == "json"
        and rest.strip() == rest[start:end].strip()
        and rest[start:end].strip() != ""
    )
    boxes: tuple[Box, ...] = ()
    points: tuple[tuple[float, float], ...] = ()
    action = None
    explanation = None
    if obj is not None:
        boxes = _boxes(obj, image_size, box_format, problems)
        points = _points(obj, problems)
        action = _action(obj, problems)
        if isinstance(obj.get("explanation"), str):
            explanation = obj["explanation"]
    return VerifierOutput(
        answer=answer,
        boxes=boxes,
        points=points,
        action=action,
        format_ok=format_ok,
        think=think,
        explanation=explanation,
        how=how,
        problems=tuple(problems),
        raw=text,
    )


def format_verifier_output(
    answer: bool,
    *,
    think: str = "",
    boxes: tuple[Box, ...] | list[Any] = (),
    point: tuple[float, float] | None = None,
    action: EditAction | None = None,
    explanation: str | None = None,
) -> str:
    """A reply in the exact format ``parse_verifier_output`` rewards (used by built-in verifiers)."""
    obj: dict[str, Any] = {"answer": bool(answer)}
    if not answer:
        obj["boxes"] = [[round(float(v), 1) for v in b] for b in boxes]
        if point is not None:
            obj["point"] = [round(float(point[0]), 1), round(float(point[1]), 1)]
        if action is not None:
            obj["action"] = {"type": action.type, "text": action.text}
    if explanation:
        obj["explanation"] = explanation
    return f"<think>{think}</think>\n{json.dumps(obj)}"


# --- the reply format, for constrained decoding -----------------------------------------------

# `<think></think>\n` and the longest fixed JSON of a "no" verdict (four 4-digit numbers, "Modify").
_FIXED_CHARS = 16 + len(
    '{"answer": false, "boxes": [[0000, 0000, 0000, 0000]], "action": {"type": "Modify", "text": ""}}'
)
_THINK_TEXT = "[ -;=-~]"  # printable ASCII without "<": the think block cannot close early
_JSON_TEXT = "[ !#-\\[\\]-~]"  # printable ASCII without quote or backslash


def verifier_reply_format(
    rationale: str = "bbox", box_format: BoxFormat = "pixels", max_tokens: int = 512
) -> AnswerFormat:
    """The M1 reply as a regex ``AnswerFormat`` (decoded under it with ``constrained=on``):
    ``<think>…</think>``, a newline, then ``{"answer": true}`` or ``{"answer": false,
    "boxes": [[x1, y1, x2, y2]] | "point": [x, y], "action": {"type": Add|Delete|Modify,
    "text": …}}`` — every reply in it parses with ``format_ok`` (a box off the image or degenerate
    is skill, not format). Free text is printable ASCII sized so that even one token per
    character ends within ``max_tokens`` (two thirds for the think block, a third for the
    action's text)."""
    free = max_tokens - _FIXED_CHARS - 2
    if free < 2:
        raise ValueError(
            f"verifier reply format: max_tokens={max_tokens} leaves no room for the think block "
            f"and the action text (needs > {_FIXED_CHARS + 3})"
        )
    think, text = free - free // 3, free // 3
    num = "(0|1|0\\.[0-9]{1,3})" if box_format == "0-1" else "(0|[1-9][0-9]{0,3})"
    where = (
        f'"boxes": \\[\\[{num}, {num}, {num}, {num}\\]\\]'
        if rationale == "bbox"
        else f'"point": \\[{num}, {num}\\]'
    )
    no = (
        f'\\{{"answer": false, {where}, "action": \\{{"type": "(Add|Delete|Modify)", '
        f'"text": "{_JSON_TEXT}{{0,{text}}}"\\}}\\}}'
    )
    return AnswerFormat(
        f"omniverifier_m1_{rationale}",
        regex=f'<think>{_THINK_TEXT}{{0,{think}}}</think>\\n(\\{{"answer": true\\}}|{no})',
    )


# reply_format=yes_no: one word (the first "yes"/"no" word is the judgment).
YES_NO_FORMAT = AnswerFormat("omniverifier_yes_no", choice=("yes", "no"))
