"""The outside candidate set: wrong and correct patches for bundled instances written by a helper
that saw only each instance (issue text, code, tests), never this project's generator
(``data/outside_candidates.jsonl``, described in ``data/OUTSIDE.md``). It is frozen data, and
its rejection rates are reported apart from the project's own candidates (``candidates=outside``
grades it alone on the instances it covers, ``candidates=all`` beside the own ones on every
instance).

The generator was later tuned on that first set (issue 27's rounds), so a second set, written the
same way by two more outside helpers after that tuning and frozen before it was ever graded
(``data/outside_candidates_2_*.jsonl``, described in ``data/OUTSIDE_2_*.md``), is the held-out
one: ``candidates=outside2`` grades it alone; ``candidates=all`` includes it too.

That second set was then graded once and became dev data in turn; a third set, written the same
way by two further outside helpers on the instances the second set did not use, while the
generator gained its near inputs, and frozen before it was graded (``data/outside_candidates_3_*``,
``data/OUTSIDE_3_*.md``), is the held-out one after it: ``candidates=outside3``. A fourth, written
the same way while the near inputs gained the arguments' documented domains
(``data/outside_candidates_4_*``, ``data/OUTSIDE_4_*.md``), was graded once by
``candidates=outside4``; ``all`` and ``all_correct`` include it since. A fifth, on the instances
the fourth did not use, written while the choice of near tests learnt to keep every documented
edit (``data/outside_candidates_5_*``, ``data/OUTSIDE_5_*.md``), was graded once by
``candidates=outside5``; ``all`` and ``all_correct`` include it since. A sixth, written by four
further helpers on all 31 instances while the near inputs gained labelled edits
(``data/outside_candidates_6_*``, ``data/OUTSIDE_6_*.md``), was graded once by
``candidates=outside6``; ``all`` and ``all_correct`` include it since. A seventh, written by
four further helpers on all 31 instances while the oracle learnt to observe what a result shares
with the arguments and how far a call reads its iterators (``data/outside_candidates_7_*``,
``data/OUTSIDE_7_*.md``), was graded once by ``candidates=outside7``; ``all`` and
``all_correct`` include it since. An eighth, written by four further helpers on all 31
instances while the foreign probe learnt to pin failures of any type and values read alike
(``data/outside_candidates_8_*``, ``data/OUTSIDE_8_*.md``), was graded once by
``candidates=outside8``; ``all`` and ``all_correct`` include it since. A ninth, written by four
further helpers on all 31 instances while the foreign probe learnt mappings, ``UserString``
texts and flags as integers (``data/outside_candidates_9_*``, ``data/OUTSIDE_9_*.md``), was
graded once by ``candidates=outside9``; ``all`` and ``all_correct`` include it since. A tenth,
written by four further helpers on all 31 instances while the foreign probe learnt sequences read
by index alone and the near texts other normal forms, dashes and signs
(``data/outside_candidates_10_*``, ``data/OUTSIDE_10_*.md``), was graded once by
``candidates=outside10``; ``all`` and ``all_correct`` include it since. An eleventh, written by
four further helpers on all 31 instances while the foreign probe learnt sources failing with
``RuntimeError`` and integers behind ``__index__`` (``data/outside_candidates_11_*``,
``data/OUTSIDE_11_*.md``), was graded once by ``candidates=outside11``; ``all`` and
``all_correct`` include it since. A twelfth, written by six further helpers on all 31 instances
while the foreign probe learnt values without behaviour and path-like texts
(``data/outside_candidates_12_*``, ``data/OUTSIDE_12_*.md``), was graded once by
``candidates=outside12``; ``all`` and ``all_correct`` include it since. A thirteenth, written by
six further helpers on all 31 instances after the twelfth was graded, with the generator
unchanged (``data/outside_candidates_13_*``, ``data/OUTSIDE_13_*.md``), was graded once by
``candidates=outside13``, a second fresh look at the same generator; ``all`` and
``all_correct`` include it since. A fourteenth, written by six further helpers on all 31
instances while the generator learnt positional arguments passed by name, errors raised at the
call where gold raises while its result is read, unhashable values and values without a truth
value (``data/outside_candidates_14_*``, ``data/OUTSIDE_14_*.md``), was graded once by
``candidates=outside14``; ``all`` and ``all_correct`` include it since. A fifteenth, written by
six further helpers on all 31 instances while the generator learnt to leave a conditional's
branch not taken alone, integers that are no ``int`` and failures kept where gold's result
fails when read (``data/outside_candidates_15_*``, ``data/OUTSIDE_15_*.md``), was graded once by
``candidates=outside15``; ``all`` and ``all_correct`` include it since. A sixteenth, written by
six further helpers on all 31 instances while the generator learnt to pin a fix's change on values
the tree before it read alike, results handed out afresh to every caller and interpreter-wide
settings (``data/outside_candidates_16_*``, ``data/OUTSIDE_16_*.md``), was graded once by
``candidates=outside16``; ``all`` and ``all_correct`` include it since. A seventeenth was
written *blind* by six further helpers on all 31 instances (three wrong and one correct patch
each, no earlier outside set read: the mistakes of a writer who sees only the instance, not only
those sixteen sets had left unused; ``data/outside_candidates_17_*``, ``data/OUTSIDE_17_*.md``),
and was graded once by ``candidates=outside17``; ``all`` and ``all_correct`` include it since.
An eighteenth, written blind the same way by six further helpers (the instances regrouped;
``data/outside_candidates_18_*``, ``data/OUTSIDE_18_*.md``), was graded once by
``candidates=outside18`` with the seventeenth's generator unchanged, a second draw of the same
measurement; ``all`` and ``all_correct`` include it since.

One JSON object per line: ``instance_id``, ``candidate_id``, ``kind`` (wrong/correct),
``patch`` (a unified diff against the instance's base), ``note``; wrong ones also carry a
``witness`` (an input where they differ from gold).
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Literal, get_args

from harness import hub
from methods.swe_abs import Candidate, Instance

_DATA = Path(__file__).resolve().parent / "data"
OUTSIDE = _DATA / "outside_candidates.jsonl"
CandidateSets = Literal[
    "own",
    "outside",
    "outside2",
    "outside3",
    "outside4",
    "outside5",
    "outside6",
    "outside7",
    "outside8",
    "outside9",
    "outside10",
    "outside11",
    "outside12",
    "outside13",
    "outside14",
    "outside15",
    "outside16",
    "outside17",
    "outside18",
    "all",
    "all_correct",
]
NUMBERED_SETS = tuple(
    int(name.removeprefix("outside"))
    for name in get_args(CandidateSets)
    if name.removeprefix("outside").isdigit()
)
"""The outside sets after the first, by number (``candidates=outside<N>``)."""
IN_ALL = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18)
"""The numbered sets ``all`` and ``all_correct`` include: those graded once while held out. A
set joins only after that grading, so no run sees it before its frozen generator does."""


def set_files(number: int) -> list[Path]:
    """The files of outside set ``number`` >= 2 (one per helper that wrote it), in name order."""
    return sorted(_DATA.glob(f"outside_candidates_{number}_*.jsonl"))


class OutsideFormatError(ValueError):
    """A malformed outside-candidate record; the message names the file, line and field."""


def load_outside(path: Path = OUTSIDE) -> dict[str, list[Candidate]]:
    """instance id → its outside candidates (``origin="outside"``, graded in a fresh tree)."""
    if not path.is_file():
        raise FileNotFoundError(f"swe_abs: the outside candidate set {path} is missing")
    out: dict[str, list[Candidate]] = {}
    for where, rec in hub.read_json_records(path):
        for key in ("instance_id", "candidate_id", "kind", "patch"):
            if not isinstance(rec.get(key), str) or not rec[key]:
                raise OutsideFormatError(f"{where}: field {key!r} must be a non-empty string")
        if rec["kind"] not in ("wrong", "correct"):
            raise OutsideFormatError(f"{where}: kind {rec['kind']!r} is not wrong/correct")
        out.setdefault(rec["instance_id"], []).append(
            Candidate(
                system=f"outside:{rec['candidate_id']}",
                patch=rec["patch"],
                kind=rec["kind"],
                note=str(rec.get("note") or ""),
                trusted=False,
                origin="outside",
            )
        )
    return out


def with_outside_candidates(
    loaded: list[Instance],
    source: str,
    source_hash: str,
    sets: CandidateSets,
    path: Path = OUTSIDE,
    numbered: dict[int, list[Path]] | None = None,
) -> tuple[list[Instance], str, str]:
    """The instances with the candidate sets asked for: ``own`` unchanged; ``outside`` (the
    first outside set, ``path``) or ``outside<N>`` (set N, its files ``numbered[N]``, by
    default :func:`set_files`) only the instances that set covers, with only its candidates;
    ``all`` every instance with its own candidates and, where it has them, those of the first
    set and of each set in :data:`IN_ALL` (every candidate graded so far); ``all_correct`` the
    same with only the outside sets' correct patches (whether any correct patch is rejected,
    without grading the wrong ones in fresh trees). The source names the files and the hash
    covers them."""
    if sets == "own":
        return loaded, source, source_hash
    numbered = numbered or {}

    def files_of(number: int) -> list[Path]:
        return numbered[number] if number in numbered else set_files(number)

    if sets in ("all", "all_correct"):
        files = [path, *(f for n in IN_ALL for f in files_of(n))]
    elif sets == "outside":
        files = [path]
    else:
        files = files_of(int(sets.removeprefix("outside")))
    if not files:
        raise FileNotFoundError(f"swe_abs: the candidate set {sets!r} has no file")
    known = {i.instance_id for i in loaded}
    outside: dict[str, list[Candidate]] = {}
    for file in files:
        for iid, cands in load_outside(file).items():
            if iid not in known:
                raise OutsideFormatError(f"{file}: instance id {iid!r} is not in {source}")
            if sets == "all_correct":
                cands = [c for c in cands if c.kind == "correct"]
            outside.setdefault(iid, []).extend(cands)
    every = sets in ("all", "all_correct")
    chosen = []
    for inst in loaded:
        if not every and inst.instance_id not in outside:
            continue
        own = inst.candidates if every else ()
        extra = tuple(outside.get(inst.instance_id, ()))
        chosen.append(dataclasses.replace(inst, candidates=(*own, *extra)))
    text = "".join(f.read_text(encoding="utf-8") for f in files)
    digest = hashlib.sha256((source_hash + text).encode()).hexdigest()
    names = " + ".join(f"tasks/swe_abs/data/{f.name}" for f in files)
    return chosen, f"{source} + {names}", digest[:16]
