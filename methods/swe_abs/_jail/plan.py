"""The plan: jobs in order, each resolved against earlier results (skip when a gate was
killed; pick the tests that execute a line; scale a time limit; the lines still uncovered),
then run in a child; the results go to the plan's ``result_path`` as JSON."""

from __future__ import annotations

import json
from typing import Any

from .child import run_child
from .glue import STATUS_PASSED
from .job_differential import job_differential
from .job_explore import job_explore
from .job_foreign import job_foreign
from .job_tests import job_tests
from .swap import Runner

JOBS = {
    "tests": job_tests,
    "differential": job_differential,
    "explore": job_explore,
    "foreign": job_foreign,
}


def killed(result: dict[str, Any]) -> bool:
    return bool(result.get("timed_out")) or any(
        s in ("FAILED", "ERROR") for s in (result.get("status") or {}).values()
    )


def resolve(job: dict[str, Any], results: dict[str, Any]) -> dict[str, Any] | None:
    """Fill a job's dependencies on earlier results; a dict result means "do not run"."""
    gate = job.get("skip_if_killed")
    if gate is not None and gate in results and killed(results[gate]):
        return {"skipped": "killed", "status": {}}
    sel = job.get("select_from")
    if sel is not None:
        base = results.get(sel["job"]) or {}
        contexts = base.get("coverage") or {}
        passed = {t for t, s in (base.get("status") or {}).items() if s == STATUS_PASSED}
        chosen = set()
        # Lines run when the module is imported (def headers with their default values, class
        # headers, module-level code) are executed for every test: the import happens at
        # collection, outside any test's coverage context, and it is what makes them run.
        import_time = sel.get("import_time") or {}
        if any(set(lines) & set(import_time.get(p, ())) for p, lines in sel["lines"].items()):
            chosen = set(passed)
        for ctx, files in contexts.items():
            if ctx not in passed:
                continue
            for path, lines in sel["lines"].items():
                if set(lines) & set(files.get(path, ())):
                    chosen.add(ctx)
        order = [item.nodeid for item in RUNNER.items if item.nodeid in chosen]
        if not order:
            return {"no_tests": True, "status": {}}
        job["tests"] = order
        clean = sum((base.get("durations") or {}).get(t, 0.0) for t in order)
        factor = float(sel.get("timeout_factor", 10.0))
        job["timeout"] = min(
            float(job.get("timeout", 60)), factor * clean + float(sel.get("timeout_base", 1.0))
        )
    budget = job.get("timeout_from")
    if budget is not None:  # factor x the clean time of these tests on the reference, + base
        base = results.get(budget["job"]) or {}
        if budget.get("whole_job"):  # the reference job's wall time (it ran the same tests)
            clean = float(base.get("seconds") or 0.0)
        else:
            durations = base.get("durations") or {}
            tests = job.get("tests") or list(durations)
            clean = sum(durations.get(t, 0.0) for t in tests)
        scaled = float(budget.get("factor", 10.0)) * clean + float(budget.get("base", 1.0))
        current = float(job.get("timeout", 60))
        # "at_least": a slow machine must not turn a correct candidate into a timeout
        job["timeout"] = max(current, scaled) if budget.get("at_least") else min(current, scaled)
    unc = job.get("uncovered_from")
    if unc is not None:
        job.setdefault("targets", unc["targets"])
        base = results.get(unc["job"]) or {}
        seen: dict[str, set[int]] = {}
        for files in (base.get("coverage") or {}).values():
            for path, lines in files.items():
                seen.setdefault(path, set()).update(lines)
        job["lines"] = {p: sorted(set(ls) - seen.get(p, set())) for p, ls in unc["targets"].items()}
    return None


RUNNER: Runner


def run_jobs(runner: Runner) -> None:
    global RUNNER
    RUNNER = runner
    runner.functions()  # index once, in the warm parent
    if any(
        job["kind"] in ("differential", "explore", "foreign") for job in runner.plan.get("jobs", [])
    ):
        import hypothesis  # noqa: F401 - imported once here, not in every child

    results: dict[str, Any] = {}
    for job in runner.plan.get("jobs", []):
        early = resolve(job, results)
        results[job["id"]] = (
            early if early is not None else run_child(runner, job, JOBS[job["kind"]])
        )
        if "select_from" in job and early is None:  # which covering tests were selected
            results[job["id"]].setdefault("ran", job["tests"])
    payload = {
        "collected": [item.nodeid for item in runner.items],
        "collect_errors": runner.collect_errors,
        "jobs": results,
    }
    with open(runner.plan["result_path"], "w", encoding="utf-8") as fh:
        json.dump(payload, fh, default=repr)
