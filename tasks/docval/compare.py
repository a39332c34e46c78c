"""Tables for the README from docval logs: per-run means with bootstrap intervals, per field or
degradation level, and paired differences between two runs on the same questions.

    python -m tasks.docval.compare summary LOG [LOG ...] [--by field|degradation|layout]
    python -m tasks.docval.compare paired LOG_A LOG_B [--value anls] [--field total]
    python -m tasks.docval.compare feedback LOG [--examples 5]
    python -m tasks.docval.compare formats LOG [LOG ...]
    python -m tasks.docval.compare split-gap LOG [--value anls] [--field total]

``paired`` matches samples by id, keeps those both runs scored (optionally one field), and
prints mean(A) − mean(B) with its 95 % paired-bootstrap interval (2000 resamples, seed 0).
``feedback`` counts VAL's verifier errors by kind and severity over a run's predictions (with
the pass rate per field) and prints a few of its priority-ordered fixes. ``formats`` separates
format from skill for model runs: replies ok / truncated / format failures, the most common
failure reasons, and ANLS and mAP over all questions and over the well-formed replies only.
``split-gap`` takes one run on ``split=all`` and compares its dev side (the vendors every choice
was made on) with its test side (vendors never looked at): each side's mean with a 95 %
bootstrap interval over its vendors, and test − dev with a 95 % interval from resampling the
vendors within each side (2000 resamples, seed 0; a vendor's receipts and questions move
together: one vendor with six receipts is one draw, not six). Without vendors (rendered,
docvqa) the cluster is the document.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from collections import defaultdict
from collections.abc import Callable
from typing import Any, cast

import numpy as np
from inspect_ai.log import read_eval_log

from scorers.stats import bootstrap_mean_ci, bootstrap_statistic_ci, paired_bootstrap_diff

__all__ = ["feedback", "formats", "load_values", "main", "paired", "split_gap", "summary"]

VALUES = ("anls", "map", "acc50", "validator_pass", "format_ok")


def load_values(path: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(run info, {sample id: {value key: float, "field": ..., "degradation": ...}})."""
    log = read_eval_log(path)
    if log.status != "success":
        raise SystemExit(f"{path}: status {log.status}, not a finished run")
    args = log.eval.task_args or {}
    info = {
        "path": path,
        "model": log.eval.model,
        **{
            k: args.get(k)
            for k in ("dataset", "method", "ocr_engine", "answer_rule", "degradation")
        },
    }
    rows: dict[str, dict[str, Any]] = {}
    for s in log.samples or []:
        if s.error is not None or not s.scores:
            continue
        score = next(iter(s.scores.values()))
        row: dict[str, Any] = {k: float(v) for k, v in dict(score.value).items()}  # type: ignore[arg-type]
        row["field"] = s.metadata.get("field")
        row["degradation"] = s.metadata.get("degradation", args.get("degradation"))
        row["layout"] = s.metadata.get("layout")
        row["split"] = s.metadata.get("split")
        row["vendor"] = s.metadata.get("vendor")
        row["doc_id"] = s.metadata.get("doc_id")
        row["failure"] = bool((score.metadata or {}).get("failure"))
        row["failure_reason"] = (score.metadata or {}).get("failure")
        row["reply_status"] = (score.metadata or {}).get("reply_status")
        rows[str(s.id)] = row
    return info, rows


def _fmt(ci: Any, pct: bool = True) -> str:
    if math.isnan(ci.estimate):
        return "—"
    k = 100.0 if pct else 1.0
    if math.isnan(ci.low):
        return f"{ci.estimate * k:.1f}"
    return f"{ci.estimate * k:.1f} [{ci.low * k:.1f}, {ci.high * k:.1f}]"


def summary(paths: list[str], by: str | None = None) -> str:
    lines = [
        "| run | group | n | ANLS | mAP@[.50:.95] | Acc@0.5 | VAL pass | format ok |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for path in paths:
        info, rows = load_values(path)
        name = f"{info['method']}/{info.get('ocr_engine')}/{info.get('answer_rule') or ''} {info['model']}"
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in rows.values():
            groups["all"].append(row)
            if by:
                groups[str(row.get(by))].append(row)
        for group, items in groups.items():
            cells = []
            for key in VALUES:
                vals = [r[key] for r in items if key in r and not math.isnan(r[key])]
                cells.append(_fmt(bootstrap_mean_ci(vals)) if vals else "—")
            lines.append(f"| {name} | {group} | {len(items)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paired(path_a: str, path_b: str, value: str = "anls", field: str | None = None) -> str:
    _, a = load_values(path_a)
    _, b = load_values(path_b)
    ids = sorted(
        i
        for i in a.keys() & b.keys()
        if (field is None or a[i]["field"] == field)
        and not math.isnan(a[i][value])
        and not math.isnan(b[i][value])
    )
    if not ids:
        raise SystemExit("no questions scored by both runs")
    d = paired_bootstrap_diff([a[i][value] for i in ids], [b[i][value] for i in ids])
    mean_a = sum(a[i][value] for i in ids) / len(ids)
    mean_b = sum(b[i][value] for i in ids) / len(ids)
    return (
        f"{value} on {len(ids)} paired questions{f' (field={field})' if field else ''}: "
        f"A {mean_a * 100:.1f}, B {mean_b * 100:.1f}, A − B = {d.delta * 100:+.1f} "
        f"[{d.low * 100:+.1f}, {d.high * 100:+.1f}] (95 % paired bootstrap, p = {d.p_value:.4f})"
    )


def _side_mean(
    members: np.ndarray, test: bool, mean_of: Callable[[np.ndarray, bool], float], idx: np.ndarray
) -> float:
    return mean_of(members[idx], test)


def split_gap(path: str, value: str = "anls", field: str | None = None) -> str:
    """Dev side vs test side of one ``split=all`` run, clustered by vendor (module docstring)."""
    _, rows = load_values(path)
    docs: dict[str, list[float]] = defaultdict(list)
    side: dict[str, str] = {}
    receipts: dict[str, set[str]] = defaultdict(set)
    for row in rows.values():
        if (field is not None and row["field"] != field) or math.isnan(row.get(value, math.nan)):
            continue
        doc = str(row.get("vendor") or row.get("doc_id"))
        if side.setdefault(doc, str(row.get("split"))) != row.get("split"):
            raise SystemExit(f"{path}: source {doc} has questions on both sides")
        docs[doc].append(row[value])
        receipts[str(row.get("split"))].add(str(row.get("doc_id")))
    if {side[d] for d in docs} != {"dev", "test"}:
        raise SystemExit(f"{path}: needs questions on both dev and test (run it with split=all)")
    names = sorted(docs)
    sums = np.array([sum(docs[d]) for d in names])
    counts = np.array([len(docs[d]) for d in names], dtype=float)
    is_test = np.array([side[d] == "test" for d in names])

    def mean_of(idx: np.ndarray, test: bool) -> float:
        chosen = idx[is_test[idx] == test]
        return float(sums[chosen].sum() / counts[chosen].sum())

    def gap(idx: np.ndarray) -> float:
        return mean_of(idx, True) - mean_of(idx, False)

    out = []
    for name, test in (
        ("dev (vendors the rule was derived on)", False),
        ("test (unseen vendors)", True),
    ):
        members = np.flatnonzero(is_test == test)
        ci = bootstrap_statistic_ci(
            functools.partial(_side_mean, members, test, mean_of), len(members)
        )
        label = "test" if test else "dev"
        out.append(
            f"{value}{f' (field={field})' if field else ''}, {name}: {_fmt(ci)} "
            f"(n = {int(counts[members].sum())} questions, {len(receipts[label])} documents, "
            f"{len(members)} sources)"
        )
    d = bootstrap_statistic_ci(gap, len(names), strata=is_test.astype(int))
    out.append(
        f"test − dev = {d.estimate * 100:+.1f} [{d.low * 100:+.1f}, {d.high * 100:+.1f}] "
        "(95 % bootstrap over sources within each side)"
    )
    return "\n".join(out)


_KINDS = (
    ("semantic", "Your bbox targets Region"),
    ("answer", "Answer "),
    ("bbox", "BBox "),
    ("bbox", "No box given"),
    ("reasoning", "Incomplete reasoning"),
    ("reasoning", "Coordinate inconsistency"),
    ("reasoning", "Spatial description"),
)


def _kind(fix: str) -> tuple[str, str]:
    severity, _, message = fix.partition("] ")
    for kind, prefix in _KINDS:
        if message.startswith(prefix):
            return kind, severity.lstrip("[").lower()
    return "other", severity.lstrip("[").lower()


def feedback(path: str, examples: int = 5) -> str:
    """VAL verifier errors by kind and severity, pass rate per field, and example fixes."""
    log = read_eval_log(path)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    per_field: dict[str, list[float]] = defaultdict(list)
    shown: list[str] = []
    n = 0
    for s in log.samples or []:
        if s.error is not None or not s.scores:
            continue
        score = next(iter(s.scores.values()))
        fixes = (score.metadata or {}).get("val_feedback")
        if fixes is None:
            continue
        n += 1
        value = cast(dict[str, Any], score.value)  # docval_scorer: a dict of named values
        per_field[str(s.metadata.get("field"))].append(float(value["validator_pass"]))
        for kind in {_kind(f) for f in fixes}:
            counts[kind] += 1
        if fixes and len(shown) < examples and not value["validator_pass"]:
            shown.append(f"- `{s.id}` (Q {value['val_q']:.2f}): " + " / ".join(fixes))
    lines = [
        f"{n} predictions scored by VAL ({path})",
        "",
        "| field | n | VAL pass |",
        "|---|---|---|",
    ]
    for field, vals in sorted(per_field.items()):
        lines.append(f"| {field} | {len(vals)} | {_fmt(bootstrap_mean_ci(vals))} |")
    lines += ["", "| error | severity | predictions | share |", "|---|---|---|---|"]
    for (kind_name, severity), c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"| {kind_name} | {severity} | {c} | {100 * c / max(n, 1):.1f} % |")
    return "\n".join([*lines, "", *shown])


def _reason_kind(reason: str) -> str:
    """A failure reason without its sample-specific values (``bbox: ... outside`` → one kind)."""
    first = reason.split(";")[0].strip()
    return first.split(":")[0] if first.startswith(("bbox", "unparseable")) else first[:60]


def formats(paths: list[str]) -> str:
    """Format apart from skill: reply status counts, failure kinds, scores over well-formed."""
    lines = [
        "| run | n | well-formed | ok | truncated | format failure | ANLS (all) | ANLS (well-formed) "
        "| mAP (well-formed) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    reasons_out = []
    for path in paths:
        info, rows = load_values(path)
        items = list(rows.values())
        status: dict[str, int] = defaultdict(int)
        reasons: dict[str, int] = defaultdict(int)
        for r in items:
            status[str(r.get("reply_status"))] += 1
            if r.get("failure_reason"):
                reasons[_reason_kind(str(r["failure_reason"]))] += 1
        good = [r for r in items if r.get("format_ok") == 1.0]
        cells = [
            _fmt(bootstrap_mean_ci([r["format_ok"] for r in items])),
            str(status.get("ok", 0)),
            str(status.get("truncated", 0)),
            str(status.get("format_failure", 0)),
            _fmt(bootstrap_mean_ci([r["anls"] for r in items])),
            f"{_fmt(bootstrap_mean_ci([r['anls'] for r in good]))} (n={len(good)})"
            if good
            else "—",
            _fmt(bootstrap_mean_ci([r["map"] for r in good if not math.isnan(r["map"])]))
            if good
            else "—",
        ]
        name = f"{info['method']}/{info.get('ocr_engine')} {info['model']} ({path})"
        lines.append(f"| {name} | {len(items)} | " + " | ".join(cells) + " |")
        top = sorted(reasons.items(), key=lambda kv: -kv[1])[:4]
        reasons_out.append(f"- {name}: " + "; ".join(f"{k} ({c})" for k, c in top))
    return "\n".join([*lines, "", "Most common failure reasons:", *reasons_out])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tasks.docval.compare", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summary")
    s.add_argument("logs", nargs="+")
    s.add_argument("--by", choices=["field", "degradation", "layout", "split"])
    p = sub.add_parser("paired")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--value", default="anls", choices=[*VALUES, "iou"])
    p.add_argument("--field")
    f = sub.add_parser("feedback")
    f.add_argument("log")
    f.add_argument("--examples", type=int, default=5)
    fm = sub.add_parser("formats")
    fm.add_argument("logs", nargs="+")
    g = sub.add_parser("split-gap")
    g.add_argument("log")
    g.add_argument("--value", default="anls", choices=[*VALUES, "iou"])
    g.add_argument("--field")
    args = parser.parse_args(argv)
    if args.cmd == "summary":
        print(summary(args.logs, args.by))
    elif args.cmd == "formats":
        print(formats(args.logs))
    elif args.cmd == "split-gap":
        print(split_gap(args.log, args.value, args.field))
    elif args.cmd == "paired":
        print(paired(args.a, args.b, args.value, args.field))
    else:
        print(feedback(args.log, args.examples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
