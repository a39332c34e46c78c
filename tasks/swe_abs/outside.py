"""The outside candidate set: wrong and correct patches for bundled instances written by a helper
that saw only each instance (issue text, code, tests), never this project's generator
(``data/outside_candidates.jsonl``, described in ``data/OUTSIDE.md``). It is frozen data: the
generator is not tuned on it, and its rejection rates are reported apart from the project's own
candidates (``candidates=outside`` grades it alone on the instances it covers, ``candidates=all`` beside
the own ones on every instance).

One JSON object per line: ``instance_id``, ``candidate_id``, ``kind`` (wrong/correct),
``patch`` (a unified diff against the instance's base), ``note``; wrong ones also carry a
``witness`` (an input where they differ from gold).
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Literal

from harness import hub
from methods.swe_abs import Candidate, Instance

OUTSIDE = Path(__file__).resolve().parent / "data" / "outside_candidates.jsonl"
CandidateSets = Literal["own", "outside", "all"]


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
    loaded: list[Instance], source: str, source_hash: str, sets: CandidateSets, path: Path = OUTSIDE
) -> tuple[list[Instance], str, str]:
    """The instances with the candidate sets asked for: ``own`` unchanged; ``outside`` only the
    instances the outside set covers, with only its candidates; ``all`` every instance with its
    own candidates and, where it has them, the outside ones (every candidate the project
    ships). The source names the file and the hash covers it."""
    if sets == "own":
        return loaded, source, source_hash
    outside = load_outside(path)
    unknown = sorted(set(outside) - {i.instance_id for i in loaded})
    if unknown:
        raise OutsideFormatError(f"{path}: instance ids not in {source}: {unknown}")
    chosen = []
    for inst in loaded:
        if sets == "outside" and inst.instance_id not in outside:
            continue
        own = inst.candidates if sets == "all" else ()
        extra = tuple(outside.get(inst.instance_id, ()))
        chosen.append(dataclasses.replace(inst, candidates=(*own, *extra)))
    digest = hashlib.sha256((source_hash + path.read_text(encoding="utf-8")).encode()).hexdigest()
    return chosen, f"{source} + tasks/swe_abs/data/{path.name}", digest[:16]
