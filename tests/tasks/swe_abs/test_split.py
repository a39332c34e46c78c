"""swe_abs's dev/test split by project (tasks/swe_abs/splits.yaml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.splits import load_source_split
from tasks.swe_abs.dataset import (
    BUNDLED,
    instance_to_sample,
    load_instances,
    select_instances,
    split_source,
)
from tasks.swe_abs.task import RUN_ALL_ARGS, SweAbsConfig

FROZEN = load_source_split("swe_abs")
INSTANCES = load_instances(BUNDLED)
CLAMP = "mahmoud__boltons-clamp-bounds"
DEV = {"mahmoud/boltons", "pallets/flask", "jpvanhal/inflection"}


def test_frozen_file_names_every_bundled_project() -> None:
    projects = {split_source(i) for i in INSTANCES}
    assert len(projects) == 7 and FROZEN.unseen(projects) == []
    assert {p for p in projects if FROZEN.side(p) == "dev"} == DEV


@pytest.mark.data
def test_frozen_file_names_every_swe_bench_verified_project_data(data_dir: Path) -> None:
    board = data_dir / "swebench_verified" / "leaderboards_bashonly_top10_plus_verified.json"
    ids: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            ids.update(k for k in node if isinstance(k, str) and "__" in k and k[-1].isdigit())
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(board.read_text()))
    repos = {i.rsplit("-", 1)[0].replace("__", "/") for i in ids}
    assert len(ids) == 500 and len(repos) == 12
    assert FROZEN.unseen(repos) == []
    assert FROZEN.dev | FROZEN.test == repos | {split_source(i) for i in INSTANCES}


def test_the_split_keeps_whole_projects_on_one_side() -> None:
    test = select_instances(INSTANCES, "test", FROZEN, named=False)
    dev = select_instances(INSTANCES, "dev", FROZEN, named=False)
    assert len(test.instances) == 19 and len(dev.instances) == 12
    assert {split_source(i) for i in dev.instances} == DEV == set(dev.projects)
    assert not {split_source(i) for i in test.instances} & DEV
    assert test.data_split == "test" and not test.notes
    every = select_instances(INSTANCES, "all", FROZEN, named=False)
    assert every.instances == INSTANCES and every.data_split == "all"
    # the sample carries its project (the source) for the report and for a reader of the log
    assert instance_to_sample(dev.instances[0]).metadata["repo"] == split_source(dev.instances[0])


def test_named_instances_run_with_a_note_and_the_split_of_their_data() -> None:
    clamp = [i for i in INSTANCES if i.instance_id == CLAMP]
    picked = select_instances(clamp, "test", FROZEN, named=True)
    assert picked.instances == clamp and picked.data_split == "dev"
    assert "mahmoud/boltons are on the dev side" in picked.notes[0]
    assert not select_instances(clamp, "dev", FROZEN, named=True).notes
    toolz = next(i for i in INSTANCES if split_source(i) == "pytoolz/toolz")
    mixed = select_instances([*clamp, toolz], "test", FROZEN, named=True)
    assert mixed.data_split == "all" and len(mixed.notes) == 1


def test_split_is_checked_and_the_smoke_run_names_its_side() -> None:
    assert SweAbsConfig().split == "test"
    with pytest.raises(ValueError, match="swe_abs: split='train'"):
        SweAbsConfig(split="train")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="swe_abs: split='x'"):
        select_instances(INSTANCES, "x", FROZEN, named=False)
    [clamp] = [i for i in INSTANCES if i.instance_id == RUN_ALL_ARGS["instances"]]
    assert RUN_ALL_ARGS["split"] == FROZEN.side(split_source(clamp)) == "dev"


def test_a_project_filter_on_the_other_side_of_the_split_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"projects=boltons\) is on split=test; pass split=dev"):
        SweAbsConfig(projects="boltons").load()
