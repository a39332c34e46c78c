"""Training sets from docval logs, as DocVAL builds them (JSON Lines):

    python -m tasks.docval.export traces LOG OUT.jsonl       # phase A: teacher traces VAL keeps
    python -m tasks.docval.export corrections LOG OUT.jsonl  # phase B2: the correction set

``traces`` reads a ``method=distill`` (or any) log, re-runs VAL's filter on each prediction with
the log's q_min and writes the traces with Q ≥ q_min, then prints the pass rate. ``corrections``
reads a log of the student's predictions on the **dev** split (it refuses any other split: the
records carry the gold answer and box), runs VAL's verifier, and writes one record per INVALID
prediction (``--all``: every prediction): question, image, previous output, VAL's priority
fixes → the corrected output. A ``<OUT>.summary.json`` beside the file holds the counts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log

from methods.docval import (
    Prediction,
    ValConfig,
    Validator,
    ValReport,
    correction_record,
    regions_from_dicts,
    trace_record,
    write_jsonl,
)
from tasks.docval.scorer import prediction_from_record
from tasks.docval.solver import DOCVAL_KEY

__all__ = ["export_corrections", "export_traces", "main"]


def _config(log: Any) -> ValConfig:
    args = log.eval.task_args or {}
    return ValConfig(
        q_min=float(args.get("q_min", 0.85)),
        anls_variant=args.get("anls_variant", "standard"),
    )


def _sha256(path: str) -> str:
    p = Path(path)
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""


@dataclass(frozen=True)
class _Checked:
    """One logged prediction with VAL's report and the sample fields every record carries."""

    fields: dict[str, str]  # sample_id, question, image, image_sha256
    metadata: dict[str, Any]
    prediction: Prediction
    report: ValReport


def _validated(log: Any, validator: Validator) -> list[_Checked]:
    """Each scored sample's prediction and VAL report; samples that errored or carry no docval
    prediction are passed over."""
    out = []
    for sample in log.samples or []:
        if sample.error is not None:
            continue
        info = (sample.metadata or {}).get(DOCVAL_KEY)
        if not isinstance(info, dict) or "prediction" not in info:
            continue
        md = sample.metadata
        if not md.get("gold_box"):
            raise ValueError(f"sample {sample.id}: no gold box, VAL cannot score it")
        pred = prediction_from_record(info["prediction"])
        report = validator.validate(
            pred, list(md["answers"]), tuple(md["gold_box"]), regions_from_dicts(info["regions"])
        )
        fields = {
            "sample_id": str(sample.id),
            "question": md["question"],
            "image": md["image"],
            "image_sha256": _sha256(md["image"]),
        }
        out.append(_Checked(fields, md, pred, report))
    return out


def _write(out: str, records: list[dict[str, Any]], summary: dict[str, Any]) -> dict[str, Any]:
    write_jsonl(out, records)
    Path(str(out) + ".summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def export_traces(log_path: str, out: str) -> dict[str, Any]:
    log = read_eval_log(log_path)
    config = _config(log)
    validator = Validator(config)
    teacher = (log.eval.model_roles or {}).get("teacher")
    teacher_name = getattr(teacher, "model", None) or log.eval.model
    kept, total = [], 0
    for item in _validated(log, validator):
        total += 1
        if item.report.passed:
            kept.append(
                trace_record(
                    **item.fields,
                    teacher=str(teacher_name),
                    prediction=item.prediction,
                    report=item.report,
                )
            )
    summary = {
        "log": str(log_path),
        "traces": total,
        "kept": len(kept),
        "pass_rate": len(kept) / total if total else None,
        "q_min": config.q_min,
    }
    return _write(out, kept, summary)


def export_corrections(log_path: str, out: str, *, include_valid: bool = False) -> dict[str, Any]:
    log = read_eval_log(log_path)
    # the split the run recorded (data_split); older logs: the task argument (default then: all)
    split = (log.eval.metadata or {}).get(
        "data_split", (log.eval.task_args or {}).get("split", "all")
    )
    if split != "dev":
        raise SystemExit(
            f"{log_path}: the correction set carries gold labels and is built on split=dev only; "
            f"this log has split={split!r}"
        )
    validator = Validator(_config(log), mode="verifier")
    records, total, invalid = [], 0, 0
    for item in _validated(log, validator):
        total += 1
        invalid += not item.report.passed
        if include_valid or not item.report.passed:
            records.append(
                correction_record(
                    **item.fields,
                    prediction=item.prediction,
                    report=item.report,
                    split=item.metadata["split"],
                )
            )
    summary = {
        "log": str(log_path),
        "predictions": total,
        "invalid": invalid,
        "error_rate": invalid / total if total else None,
        "records": len(records),
    }
    return _write(out, records, summary)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tasks.docval.export", description=__doc__)
    parser.add_argument("kind", choices=["traces", "corrections"])
    parser.add_argument("log", help="an inspect .eval log of the docval task")
    parser.add_argument("out", help="the JSON Lines file to write")
    parser.add_argument(
        "--all", action="store_true", help="corrections: every prediction, not only INVALID"
    )
    args = parser.parse_args(argv)
    if args.kind == "traces":
        summary = export_traces(args.log, args.out)
    else:
        summary = export_corrections(args.log, args.out, include_valid=args.all)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
