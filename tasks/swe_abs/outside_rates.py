"""The outside candidate sets' rates in one swe_abs log, set by set: wrong and correct patches
rejected, the same without the judgement calls, without the near inputs' tests and without the
foreign probe's tests, per project and per side of the dev/test split, and the wrong patches that
survived: the figures ``results.json`` records for each round of issue 27.

    .venv/bin/python -m tasks.swe_abs.outside_rates LOG.eval      # JSON on stdout

Rates are ``[k, n]`` pairs. A wrong patch counts only where the instance's own tests accept it
(``resolved_original``): the others are counted apart (``wrong_failing_original_tests``). A
correct patch counts as rejected where either suite rejects it.

The judgement calls are the wrong patches the helper who wrote a set named under the heading
``## Judgement calls`` of its ``OUTSIDE*.md``: each bullet opening with one or more candidate
ids before its colon, unless the bullet says the candidate is *not* a judgement call."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.swe_abs.outside import OUTSIDE, load_outside

_DATA = OUTSIDE.parent
_SECTION = re.compile(r"^## Judgement calls[^\n]*\n(.*?)(?=^## |\Z)", re.S | re.M)
_BULLET = re.compile(r"^- (`.*?)(?=^- |^\S|\Z)", re.S | re.M)
_HEAD = re.compile(r"(?:`[^`]+`|[^:`])*")  # a bullet up to its first colon outside backticks
_NUMBERED_ID = re.compile(r"o(\d+)[A-Z]+-")


@dataclass(frozen=True)
class GradedInstance:
    """One instance of a swe_abs log: its repository (the split's unit), its project name and
    the task's outcome record (``metadata["swe_abs"]["outcome"]``)."""

    repo: str
    project: str
    outcome: dict[str, Any]


def judgement_calls(markdown: Iterable[str], wrong_ids: set[str]) -> frozenset[str]:
    """The ids in ``wrong_ids`` that the texts name as judgement calls (module docstring)."""
    out: set[str] = set()
    for text in markdown:
        section = _SECTION.search(text)
        if section is None:
            continue
        for bullet in _BULLET.findall(section.group(1)):
            if "not a judgement call" in bullet.lower():
                continue
            head = _HEAD.match(bullet)
            ids = re.findall(r"`([^`]+)`", head.group(0) if head else "")
            out |= {i for i in ids if i in wrong_ids}
    return frozenset(out)


def shipped_judgement_calls(data: Path = _DATA) -> frozenset[str]:
    """The judgement calls of every outside set the project ships (its ``OUTSIDE*.md`` files,
    against the wrong patches of its ``outside_candidates*.jsonl`` files)."""
    wrong = {
        c.system.removeprefix("outside:")
        for path in sorted(data.glob("outside_candidates*.jsonl"))
        for cands in load_outside(path).values()
        for c in cands
        if c.kind == "wrong"
    }
    texts = [p.read_text(encoding="utf-8") for p in sorted(data.glob("OUTSIDE*.md"))]
    return judgement_calls(texts, wrong)


def set_key(system: str) -> str:
    """``own``, ``outside`` (the first set's ids carry no number) or ``outside_<N>``."""
    if not system.startswith("outside:"):
        return "own"
    m = _NUMBERED_ID.match(system.removeprefix("outside:"))
    return f"outside_{m.group(1)}" if m else "outside"


def _add(pair: list[int], hit: bool) -> None:
    pair[0] += int(hit)
    pair[1] += 1


def outside_rates(
    instances: Iterable[GradedInstance],
    judgement: frozenset[str],
    side_of: Callable[[str], str],
) -> dict[str, Any]:
    """Per candidate set (:func:`set_key`), its rates; ``side_of`` maps a repository to
    ``dev`` or ``test``. Also the new tests' counts and how many instances were strengthened."""
    sets: dict[str, dict[str, Any]] = {}
    counts = {"new_tests": 0, "near_tests": 0, "foreign_tests": 0}
    strengthened = [0, 0]
    for inst in instances:
        out = inst.outcome
        origin = {t["nodeid"]: t["origin"] for t in out.get("new_tests", []) if t.get("accepted")}
        counts["new_tests"] += len(origin)
        counts["near_tests"] += sum(o == "near" for o in origin.values())
        counts["foreign_tests"] += sum(o == "foreign" for o in origin.values())
        _add(strengthened, bool(out.get("strengthened")))
        for c in out.get("candidates", []):
            cid = c["system"].removeprefix("outside:")
            r = sets.setdefault(set_key(c["system"]), {})
            if c["kind"] == "correct":
                rejected = not c["resolved_original"] or not c["resolved_abs"]
                _add(r.setdefault("correct_rejected", [0, 0]), rejected)
                continue
            if not c["resolved_original"]:  # the instance's own tests reject it: not graded here
                r.setdefault("wrong_failing_original_tests", 0)
                r["wrong_failing_original_tests"] += 1
                continue
            rejected = not c["resolved_abs"]
            failed = c.get("new_failed", [])
            _add(r.setdefault("wrong_rejected", [0, 0]), rejected)
            for name, origin_left_out in (("near", "near"), ("foreign", "foreign")):
                without = rejected and any(origin.get(t) != origin_left_out for t in failed)
                _add(r.setdefault(f"wrong_rejected_without_{name}_tests", [0, 0]), without)
            if cid not in judgement:
                _add(r.setdefault("wrong_rejected_without_judgement_calls", [0, 0]), rejected)
            per_project = r.setdefault("per_project_wrong_rejected", {})
            _add(per_project.setdefault(inst.project, [0, 0]), rejected)
            side = side_of(inst.repo)
            _add(r.setdefault(f"{side}_projects_wrong_rejected", [0, 0]), rejected)
            if not rejected:
                r.setdefault("survivors", []).append(cid)
    for r in sets.values():
        if "wrong_rejected" in r:
            r["survivors_judgement_calls"] = sum(s in judgement for s in r.get("survivors", []))
    return {"strengthened": strengthened, **counts, "sets": sets}


def read_log(path: str) -> list[GradedInstance]:
    """The graded instances of a swe_abs ``.eval`` log (samples that errored are left out and
    named on stderr)."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(path)
    out = []
    for s in log.samples or []:
        meta = s.metadata or {}
        outcome = (meta.get("swe_abs") or {}).get("outcome")
        if s.error is not None or not isinstance(outcome, dict):
            print(
                f"{path}: sample {s.id} has no outcome (error: {s.error}); left out",
                file=sys.stderr,
            )
            continue
        out.append(
            GradedInstance(str(meta.get("repo", "?")), str(meta.get("project", "?")), outcome)
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from harness.splits import load_source_split

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", help="a swe_abs .eval log")
    args = parser.parse_args(argv)
    split = load_source_split("swe_abs")
    rates = outside_rates(read_log(args.log), shipped_judgement_calls(), split.side)
    print(json.dumps({"log": args.log, **rates}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
