"""`harness plan` cost per task x preset, against `harness list` in the same process (issue 30's
"a plan takes seconds, no model"): prints seconds and the ratio to the reference. With
`--embedded`, also the plan's estimated wall time against a measured run: docval's smoke preset
on the embedded model in-process (`probe=on`), estimate / measured (the goal: within 0.5-2).

    .venv/bin/python bench/bench_plan.py [--embedded]
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time

import _common  # noqa: F401  (puts the repository on sys.path)

from harness.cli import main
from harness.cli.discovery import discover_tasks
from harness.presets import PRESET_NAMES


def _seconds(args: list[str], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(args)
        times.append(time.perf_counter() - started)
        if code != 0:
            raise SystemExit(f"{' '.join(args)} exited {code}")
    return statistics.median(times)


def run() -> None:
    reference = _seconds(["list"])
    print(f"reference `harness list`: {reference:.2f} s (median of 3)")
    print(f"{'task':<20} {'preset':<7} {'plan s':>7} {'x list':>7}")
    worst = 0.0
    for task in sorted(discover_tasks().tasks):
        for preset in PRESET_NAMES:
            took = _seconds(["plan", f"task={task}", f"preset={preset}", "tokens_per_s=40"])
            worst = max(worst, took)
            print(f"{task:<20} {preset:<7} {took:>7.2f} {took / reference:>7.2f}")
    print(f"slowest plan: {worst:.2f} s ({worst / reference:.2f} x `harness list`)")


def embedded_estimate() -> None:
    import tempfile

    from harness.cli.plan import make_plans

    args = ["task=docval", "preset=smoke", "model=default", "backend=transformers"]
    (plan,), _ = make_plans([*args, "probe=on"])
    if plan.est_seconds is None:
        raise SystemExit("the probe gave no estimate")
    with tempfile.TemporaryDirectory() as log_dir:
        started = time.perf_counter()
        code = main(["eval", *args, f"log_dir={log_dir}", "display=none"])
        measured = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"the smoke run exited {code}")
    ratio = plan.est_seconds / measured
    print(
        f"docval smoke, embedded in-process: estimated {plan.est_seconds:.1f} s, measured "
        f"{measured:.1f} s, estimate / measured {ratio:.2f} ({plan.time_source})"
    )


if __name__ == "__main__":
    import sys

    run()
    if "--embedded" in sys.argv[1:]:
        embedded_estimate()
