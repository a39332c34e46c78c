"""The parts of VAL that need no label, for a test-time feedback loop that leaks nothing.

VAL's verifier compares a prediction with the gold answer and box, so its feedback ("move RIGHT
by 40 px", "expected '9.00'") hands the label to the model: a loop that feeds it back at test
time measures nothing. DocVAL's +6.3 / +9.7 mAP come from *training* on such corrections (phase
B2). At test time this module checks only what the page itself can tell:

- **in document**: the answer text occurs in the OCR text (VAL's own indicator);
- **answer in box**: the answer text occurs in the words the predicted box covers;
- **box snaps to a region**: some OCR line overlaps the box with IoU ≥ ``snap_iou``, or the box
  holds whole words only (it does not cut through a line);
- **reasoning consistent with the box**: VAL's S_coord and S_spatial are 1.

Feedback is built from the model's *own* answer and the OCR words: where the answer text occurs
nearest the predicted box, and how to move the box there ("Move RIGHT by 40 px" relative to that
occurrence, never to the gold box).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from methods.docval._text import compact, find_text, text_in_box
from methods.docval._types import Prediction, Region, Word
from methods.docval._validator import (
    DEFAULT_CONFIG as _DEFAULT_CONFIG,
)
from methods.docval._validator import (
    ValConfig,
    coordinate_score,
    pixel_feedback,
    spatial_score,
    text_in_regions,
)
from scorers.boxes import Box, iou

__all__ = ["GoldFreeReport", "gold_free_check", "snap_to_answer"]


@dataclass
class GoldFreeReport:
    in_document: bool
    answer_in_box: bool
    snaps_to_region: bool
    snap_iou: float
    s_coord: float
    s_spatial: float
    passed: bool
    feedback: list[str] = field(default_factory=list)
    suggested_box: Box | None = None
    text_in_box: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _centre_distance(a: Box, b: Box) -> float:
    return abs((a[0] + a[2]) - (b[0] + b[2])) / 2 + abs((a[1] + a[3]) - (b[1] + b[3])) / 2


def gold_free_check(
    prediction: Prediction,
    words: Sequence[Word],
    regions: Sequence[Region],
    *,
    snap_iou: float = 0.5,
    config: ValConfig = _DEFAULT_CONFIG,
) -> GoldFreeReport:
    """Label-free checks of one prediction against the page's OCR words and lines."""
    answer = (prediction.answer or "").strip()
    box = prediction.bbox
    feedback: list[str] = []
    in_document = text_in_regions(answer, regions) or (
        bool(answer) and compact(answer) in compact(" ".join(w.text for w in words))
    )
    covered = text_in_box(box, words) if box is not None else ""
    answer_in_box = bool(answer) and box is not None and compact(answer) in compact(covered)
    best = max((iou(box, r.bbox) for r in regions), default=0.0) if box is not None else 0.0
    whole_words = box is not None and bool(covered) and _cuts_no_word(box, words)
    snaps = box is not None and (best >= snap_iou or whole_words)
    s_coord = coordinate_score(prediction.reasoning, box, config.coord_tolerance)
    s_spatial = spatial_score(
        prediction.reasoning, box, config.spatial_split_y, config.spatial_penalty
    )

    occurrences = find_text(answer, words) if answer else []
    suggested = None
    if occurrences:
        suggested = (
            min(occurrences, key=lambda b: _centre_distance(b, box))
            if box is not None
            else occurrences[0]
        )
    if not answer:
        feedback.append("Your answer is empty: copy the answer text from the document.")
    elif not in_document:
        feedback.append(f"Your answer {answer!r} does not occur in the document's text.")
    if box is None:
        if suggested is not None:
            coords = [int(round(v)) for v in suggested]
            feedback.append(f"You gave no usable box; the text {answer!r} is at {coords}.")
        else:
            feedback.append("You gave no usable box.")
    elif answer and in_document and not answer_in_box:
        msg = f"Your box covers {covered!r}, not your answer {answer!r}."
        if suggested is not None:
            _, moves = pixel_feedback(box, suggested, iou(box, suggested), config)
            msg += f" The text {answer!r} is at {[int(round(v)) for v in suggested]}: {moves}"
        feedback.append(msg)
    if box is not None and not snaps:
        feedback.append(
            f"Your box does not line up with any text line (best IoU {best:.2f}); fit it to the words."
        )
    if s_coord < 1.0:
        feedback.append("The coordinates in your reasoning do not match your box.")
    if s_spatial < 1.0:
        feedback.append("Your reasoning says top/bottom but your box lies elsewhere on the page.")
    passed = in_document and answer_in_box and snaps and s_coord == 1.0 and s_spatial == 1.0
    return GoldFreeReport(
        in_document=in_document,
        answer_in_box=answer_in_box,
        snaps_to_region=snaps,
        snap_iou=best,
        s_coord=s_coord,
        s_spatial=s_spatial,
        passed=passed,
        feedback=feedback,
        suggested_box=suggested,
        text_in_box=covered,
    )


def _cuts_no_word(box: Box, words: Sequence[Word], slack: float = 0.2) -> bool:
    """True when every word the box touches lies mostly inside it or mostly outside it."""
    x1, y1, x2, y2 = box
    for w in words:
        wx1, wy1, wx2, wy2 = w.box
        iw = min(x2, wx2) - max(x1, wx1)
        ih = min(y2, wy2) - max(y1, wy1)
        area = (wx2 - wx1) * (wy2 - wy1)
        if iw > 0 and ih > 0 and area > 0:
            share = iw * ih / area
            if slack < share < 1 - slack:
                return False
    return True


def snap_to_answer(prediction: Prediction, words: Sequence[Word]) -> Prediction:
    """A rule that applies gold-free feedback without a model: move the box onto the occurrence
    of the model's own answer text nearest its box (unchanged when the text is not on the page)."""
    answer = (prediction.answer or "").strip()
    occurrences = find_text(answer, words) if answer else []
    if not occurrences:
        return prediction
    box = prediction.bbox
    target = (
        min(occurrences, key=lambda b: _centre_distance(b, box))
        if box is not None
        else occurrences[0]
    )
    return Prediction(
        answer=prediction.answer,
        bbox=target,
        reasoning=list(prediction.reasoning),
        failure=None if prediction.answer else prediction.failure,
        notes=[*prediction.notes, "box snapped to the answer text's occurrence (gold-free)"],
    )
