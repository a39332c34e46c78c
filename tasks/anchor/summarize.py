"""Markdown tables from anchor logs: `python -m tasks.anchor.summarize LOG [LOG ...]`.

Pools the samples of the given .eval files (or folders: newest .eval in each), splits them by
auditor mode, and prints the headline table and the per-category compliance table.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

from inspect_ai.log import read_eval_log

from methods.anchor import AuditOutcome, summarize, summarize_by_category


def _outcome(md: dict, a: dict) -> AuditOutcome:
    ftc, ftr = a["first_compliance_turn"], a["first_refusal_turn"]
    return AuditOutcome(
        scenario_id=md["scenario_id"],
        category=md["category"],
        complied=a["compliance"] == "full",
        turns_to_compliance=ftc,
        refused_any=a["refused_any"],
        refusal_then_comply=ftc is not None and ftr is not None and ftr < ftc,
        over_complied=a["over_compliance_count"] > 0,
        over_compliance_ratio=a["over_compliance_count"] / max(1, md["n_requested_actions"]),
        harm=a["harm"],
        turns=len(a["turns"]),
    )


def _fmt(x: float, pct: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x:.1f}" if pct else f"{x:.2f}"


def main(paths: list[str]) -> None:
    files = []
    for p in map(Path, paths):
        files.append(max(p.glob("*.eval"), key=lambda f: f.stat().st_mtime) if p.is_dir() else p)
    by_mode: dict[str, list[AuditOutcome]] = {}
    extra: dict[str, Counter] = {}
    for f in files:
        log = read_eval_log(str(f))
        for s in log.samples or []:
            a = s.metadata.get("anchor")
            mode = s.metadata.get("auditor", "?")
            c = extra.setdefault(mode, Counter())
            if a is None:
                c["errored_samples"] += 1
                continue
            by_mode.setdefault(mode, []).append(_outcome(s.metadata, a))
            c["turns"] += len(a["turns"])
            c["commands"] += len(a["commands"])
            c["turn_limits"] += sum(t["limit"] is not None for t in a["turns"])
            c["auditor_fallbacks"] += sum(t["auditor_source"] == "fallback" for t in a["turns"])
            c["auditor_model_msgs"] += sum(t["auditor_source"] == "model" for t in a["turns"])
            for j in a["judges"].values():
                c["judge_calls"] += 1
                c["judge_failures"] += j["error"] is not None
            cj = a["judges"]["compliance"]
            if cj["error"] is None:
                c["compliance_judge_parsed"] += 1
                c["compliance_judge_agrees"] += cj["model"] == cj["deterministic"]
    print(
        "| auditor | n | compliance % [95% CI] | refusal % | refusal→comply % | over-compliance % "
        "| turns to compliance | harm 0/1/2/3/4/5 | tool calls | judge failures |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mode, outs in sorted(by_mode.items()):
        summary, c = summarize(outs), extra[mode]
        comp = summary["compliance"]
        harm = "/".join(str(summary["harm_distribution"][k]) for k in range(6))
        print(
            f"| {mode} | {summary['n']} | {_fmt(comp['value'])} [{_fmt(comp['low'])}, "
            f"{_fmt(comp['high'])}] "
            f"| {_fmt(summary['refusal']['value'])} "
            f"| {_fmt(summary['refusal_then_comply']['value'])} "
            f"| {_fmt(summary['over_compliance']['value'])} "
            f"| {_fmt(summary['turns_to_compliance_mean'], False)} "
            f"| {harm} | {c['commands']} | {c['judge_failures']}/{c['judge_calls']} |"
        )
    print()
    for mode, c in sorted(extra.items()):
        print(f"- {mode}: " + ", ".join(f"{k}={v}" for k, v in sorted(c.items())))
    print()
    cats = sorted({o.category for outs in by_mode.values() for o in outs})
    modes = sorted(by_mode)
    print("| category | " + " | ".join(f"{m} compliance (k/n)" for m in modes) + " |")
    print("|---|" + "---|" * len(modes))
    per = {m: summarize_by_category(by_mode[m]) for m in modes}
    for cat in cats:
        cells = []
        for m in modes:
            r = per[m].get(cat)
            cells.append(f"{r['compliance']['k']}/{r['compliance']['n']}" if r else "–")
        print(f"| {cat} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
