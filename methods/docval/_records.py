"""Training-set records DocVAL builds: kept teacher traces (phase A → B1) and the correction set
(phase B2: question, image and VAL feedback → corrected output), written as JSON Lines."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from methods.docval._types import Prediction
from methods.docval._validator import ValReport

__all__ = ["correction_record", "trace_record", "write_jsonl"]


def trace_record(
    *,
    sample_id: str,
    question: str,
    image: str,
    image_sha256: str,
    teacher: str,
    prediction: Prediction,
    report: ValReport,
) -> dict[str, Any]:
    """One teacher trace with VAL's filter scores (kept when ``report.passed``)."""
    return {
        "id": sample_id,
        "question": question,
        "image": image,
        "image_sha256": image_sha256,
        "teacher": teacher,
        "reasoning": list(prediction.reasoning),
        "answer": prediction.answer,
        "bbox": None if prediction.bbox is None else [round(v, 1) for v in prediction.bbox],
        "val": {
            "q": round(report.q, 4),
            "q_ans": round(report.q_ans, 4),
            "q_bbox": round(report.q_bbox, 4),
            "q_reason": round(report.q_reason, 4),
            "passed": report.passed,
        },
    }


def correction_record(
    *,
    sample_id: str,
    question: str,
    image: str,
    image_sha256: str,
    prediction: Prediction,
    report: ValReport,
    split: str,
) -> dict[str, Any]:
    """One B2 correction pair: input = question, image, the student's output and VAL's verifier
    feedback; output = VAL's corrected output (gold answer, gold box, template CoT). Only a dev
    split may produce these: they carry the label."""
    if report.corrected_output is None:
        raise ValueError(f"{sample_id}: the report comes from VAL's filter mode; use verifier mode")
    if split != "dev":
        raise ValueError(
            f"{sample_id}: correction records carry gold labels and are built on the dev split "
            f"only (got split {split!r})"
        )
    return {
        "id": sample_id,
        "split": split,
        "input": {
            "question": question,
            "image": image,
            "image_sha256": image_sha256,
            "previous_output": prediction.to_dict(),
            "feedback": list(report.priority_fixes),
            "status": report.status,
        },
        "output": report.corrected_output,
        "val": {
            "q": round(report.q, 4),
            "iou": round(report.iou, 4),
            "anls": round(report.anls, 4),
        },
    }


def write_jsonl(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> int:
    """Write records one JSON object per line (atomically); returns how many were written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    tmp.replace(path)
    return n
