"""The ``tests`` job: run test node ids (all collected when ``tests`` is null) on a variant,
per-test status (PASSED/FAILED/ERROR/SKIPPED/XFAIL/XPASS), optionally line coverage per test
(coverage.py contexts switched to each node id), stopping at the first failure when asked."""

from __future__ import annotations

import os
from typing import Any

from .glue import details_of, status_of
from .swap import Runner, install_overrides


def job_tests(runner: Runner, job: dict[str, Any]) -> dict[str, Any]:
    ids = job.get("tests")
    items = runner.items if ids is None else [runner.by_id[i] for i in ids if i in runner.by_id]
    missing = [] if ids is None else [i for i in ids if i not in runner.by_id]
    result: dict[str, Any] = {"missing": missing}
    try:
        runner.apply(job.get("variant"))
    except SyntaxError as exc:
        return {**result, "error": f"variant does not compile: {exc}", "status": {}}
    result["swap"] = ",".join(runner.swap_modes) or "none"
    install_overrides(runner)
    cov = None
    contexts: dict[str, dict[str, list[int]]] = {}
    targets = [os.path.join(runner.repo, p) for p in runner.plan.get("target_files", [])]
    if job.get("coverage"):
        import coverage

        cov = coverage.Coverage(data_file=None, include=targets, config_file=False)
        # a project's pytest config may turn warnings into errors: coverage's are not its concern
        cov.set_option(
            "run:disable_warnings",
            ["no-data-collected", "module-not-measured", "module-not-imported", "already-imported"],
        )
        cov.start()
    statuses: dict[str, str] = {}
    details: dict[str, str] = {}
    durations: dict[str, float] = {}
    for i, item in enumerate(items):
        if cov is not None:
            cov.switch_context(item.nodeid)
        runner.reports = []
        nextitem = items[i + 1] if i + 1 < len(items) else None
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        statuses.update(status_of(runner.reports))
        if job.get("durations"):
            durations[item.nodeid] = round(sum(r.duration for r in runner.reports), 5)
        if job.get("details"):
            details.update(details_of(runner.reports))
        if job.get("stop_first") and statuses.get(item.nodeid) in ("FAILED", "ERROR"):
            break
    if details:
        result["details"] = details
    if durations:
        result["durations"] = durations
    if cov is not None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cov.stop()
            data = cov.get_data()
        for path in targets:
            for line, ctxs in (data.contexts_by_lineno(path) or {}).items():  # noqa: B007
                for ctx in ctxs:
                    rel = os.path.relpath(path, runner.repo)
                    contexts.setdefault(ctx, {}).setdefault(rel, []).append(line)
    result.update(status=statuses, coverage=contexts or None)
    return result
