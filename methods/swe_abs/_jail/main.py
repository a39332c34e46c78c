"""Entry point of the warm runner inside the sandbox: ``main(plan.json)`` collects the plan's
test files once with pytest, then runs the plan's jobs (:mod:`.plan`) in forked children."""

from __future__ import annotations

import io
import json
import os
import sys

from .glue import Plugin
from .plan import run_jobs
from .swap import Runner


def main(plan_path: str) -> int:
    with open(plan_path, encoding="utf-8") as fh:
        plan = json.load(fh)
    runner = Runner(plan)
    os.chdir(plan["repo"])
    for p in reversed(plan.get("sys_path", [])):
        sys.path.insert(0, p)
    sys.dont_write_bytecode = True
    import pytest

    args = [
        *plan["test_files"],
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "--continue-on-collection-errors",
        *plan.get("pytest_args", []),
    ]
    sink = io.StringIO()
    real_stdout = sys.stdout
    sys.stdout = sink
    try:
        code = pytest.main(args, plugins=[Plugin(runner, run_jobs)])
    finally:
        sys.stdout = real_stdout
    if not os.path.exists(plan["result_path"]):  # pytest stopped before the jobs (usage error)
        with open(plan["result_path"], "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "collected": [],
                    "collect_errors": runner.collect_errors or [sink.getvalue()[-3000:]],
                    "jobs": {},
                    "pytest_exit": int(code),
                },
                fh,
            )
    print(json.dumps({"pytest_exit": int(code), "jobs": len(plan.get("jobs", []))}))
    return 0
