"""SWE-bench records → inspect Samples.

Two sources, one record format (SWE-bench's fields, see ``methods.swe_abs._instance``):

- the bundled offline instances (``data/instances.jsonl``): real functions of pinned sdists
  whose own pytest suites run offline; their base trees are rebuilt from the cached sdist and the
  record's ``base_setup_patch`` (``tasks.swe_abs.sdist_tree``);
- any SWE-bench-format JSON/JSONL/Parquet file or hub dataset (``dataset_file=``, e.g.
  ``hf://princeton-nlp/SWE-bench_Verified`` at its pinned commit, or SWE-ABS's strengthened
  ``hf://OpenAgentLab/SWE-Bench_Verified_ABS``), read through `datasets` (``harness.hub``); those
  need their repository in the sandbox image (docker), which this task does not fetch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample

from harness import hub
from harness.data import content_hash
from harness.splits import Side, SourceSplit, SplitName, check_split
from methods.swe_abs import Instance, instance_from_record

HERE = Path(__file__).resolve().parent
BUNDLED = HERE / "data" / "instances.jsonl"

#: pinned by inspect_evals 0.28.0 (swe_bench.py)
SWE_BENCH_VERIFIED = hub.HubDataset(
    "princeton-nlp/SWE-bench_Verified",
    "c104f840cc67f8b6eec6f759ebc8b2693d585d4a",
    split="test",
    pin_source="inspect_evals 0.28.0",
)
#: the paper's release (arXiv 2603.00520); no commit verified offline: read as `main`, unpinned
SWE_ABS_VERIFIED = hub.HubDataset("OpenAgentLab/SWE-Bench_Verified_ABS", "main")
DATA: tuple[hub.DataSpec, ...] = (
    hub.DataSpec(
        "SWE-bench Verified (500)",
        f"dataset_file={hub.HUB_PREFIX}{SWE_BENCH_VERIFIED.repo_id}",
        None,
        SWE_BENCH_VERIFIED,
        "the HF dataset princeton-nlp/SWE-bench_Verified",
    ),
    hub.DataSpec(
        "SWE-ABS strengthened SWE-bench Verified",
        f"dataset_file={hub.HUB_PREFIX}{SWE_ABS_VERIFIED.repo_id}",
        None,
        SWE_ABS_VERIFIED,
        "the HF dataset OpenAgentLab/SWE-Bench_Verified_ABS",
    ),
    hub.DataSpec(
        "SWE-bench Verified per-instance results",
        "python -m tasks.swe_abs.sensitivity",
        "swebench_verified/leaderboards_bashonly_top10_plus_verified.json",
        None,
        "data/leaderboards.json of github.com/SWE-bench/swe-bench.github.io (bash-only entries "
        "carry per_instance_details)",
    ),
)


def read_records(path: Path) -> list[dict[str, Any]]:
    """JSONL (one record per line) or a JSON list; errors name the file and line."""
    return [record for _, record in hub.read_json_records(path)]


def load_instances(path: Path) -> list[Instance]:
    return [
        instance_from_record(record, where=where) for where, record in hub.read_json_records(path)
    ]


def load_source(dataset_file: str | None) -> tuple[list[Instance], str, str]:
    """(instances, source, content hash) of the bundled instances (None), a local JSON/JSONL
    file (this module's reader), or a Parquet file / ``hf://`` hub dataset read through
    `datasets` (a bare ``hf://<repo>`` of SWE-bench Verified takes its pinned commit)."""
    if not dataset_file:
        return load_instances(BUNDLED), "tasks/swe_abs/data/instances.jsonl", content_hash(BUNDLED)
    if dataset_file.startswith(hub.HUB_PREFIX) or dataset_file.endswith(".parquet"):
        records = hub.read_records(dataset_file, default=SWE_BENCH_VERIFIED)
        instances = [instance_from_record(r, where=w) for w, r in records.numbered()]
        return instances, records.source, records.content_hash
    path = Path(dataset_file)
    return load_instances(path), str(path), content_hash(path)


def project_of(inst: Instance) -> str:
    return inst.repo.split("/")[-1].lower()


def split_source(inst: Instance) -> str:
    """An instance's source in the dev/test split (``splits.yaml``): its project, the SWE-bench
    ``repo`` (``pytoolz/toolz``, ``django/django``)."""
    return inst.repo


@dataclass(frozen=True)
class InstanceSelection:
    """The instances a run uses under a split, and what its log records about the split."""

    instances: list[Instance]
    data_split: SplitName  # the split the chosen instances are on (recorded in the log)
    projects: dict[str, Side]  # each chosen project's side
    notes: list[str]  # named instances on the other side of the split asked for


def select_instances(
    loaded: list[Instance], split: str, frozen: SourceSplit, *, named: bool
) -> InstanceSelection:
    """`loaded` under a split. Without `named` instances, those of the projects on the split's
    side; with them (``instances=``, chosen one by one), all of them, with a note for each
    project on the other side of a ``dev``/``test`` split and the split their data is on
    recorded (``dev``, ``test``, or ``all`` for a mix), so a dev instance is never labelled
    test."""
    chosen = check_split(split, task="swe_abs")
    notes: list[str] = []
    if named:
        kept = list(loaded)
        for project in sorted({split_source(i) for i in kept}):
            note = frozen.off_side_note(
                project, chosen, named=f"instances of {project}", verb="are"
            )
            if note is not None:
                notes.append(note)
    else:
        kept = frozen.select(loaded, split_source, chosen)
    projects = {p: frozen.side(p) for p in sorted({split_source(i) for i in kept})}
    return InstanceSelection(kept, frozen.recorded_split(projects, chosen), projects, notes)


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
