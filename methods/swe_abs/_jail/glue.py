"""pytest glue of the warm runner: per-test statuses as SWE-bench's log parser reports them,
failure details, and the plugin that collects once and then runs the plan's jobs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .swap import Runner

STATUS_PASSED = "PASSED"


def details_of(reports: list[Any], limit: int = 1500) -> dict[str, str]:
    """Failure text per failed/errored test (the end of pytest's report)."""
    out: dict[str, str] = {}
    for r in reports:
        if r.failed:
            out[r.nodeid] = (out.get(r.nodeid, "") + str(r.longrepr))[-limit:]
    return out


def status_of(reports: list[Any]) -> dict[str, str]:
    """Per node id: the status SWE-bench's pytest parser would report."""
    out: dict[str, str] = {}
    for r in reports:
        nodeid, when = r.nodeid, r.when
        xfail = hasattr(r, "wasxfail")
        prev = out.get(nodeid)
        if when == "setup":
            if r.failed:
                out[nodeid] = "ERROR"
            elif r.skipped:
                out[nodeid] = "XFAIL" if xfail else "SKIPPED"
        elif when == "call":
            if r.failed:
                out[nodeid] = "FAILED"
            elif prev == "FAILED":
                continue  # a failed subtest keeps the test failed
            elif r.skipped:
                out[nodeid] = "XFAIL" if xfail else "SKIPPED"
            elif r.passed:
                out[nodeid] = "XPASS" if xfail else STATUS_PASSED
        elif when == "teardown" and r.failed and prev in (STATUS_PASSED, None):
            out[nodeid] = "ERROR"
    return out


class Plugin:
    """Collects once, then hands the test loop to ``run_jobs`` (the plan's jobs)."""

    def __init__(self, runner: Runner, run_jobs: Callable[[Runner], None]) -> None:
        self.runner = runner
        self.run_jobs = run_jobs

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.runner.collect_errors.append(f"{report.nodeid}: {str(report.longrepr)[-2000:]}")

    def pytest_collection_finish(self, session: Any) -> None:
        self.runner.items = list(session.items)
        self.runner.by_id = {item.nodeid: item for item in session.items}

    def pytest_runtest_logreport(self, report: Any) -> None:
        self.runner.reports.append(report)

    def pytest_runtestloop(self, session: Any) -> bool:  # noqa: ARG002 - pytest's hook signature
        self.run_jobs(self.runner)
        return True
