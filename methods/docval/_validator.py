"""VAL, DocVAL's rule-based validator, in its two modes (filter and verifier).

Quality score (DocVAL §3; the repository's `docval/validation/`):

    Q        = 0.4·Q_ans + 0.4·Q_bbox + 0.2·Q_reason                     (accept iff Q ≥ q_min = 0.85)
    Q_ans    = 0.7·ANLS(pred, gold) + 0.3·1[pred is a case-insensitive substring of some region text]
    Q_bbox   = 0.8·IoU(pred, gold) + 0.2·1[pred and gold boxes map to the same region]
    Q_reason = (S_struct + S_coord + S_spatial) / 3

- a box maps to the region of highest IoU with it, if that IoU is > 0.1 (first region wins ties);
- S_struct: share of four keyword groups present in the reasoning (region/area/section/text;
  locate/position/spatial/where; answer/extract/found/value; bbox/bounding/coordinates/box);
  no reasoning scores 0;
- S_coord: 1 if the reasoning mentions no 4-tuple of numbers, or one within 20 px of the
  predicted box on every coordinate; else 0.5;
- S_spatial: 1, − 0.3 if it says top/upper/above while y1 > 300 px, − 0.3 if it says
  bottom/lower/below while y1 < 300 px (substring tests, as in the repository; floored at 0).

Verifier mode adds the errors, their severities and the pixel feedback: answer error when
Q_ans < 0.9 (high if Q_ans < 0.5, else medium); box error when IoU < 0.75 (high if < 0.5, else
medium) with Δ = gold − pred per coordinate rendered as "Move RIGHT/LEFT by N px" (x1),
"Move DOWN/UP by N px" (y1), "EXPAND/SHRINK width by N px" (Δx2 − Δx1), "EXPAND/SHRINK height by
N px" (Δy2 − Δy1), each only when |·| > 5 px, and "nearly correct" when IoU > 0.9; a wrong
region is "critical"; reasoning issues are "low". Fixes are sorted critical > high > medium >
low; the corrected output is the gold answer, the gold box and a four-step template CoT.

Choices where the repository is silent or odd, each a named ``ValConfig`` field:

- ``anls_variant``: the paper's ANLS (τ = 0.5, max over answers) by default; the repository's
  Q_ans uses 1 − NL with no cut-off (``"docval_repo"``);
- an empty answer is *not* "in the document" (in the repository ``"" in text`` is always true);
- a prediction without a box gets IoU 0, no region, S_coord from its text alone and no spatial
  penalty (the repository substitutes the box [0, 0, 100, 100]);
- expand/shrink feedback carries its size in pixels ("by N px"), which the repository leaves out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from methods.docval._types import Prediction, Region
from scorers.anls import AnlsVariant, anls_score
from scorers.boxes import Box, iou

__all__ = [
    "DEFAULT_CONFIG",
    "KEYWORD_GROUPS",
    "SEVERITY_ORDER",
    "FeedbackError",
    "ValConfig",
    "ValReport",
    "Validator",
    "best_region",
    "coordinate_score",
    "filter_traces",
    "pixel_feedback",
    "spatial_score",
    "structure_score",
    "text_in_regions",
]

Severity = Literal["critical", "high", "medium", "low"]
SEVERITY_ORDER: dict[str, int] = {"critical": 0, "high": 1, "medium": 2, "low": 3}

KEYWORD_GROUPS: tuple[tuple[str, ...], ...] = (
    ("region", "area", "section", "text"),
    ("locate", "position", "spatial", "where"),
    ("answer", "extract", "found", "value"),
    ("bbox", "bounding", "coordinates", "box"),
)
_TOP_WORDS = ("top", "upper", "above")
_BOTTOM_WORDS = ("bottom", "lower", "below")
_NUM = r"(\d+(?:\.\d*)?)"
_COORD_TUPLE = re.compile(r"\[?\s*" + r"\s*,\s*".join([_NUM] * 4) + r"\s*\]?")


@dataclass(frozen=True)
class ValConfig:
    """VAL's weights and thresholds (defaults: the paper's and the repository's values)."""

    alpha_ans: float = 0.4
    alpha_bbox: float = 0.4
    alpha_reason: float = 0.2
    ans_anls_weight: float = 0.7
    ans_in_document_weight: float = 0.3
    bbox_iou_weight: float = 0.8
    bbox_region_weight: float = 0.2
    region_min_iou: float = 0.1
    q_min: float = 0.85
    pixel_tolerance: float = 5.0
    nearly_correct_iou: float = 0.9
    coord_tolerance: float = 20.0
    spatial_split_y: float = 300.0
    spatial_penalty: float = 0.3
    answer_error_below: float = 0.9
    answer_high_below: float = 0.5
    bbox_error_below: float = 0.75
    bbox_high_below: float = 0.5
    anls_variant: AnlsVariant = "standard"
    anls_threshold: float = 0.5


DEFAULT_CONFIG = ValConfig()


@dataclass(frozen=True)
class FeedbackError:
    """One error VAL's verifier mode reports."""

    type: Literal["answer", "bbox", "semantic", "reasoning"]
    severity: Severity
    message: str
    pixel_delta: tuple[float, float, float, float] | None = None


@dataclass
class ValReport:
    """VAL's scores for one prediction, and in verifier mode its feedback."""

    q: float
    q_ans: float
    q_bbox: float
    q_reason: float
    anls: float
    in_document: bool
    iou: float
    region_match: bool
    pred_region: int | None
    gold_region: int | None
    s_struct: float
    s_coord: float
    s_spatial: float
    passed: bool
    pixel_delta: tuple[float, float, float, float] | None
    correction_text: str
    errors: list[FeedbackError] = field(default_factory=list)
    priority_fixes: list[str] = field(default_factory=list)
    corrected_output: dict[str, Any] | None = None

    @property
    def status(self) -> str:
        return "VALID" if self.passed else "INVALID"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status
        return d


def best_region(box: Box | None, regions: Sequence[Region], min_iou: float = 0.1) -> Region | None:
    """The region with the highest IoU with ``box`` if that IoU is > ``min_iou`` (first wins ties)."""
    if box is None:
        return None
    best, best_iou = None, 0.0
    for region in regions:
        value = iou(box, region.bbox)
        if value > best_iou:
            best, best_iou = region, value
    return best if best_iou > min_iou else None


def text_in_regions(text: str | None, regions: Sequence[Region]) -> bool:
    """Whether ``text`` (stripped, case-insensitive, non-empty) is a substring of a region's text."""
    needle = (text or "").lower().strip()
    if not needle:
        return False
    return any(needle in r.text.lower() for r in regions)


def _reasoning_text(reasoning: Sequence[str] | str) -> str:
    return reasoning if isinstance(reasoning, str) else " ".join(reasoning)


def structure_score(reasoning: Sequence[str] | str) -> float:
    """S_struct: share of the four keyword groups the reasoning contains (0 for none)."""
    text = _reasoning_text(reasoning).lower()
    if not text.strip():
        return 0.0
    hits = sum(any(k in text for k in group) for group in KEYWORD_GROUPS)
    return hits / len(KEYWORD_GROUPS)


def coordinate_score(
    reasoning: Sequence[str] | str, box: Box | None, tolerance: float = 20.0
) -> float:
    """S_coord: 1 if no 4-tuple is mentioned or one lies within ``tolerance`` px of ``box`` on
    every coordinate, else 0.5."""
    tuples = _COORD_TUPLE.findall(_reasoning_text(reasoning))
    if not tuples:
        return 1.0
    if box is not None:
        for t in tuples:
            coords = [float(v) for v in t]
            if all(abs(c - b) < tolerance for c, b in zip(coords, box, strict=True)):
                return 1.0
    return 0.5


def spatial_score(
    reasoning: Sequence[str] | str,
    box: Box | None,
    split_y: float = 300.0,
    penalty: float = 0.3,
) -> float:
    """S_spatial: 1 − penalty for "top" words with y1 > split_y, − penalty for "bottom" words
    with y1 < split_y (floored at 0; no box, no penalty)."""
    if box is None:
        return 1.0
    text = _reasoning_text(reasoning).lower()
    score = 1.0
    if any(w in text for w in _TOP_WORDS) and box[1] > split_y:
        score -= penalty
    if any(w in text for w in _BOTTOM_WORDS) and box[1] < split_y:
        score -= penalty
    return max(0.0, score)


def pixel_feedback(
    pred: Box | None, gold: Box, iou_value: float, config: ValConfig = DEFAULT_CONFIG
) -> tuple[tuple[float, float, float, float] | None, str]:
    """Δ = gold − pred and the correction text ("Move RIGHT by 12 px; EXPAND width by 30 px")."""
    if pred is None:
        target = [int(round(v)) for v in gold]
        return None, f"No box given. Target: {target}."
    delta = (gold[0] - pred[0], gold[1] - pred[1], gold[2] - pred[2], gold[3] - pred[3])
    if iou_value > config.nearly_correct_iou:
        return delta, f"BBox nearly correct (IoU {iou_value:.3f} > {config.nearly_correct_iou})"
    dx1, dy1, dx2, dy2 = delta
    tol = config.pixel_tolerance
    moves: list[str] = []
    if abs(dx1) > tol:
        moves.append(f"Move {'RIGHT' if dx1 > 0 else 'LEFT'} by {abs(dx1):.0f} px")
    if abs(dy1) > tol:
        moves.append(f"Move {'DOWN' if dy1 > 0 else 'UP'} by {abs(dy1):.0f} px")
    dw, dh = dx2 - dx1, dy2 - dy1
    if abs(dw) > tol:
        moves.append(f"{'EXPAND' if dw > 0 else 'SHRINK'} width by {abs(dw):.0f} px")
    if abs(dh) > tol:
        moves.append(f"{'EXPAND' if dh > 0 else 'SHRINK'} height by {abs(dh):.0f} px")
    text = (
        f"BBox IoU: {iou_value:.3f}. Predicted: {[int(round(v)) for v in pred]}, "
        f"Target: {[int(round(v)) for v in gold]}. "
        f"Corrections: {'; '.join(moves) if moves else 'None'}"
    )
    return delta, text


class Validator:
    """VAL. ``mode="filter"`` scores and accepts (Q ≥ q_min); ``mode="verifier"`` also returns
    errors with severities, priority-ordered fixes and the corrected output."""

    def __init__(
        self,
        config: ValConfig = DEFAULT_CONFIG,
        mode: Literal["filter", "verifier"] = "filter",
    ) -> None:
        if mode not in ("filter", "verifier"):
            raise ValueError(f"mode must be 'filter' or 'verifier', got {mode!r}")
        self.config = config
        self.mode = mode

    def validate(
        self,
        prediction: Prediction,
        gold_answers: Sequence[str] | str,
        gold_box: Box,
        regions: Sequence[Region],
    ) -> ValReport:
        cfg = self.config
        refs = [gold_answers] if isinstance(gold_answers, str) else list(gold_answers)
        pred_box = prediction.bbox

        # OCR grounding: which region each box targets.
        pred_region = best_region(pred_box, regions, cfg.region_min_iou)
        gold_region = best_region(gold_box, regions, cfg.region_min_iou)
        region_match = (
            pred_region is not None and gold_region is not None and pred_region.id == gold_region.id
        )

        # Answer.
        anls_value = anls_score(
            prediction.answer, refs, threshold=cfg.anls_threshold, variant=cfg.anls_variant
        )
        in_document = text_in_regions(prediction.answer, regions)
        q_ans = cfg.ans_anls_weight * anls_value + cfg.ans_in_document_weight * float(in_document)

        # Box.
        iou_value = 0.0 if pred_box is None else iou(pred_box, gold_box)
        q_bbox = cfg.bbox_iou_weight * iou_value + cfg.bbox_region_weight * float(region_match)
        delta, correction = pixel_feedback(pred_box, gold_box, iou_value, cfg)

        # Reasoning.
        s_struct = structure_score(prediction.reasoning)
        s_coord = coordinate_score(prediction.reasoning, pred_box, cfg.coord_tolerance)
        s_spatial = spatial_score(
            prediction.reasoning, pred_box, cfg.spatial_split_y, cfg.spatial_penalty
        )
        q_reason = (s_struct + s_coord + s_spatial) / 3.0

        q = cfg.alpha_ans * q_ans + cfg.alpha_bbox * q_bbox + cfg.alpha_reason * q_reason
        report = ValReport(
            q=q,
            q_ans=q_ans,
            q_bbox=q_bbox,
            q_reason=q_reason,
            anls=anls_value,
            in_document=in_document,
            iou=iou_value,
            region_match=region_match,
            pred_region=None if pred_region is None else pred_region.id,
            gold_region=None if gold_region is None else gold_region.id,
            s_struct=s_struct,
            s_coord=s_coord,
            s_spatial=s_spatial,
            passed=q >= cfg.q_min,
            pixel_delta=delta,
            correction_text=correction,
        )
        if self.mode == "verifier":
            self._add_feedback(report, prediction, refs, gold_box, pred_region, gold_region)
        return report

    def _add_feedback(
        self,
        report: ValReport,
        prediction: Prediction,
        refs: list[str],
        gold_box: Box,
        pred_region: Region | None,
        gold_region: Region | None,
    ) -> None:
        cfg = self.config
        errors: list[FeedbackError] = []
        if report.q_ans < cfg.answer_error_below:
            if not report.in_document:
                msg = f"Answer {prediction.answer!r} not found in document text. Expected: {refs[0]!r}"
            else:
                msg = (
                    f"Answer mismatch: got {prediction.answer!r}, expected {refs[0]!r} "
                    f"(ANLS: {report.anls:.3f})"
                )
            sev: Severity = "high" if report.q_ans < cfg.answer_high_below else "medium"
            errors.append(FeedbackError("answer", sev, msg))
        if report.iou < cfg.bbox_error_below:
            sev = "high" if report.iou < cfg.bbox_high_below else "medium"
            errors.append(FeedbackError("bbox", sev, report.correction_text, report.pixel_delta))
        if pred_region is not None and gold_region is not None and not report.region_match:
            errors.append(
                FeedbackError(
                    "semantic",
                    "critical",
                    f"Your bbox targets Region #{pred_region.id} ({pred_region.text!r}) but "
                    f"should target Region #{gold_region.id} ({gold_region.text!r})",
                )
            )
        issues = []
        if report.s_struct < 1.0:
            issues.append("Incomplete reasoning structure")
        if report.s_coord < 1.0:
            issues.append("Coordinate inconsistency in reasoning")
        if report.s_spatial < 1.0:
            issues.append("Spatial description doesn't match bbox")
        if issues:
            errors.append(FeedbackError("reasoning", "low", "; ".join(issues)))
        ordered = sorted(errors, key=lambda e: SEVERITY_ORDER[e.severity])  # stable within ties
        report.errors = ordered
        report.priority_fixes = [f"[{e.severity.upper()}] {e.message}" for e in ordered]
        gold = [round(v, 1) for v in gold_box]
        if gold_region is not None:
            steps = [
                f"Step 1: Identify the relevant text region containing '{refs[0]}'",
                f"Step 2: This appears in Region #{gold_region.id} with text '{gold_region.text}'",
                f"Step 3: Extract answer: '{refs[0]}'",
                f"Step 4: Determine bounding box: {gold}",
            ]
        else:
            steps = [
                "Step 1: Identify the relevant text region",
                "Step 2: Locate the answer text",
                f"Step 3: Extract answer: '{refs[0]}'",
                f"Step 4: Determine bounding box: {gold}",
            ]
        report.corrected_output = {"answer": refs[0], "bbox": gold, "reasoning": steps}


def filter_traces(reports: Sequence[ValReport], q_min: float = 0.85) -> list[int]:
    """Indices of the traces VAL's filter keeps (Q ≥ q_min)."""
    return [i for i, r in enumerate(reports) if r.q >= q_min]
