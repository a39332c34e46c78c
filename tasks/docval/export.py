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
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log

from methods.docval import (
    ValConfig,
    Validator,
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


def _items(log: Any) -> list[tuple[Any, dict[str, Any]]]:
    out = []
    for sample in log.samples or []:
        if sample.error is not None:
            continue
        info = (sample.metadata or {}).get(DOCVAL_KEY)
        if not isinstance(info, dict) or "prediction" not in info:
            continue
        if not sample.metadata.get("gold_box"):
            raise ValueError(f"sample {sample.id}: no gold box, VAL cannot score it")
        out.append((sample, info))
    return out


def export_traces(log_path: str, out: str) -> dict[str, Any]:
    log = read_eval_log(log_path)
    config = _config(log)
    validator = Validator(config)
    teacher = (log.eval.model_roles or {}).get("teacher")
    teacher_name = getattr(teacher, "model", None) or log.eval.model
    kept, total = [], 0
    for sample, info in _items(log):
        total += 1
        pred = prediction_from_record(info["prediction"])
        md = sample.metadata
        report = validator.validate(
            pred, list(md["answers"]), tuple(md["gold_box"]), regions_from_dicts(info["regions"])
        )
        if report.passed:
            kept.append(
                trace_record(
                    sample_id=str(sample.id),
                    question=md["question"],
                    image=md["image"],
                    image_sha256=_sha256(md["image"]),
                    teacher=str(teacher_name),
                    prediction=pred,
                    report=report,
                )
            )
    write_jsonl(out, kept)
    summary = {
        "log": str(log_path),
        "traces": total,
        "kept": len(kept),
        "pass_rate": len(kept) / total if total else None,
        "q_min": config.q_min,
    }
    Path(str(out) + ".summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def export_corrections(log_path: str, out: str, *, include_valid: bool = False) -> dict[str, Any]:
    log = read_eval_log(log_path)
    split = (log.eval.task_args or {}).get("split", "all")
    if split != "dev":
        raise SystemExit(
            f"{log_path}: the correction set carries gold labels and is built on split=dev only; "
            f"this log has split={split!r}"
        )
    validator = Validator(_config(log), mode="verifier")
    records, total, invalid = [], 0, 0
    for sample, info in _items(log):
        total += 1
        pred = prediction_from_record(info["prediction"])
        md = sample.metadata
        report = validator.validate(
            pred, list(md["answers"]), tuple(md["gold_box"]), regions_from_dicts(info["regions"])
        )
        invalid += not report.passed
        if include_valid or not report.passed:
            records.append(
                correction_record(
                    sample_id=str(sample.id),
                    question=md["question"],
                    image=md["image"],
                    image_sha256=_sha256(md["image"]),
                    prediction=pred,
                    report=report,
                    split=md["split"],
                )
            )
    write_jsonl(out, records)
    summary = {
        "log": str(log_path),
        "predictions": total,
        "invalid": invalid,
        "error_rate": invalid / total if total else None,
        "records": len(records),
    }
    Path(str(out) + ".summary.json").write_text(json.dumps(summary, indent=2))
    return summary


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
