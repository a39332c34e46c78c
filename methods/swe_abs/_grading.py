"""Grading a candidate patch from per-test statuses: SWE-bench's rule and SWE-ABS's rule.

SWE-bench (``swebench.harness.grading``): a FAIL_TO_PASS or PASS_TO_PASS test *passes* when its
status is PASSED or XFAIL and *fails* when it is FAILED or ERROR or missing from the log; other
statuses (SKIPPED) count as neither. The instance is resolved when every F2P and every P2P test
that is not neutral passes (success rate 1 on both lists; an empty list counts as 1).

SWE-ABS re-evaluation: a patch that was resolved fails the strengthened suite when *any* of its
tests has a status other than OK/PASSED/SKIPPED (a missing test counts as a failure).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SWEBENCH_PASS = frozenset({"PASSED", "XFAIL"})
SWEBENCH_FAIL = frozenset({"FAILED", "ERROR"})
ABS_OK = frozenset({"OK", "PASSED", "SKIPPED"})


@dataclass(frozen=True)
class Grade:
    resolved: bool
    f2p_passed: tuple[str, ...]
    f2p_failed: tuple[str, ...]
    p2p_passed: tuple[str, ...]
    p2p_failed: tuple[str, ...]


def _split(tests: Iterable[str], status: Mapping[str, str]) -> tuple[list[str], list[str]]:
    ok, bad = [], []
    for t in tests:
        s = status.get(t)
        if s in SWEBENCH_PASS:
            ok.append(t)
        elif s is None or s in SWEBENCH_FAIL:
            bad.append(t)
    return ok, bad


def swebench_grade(
    status: Mapping[str, str],
    fail_to_pass: Iterable[str],
    pass_to_pass: Iterable[str],
    *,
    exclude: Iterable[str] = (),
) -> Grade:
    """SWE-bench's FULL resolution; ``exclude`` drops tests found flaky on the gold patch."""
    skip = set(exclude)
    f_ok, f_bad = _split([t for t in fail_to_pass if t not in skip], status)
    p_ok, p_bad = _split([t for t in pass_to_pass if t not in skip], status)
    return Grade(not f_bad and not p_bad, tuple(f_ok), tuple(f_bad), tuple(p_ok), tuple(p_bad))


def abs_failures(
    status: Mapping[str, str], tests: Iterable[str], *, exclude: Iterable[str] = ()
) -> list[str]:
    """Tests of the strengthened suite on which the patch fails under SWE-ABS's rule."""
    skip = set(exclude)
    return [t for t in tests if t not in skip and status.get(t) not in ABS_OK]


def flaky_tests(runs: Iterable[Mapping[str, str]]) -> list[str]:
    """Tests whose status differs between runs on the same code (a missing status differs)."""
    runs = list(runs)
    names: set[str] = set().union(*(r.keys() for r in runs)) if runs else set()
    return sorted(t for t in names if len({r.get(t) for r in runs}) > 1)
