"""SWE-bench records → inspect Samples.

Two sources, one record format (SWE-bench's fields, see ``methods.swe_abs.instance``):

- the bundled offline instances (``data/instances.jsonl``): real functions of pinned sdists
  whose own pytest suites run offline; their base trees are rebuilt from the cached sdist and the
  record's ``base_setup_patch`` (``tasks.swe_abs.sdist_tree``);
- any SWE-bench-format JSON/JSONL file (``dataset_file=``), e.g. the Verified split exported from
  the hub; those need their repository in the sandbox image (docker), which this task does not
  fetch.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample

from methods.swe_abs import Instance, InstanceFormatError, instance_from_record

HERE = Path(__file__).resolve().parent
BUNDLED = HERE / "data" / "instances.jsonl"


def read_records(path: Path) -> list[dict[str, Any]]:
    """JSONL (one record per line) or a JSON list; errors name the file and line."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json" or text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InstanceFormatError(f"{path}: not valid JSON ({exc})") from None
        if not isinstance(data, list):
            raise InstanceFormatError(f"{path}: expected a JSON list of instance records")
        return data
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InstanceFormatError(f"{path}:{n}: not valid JSON ({exc})") from None
    return out


def load_instances(path: Path) -> list[Instance]:
    return [
        instance_from_record(r, where=f"{path.name}:{i + 1}")
        for i, r in enumerate(read_records(path))
    ]


def project_of(inst: Instance) -> str:
    return inst.repo.split("/")[-1].lower()


def record_to_sample(record: Mapping[str, Any], *, where: str = "record") -> Sample:
    """One SWE-bench record → Sample (id = instance_id; the problem statement is the input)."""
    inst = instance_from_record(record, where=where)
    return instance_to_sample(inst)


def instance_to_sample(inst: Instance) -> Sample:
    kinds = [c.kind for c in inst.candidates]
    return Sample(
        id=inst.instance_id,
        input=inst.problem_statement,
        target="",
        metadata={
            "instance_id": inst.instance_id,
            "repo": inst.repo,
            "project": project_of(inst),
            "base_commit": inst.base_commit,
            "fail_to_pass": len(inst.fail_to_pass),
            "pass_to_pass": len(inst.pass_to_pass),
            "candidates_correct": kinds.count("correct"),
            "candidates_wrong": kinds.count("wrong"),
            "weakened": bool(inst.removed_tests),
            "function": str(inst.extra.get("function", "")),
        },
    )
