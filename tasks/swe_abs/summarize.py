"""Summarise a swe_abs log: pooled rates with 95 % Wilson intervals and their counts, per project,
the hand-written wrong patches apart, the weakened instances' overlap with their removed tests,
and the candidate systems' re-ranking.

    .venv/bin/python -m tasks.swe_abs.summarize LOG.eval
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Any

from inspect_ai.log import read_eval_log

from methods.swe_abs import rerank
from scorers.intervals import wilson_ci
from tasks.swe_abs.scorer import CANDIDATE_SETS


def _rate(k: int, n: int) -> str:
    if n == 0:
        return "— (0 cases)"
    ci = wilson_ci(k, n)
    return f"{k}/{n} = {k / n:.1%} [{ci.low:.1%}, {ci.high:.1%}]"


def summarise(path: str) -> dict[str, Any]:
    log = read_eval_log(path)
    samples = [s for s in log.samples or [] if s.scores and s.error is None]
    totals: dict[str, int] = defaultdict(int)
    per_project: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    systems_before: dict[str, int] = defaultdict(int)
    systems_after: dict[str, int] = defaultdict(int)
    overlap = []
    for s in samples:
        assert s.scores is not None  # kept above: only samples with scores
        v = s.scores["swe_abs_scorer"].value
        assert isinstance(v, dict)
        project = str((s.metadata or {}).get("project", "?"))
        for key in ("strengthened", "prev_resolved", "rejected", "wrong_prev_resolved",
                    "wrong_rejected", "correct_prev_resolved", "correct_rejected", "mutants",
                    "mutants_survived", "mutants_killed_new", "new_tests", "flaky",
                    "solver_resolved", "solver_resolved_abs", "solver_ran", "duplicate_tests",
                    "unexpressible",
                    *(f"set_{o}_{p}{k}" for o in CANDIDATE_SETS for p in ("", "wrong_", "correct_")
                      for k in ("prev_resolved", "rejected"))):  # fmt: skip
            totals[key] += int(v.get(key, 0))
            per_project[project][key] += int(v.get(key, 0))
        per_project[project]["instances"] += 1
        for key, value in v.items():
            if key.startswith("sys:"):
                name, _, phase = key[4:].rpartition(":")
                (systems_before if phase == "orig" else systems_after)[name] += int(value)
        out = s.metadata["swe_abs"]["outcome"]
        if out.get("removed_overlap"):
            overlap.append((s.id, out["removed_overlap"]))
    n = len(samples)
    print(f"{path}: {n} instances, {len(log.samples or []) - n} with errors")
    print(f"instances strengthened: {_rate(totals['strengthened'], n)}")
    print(
        f"previously resolved candidates rejected (pooled): {_rate(totals['rejected'], totals['prev_resolved'])}"
    )
    print(
        f"  hand-written wrong patches rejected: {_rate(totals['wrong_rejected'], totals['wrong_prev_resolved'])}"
    )
    print(
        f"  hand-written correct patches rejected: {_rate(totals['correct_rejected'], totals['correct_prev_resolved'])}"
    )
    for origin in CANDIDATE_SETS:  # the new tests' rejection rate on every candidate set graded
        if not totals[f"set_{origin}_prev_resolved"]:
            continue
        print(
            f"  set {origin}: rejected {_rate(totals[f'set_{origin}_rejected'], totals[f'set_{origin}_prev_resolved'])}"
        )
        for kind in ("wrong", "correct"):
            den = totals[f"set_{origin}_{kind}_prev_resolved"]
            if den:
                print(f"    {kind}: {_rate(totals[f'set_{origin}_{kind}_rejected'], den)}")
    if totals["solver_ran"]:
        print(
            f"model under test resolved (original): {_rate(totals['solver_resolved'], totals['solver_ran'])}"
        )
        print(
            f"model under test resolved (strengthened): {_rate(totals['solver_resolved_abs'], totals['solver_ran'])}"
        )
    print(
        f"mutants: {totals['mutants']} non-equivalent; surviving the original tests "
        f"{_rate(totals['mutants_survived'], totals['mutants'])}; of those killed by new tests "
        f"{_rate(totals['mutants_killed_new'], totals['mutants_survived'])}"
    )
    print(
        f"new tests accepted: {totals['new_tests']}; flaky tests excluded: {totals['flaky']}; "
        f"duplicates dropped: {totals['duplicate_tests']}; drawn values with no expression as "
        f"code: {totals['unexpressible']}"
    )
    print("per project: instances, strengthened, wrong rejected / previously passing")
    for project, t in sorted(per_project.items()):
        print(
            f"  {project:16s} {t['instances']:3d} {t['strengthened']:3d}  {t['wrong_rejected']}/{t['wrong_prev_resolved']}"
        )
    for iid, o in overlap:
        print(f"weakened {iid}: removed tests catch {o['caught_by_removed']} (mutants, candidates); "
              f"new tests catch {o['also_caught_by_new']} of them (recall {o['recall']})")  # fmt: skip
    if len(systems_before) >= 2:
        r = rerank(dict(sorted(systems_before.items())), dict(systems_after))
        print("systems (resolved before → after, rank before → after):")
        for name in sorted(r.systems, key=lambda k: r.rank_before[k]):
            print(
                f"  {name:28s} {r.before[name]:3d} → {r.after[name]:3d}   {r.rank_before[name]} → {r.rank_after[name]}"
            )
        print(f"Spearman rho {r.spearman:.3f}; {r.rank_changed} systems change rank")
    return {"totals": dict(totals), "instances": n}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log")
    summarise(parser.parse_args().log)
