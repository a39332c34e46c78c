"""Scorer: ANLS of the answer, IoU / mAP@[.50:.95] of the box, and VAL on the prediction.

Per-sample ``Score.value``:

- ``anls``: standard ANLS (τ = 0.5, max over the reference answers), or the DocVAL repository's
  variant when ``anls_variant="docval_repo"``;
- ``iou``: IoU of the predicted box with the gold box (the best of equally good gold boxes,
  see ``sroie.py``); 0 without a usable predicted box; NaN when the source has no gold box;
- ``map``: this question's share of the thresholds 0.50…0.95 its IoU meets, so the mean over
  questions *is* DocVAL/DLaVA's mAP@[.50:.95] (a mean accuracy@IoU) and its bootstrap interval is
  the interval of the mean; ``acc50``: 1[IoU ≥ 0.5];
- ``validator_pass``: 1[VAL's Q ≥ q_min] with the gold label (the trace filter's decision);
  ``val_q``: Q; NaN when the source has no gold box;
- ``format_ok``: 1 when the reply gave an answer and a usable box;
- ``anls_initial`` / ``map_initial`` (feedback loop only): the same before the loop.

A reply that cannot be used is scored (zero where it has nothing) with the reason in the
explanation and ``metadata["failure"]``; ``metadata["reply_status"]`` says whether the final
reply was ``ok``, ``truncated`` (cut by the token limit) or a ``format_failure`` (for model
replies; ``constrained`` whether it was decoded under the reply format); VAL's verifier feedback on every prediction is kept in
``metadata["val_feedback"]``.
"""

from __future__ import annotations

import math
from typing import Any

from inspect_ai.scorer import Metric, Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from methods.docval import Prediction, ValConfig, Validator, regions_from_dicts
from scorers.anls import AnlsVariant, anls_score
from scorers.boxes import acc_at_iou, iou, map_50_95
from tasks.docval.solver import DOCVAL_KEY

__all__ = ["docval_metrics", "docval_scorer", "prediction_from_record"]

_KEYS = ("anls", "map", "iou", "acc50", "validator_pass", "val_q", "format_ok")


def docval_metrics(with_loop: bool) -> dict[str, list[Metric]]:
    """``mean`` of every value key (``anls/mean``, ``map/mean``, …)."""
    keys = _KEYS + (("anls_initial", "map_initial") if with_loop else ())
    return {k: [mean()] for k in keys}


def prediction_from_record(record: dict[str, Any]) -> Prediction:
    box = record.get("bbox")
    return Prediction(
        answer=record.get("answer"),
        bbox=None if box is None else tuple(float(v) for v in box),  # type: ignore[arg-type]
        reasoning=list(record.get("reasoning") or []),
        failure=record.get("failure"),
        notes=list(record.get("notes") or []),
    )


def _box_scores(
    pred: Prediction, gold_boxes: list[list[float]]
) -> tuple[float, list[float] | None]:
    """(IoU with the best gold box, that box) — NaN and None without gold boxes."""
    if not gold_boxes:
        return math.nan, None
    if pred.bbox is None:
        return 0.0, gold_boxes[0]
    best = max(gold_boxes, key=lambda g: iou(pred.bbox, g))  # type: ignore[arg-type]
    return iou(pred.bbox, best), best


@scorer(metrics=[])  # the task passes docval_metrics(...)
def docval_scorer(
    anls_variant: AnlsVariant = "standard",
    val_config: ValConfig | None = None,
) -> Scorer:
    config = val_config or ValConfig()
    verifier = Validator(config, mode="verifier")

    async def score(state: TaskState, target: Target) -> Score:
        info = state.metadata.get(DOCVAL_KEY)
        if not isinstance(info, dict) or "prediction" not in info:
            raise RuntimeError(f"sample {state.sample_id}: the docval solver left no prediction")
        answers = list(target.target)
        pred = prediction_from_record(info["prediction"])
        regions = regions_from_dicts(info.get("regions", []))
        gold_boxes = list(state.metadata.get("gold_boxes") or [])

        anls_value = anls_score(pred.answer, answers, variant=anls_variant)
        iou_value, gold_box = _box_scores(pred, gold_boxes)
        has_box = gold_box is not None
        value: dict[str, float] = {
            "anls": anls_value,
            "iou": iou_value,
            "map": map_50_95([iou_value]) if has_box else math.nan,
            "acc50": acc_at_iou([iou_value], 0.5) if has_box else math.nan,
            "format_ok": float(
                pred.failure is None and pred.answer is not None and pred.bbox is not None
            ),
        }
        meta: dict[str, Any] = {
            "field": state.metadata.get("field"),
            "failure": pred.failure,
            "notes": pred.notes,
            "iou": None if not has_box else round(iou_value, 4),
        }
        statuses = info.get("reply_status") or []
        if statuses:
            meta["reply_status"] = statuses[-1]
            meta["constrained"] = bool(info.get("constrained"))
        if has_box:
            report = verifier.validate(pred, answers, tuple(gold_box), regions)  # type: ignore[arg-type]
            value["validator_pass"] = float(report.passed)
            value["val_q"] = report.q
            meta["val"] = {
                k: getattr(report, k)
                for k in (
                    "q",
                    "q_ans",
                    "q_bbox",
                    "q_reason",
                    "in_document",
                    "region_match",
                    "s_struct",
                    "s_coord",
                    "s_spatial",
                )
            }
            meta["val_feedback"] = report.priority_fixes
            meta["val_correction"] = report.correction_text
        else:
            value["validator_pass"] = math.nan
            value["val_q"] = math.nan
        history = info.get("history") or []
        if info.get("loop") and history:
            first = prediction_from_record(history[0])
            value["anls_initial"] = anls_score(first.answer, answers, variant=anls_variant)
            first_iou, _ = _box_scores(first, gold_boxes)
            value["map_initial"] = map_50_95([first_iou]) if has_box else math.nan
            meta["rounds"] = len(history) - 1
        shown_box = None if pred.bbox is None else [round(v) for v in pred.bbox]
        parts = [
            f"answer {pred.answer!r} vs {answers[0]!r}: ANLS {anls_value:.3f}",
            f"box {shown_box}" + (f" IoU {iou_value:.3f}" if has_box else " (no gold box)"),
        ]
        if pred.failure:
            parts.append(f"model failure: {pred.failure}")
            if meta.get("reply_status") == "truncated":
                parts.append("the reply was cut by the token limit")
        if has_box:
            parts.append(
                f"VAL Q {value['val_q']:.3f} ({'pass' if value['validator_pass'] else 'fail'})"
            )
        return Score(
            value=value, answer=pred.answer or "", explanation="; ".join(parts), metadata=meta
        )

    return score
