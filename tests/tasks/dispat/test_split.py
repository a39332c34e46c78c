"""dispat's dev/test split by dataset (tasks/dispat/splits.yaml)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from harness.splits import SourceSplit, load_source_split
from tasks._config import task_defaults
from tasks.dispat.config import DispatConfig
from tasks.dispat.dataset import (
    ADBENCH_SETS,
    BUNDLED,
    SOURCE_FAMILIES,
    dataset_name,
    select_datasets,
    split_source,
)
from tasks.dispat.task import dispat

FROZEN = load_source_split("dispat")
DEV_SETS = ["29_Pima", "37_Stamps", "43_WDBC"]  # + wbc: the frozen dev side


def _side(name: str) -> str:
    return FROZEN.side(split_source(name))


def test_frozen_file_names_every_source_of_the_shipped_datasets_and_nothing_else() -> None:
    sources = {split_source(n) for n in (BUNDLED, *ADBENCH_SETS)}
    assert len(sources) == 14  # 17 sets, three collections of two
    assert FROZEN.unseen(sources) == []
    assert FROZEN.dev | FROZEN.test == sources
    assert set(SOURCE_FAMILIES.values()) <= sources


def test_sets_of_one_collection_share_a_side() -> None:
    for family in set(SOURCE_FAMILIES.values()):
        members = [n for n, f in SOURCE_FAMILIES.items() if f == family]
        assert len(members) == 2 and len({_side(n) for n in members}) == 1, members
    assert _side("wbc") == _side("43_WDBC") == "dev"
    assert _side("4_breastw") == _side("42_WBC") == "test"


def test_adbench_and_all_keep_their_side_of_the_split() -> None:
    test = select_datasets("adbench", "test", FROZEN)
    dev = select_datasets("adbench", "dev", FROZEN)
    assert dev.names == DEV_SETS and len(test.names) == 13
    assert sorted(test.names + dev.names) == sorted(ADBENCH_SETS)
    assert test.data_split == "test" and dev.data_split == "dev" and not test.notes
    assert select_datasets("all", "dev", FROZEN).names == [BUNDLED, *DEV_SETS]
    everything = select_datasets("all", "all", FROZEN)
    assert everything.names == [BUNDLED, *ADBENCH_SETS] and everything.data_split == "all"
    assert set(everything.sides.values()) == {"dev", "test"}


def test_a_named_dataset_on_the_other_side_runs_with_a_note_and_its_own_label() -> None:
    picked = select_datasets("wbc", "test", FROZEN)
    assert picked.names == ["wbc"] and picked.data_split == "dev"
    assert picked.notes and "dataset=wbc is on the dev side" in picked.notes[0]
    same = select_datasets("wbc", "dev", FROZEN)
    assert same.data_split == "dev" and not same.notes
    mixed = select_datasets("wbc,14_glass", "test", FROZEN)
    assert mixed.data_split == "all" and len(mixed.notes) == 1
    # a file is placed by its stem: a copy of an ADBench set is that set
    assert dataset_name("/data/x/42_WBC.npz") == "42_WBC"
    assert dataset_name("hf://owner/my_table@v1") == "my_table"
    assert select_datasets("/d/42_WBC.npz", "test", FROZEN).data_split == "test"


def test_an_unknown_source_follows_the_hash_rule_and_a_bad_split_is_refused() -> None:
    split = SourceSplit("dispat", "dataset", 0.34, dev=frozenset({"a"}), test=frozenset({"b"}))
    assert select_datasets("/x/c.csv", "all", split).sides["/x/c.csv"] == split.side("c")
    with pytest.raises(ValueError, match="dispat: split='train'"):
        select_datasets("adbench", "train", FROZEN)
    with pytest.raises(ValueError, match="dispat: split='x'"):
        DispatConfig.from_params({**task_defaults(dispat), "split": "x"})
    assert task_defaults(dispat)["split"] == "test"


def _npz(path: Path) -> str:
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(size=(30, 3)), rng.normal(4.0, 1.0, size=(4, 3))]
    np.savez(path, X=X, y=np.r_[np.zeros(30), np.ones(4)].astype(int))
    return str(path)


def _run(task):
    log = inspect_eval(
        task, model=get_model("scripted/unused", reply="unused"), display="none", log_dir=None
    )[0]
    assert log.status == "success", log.error
    return log


def test_the_log_records_the_split(tmp_path: Path) -> None:
    glass = _npz(tmp_path / "14_glass.npz")  # named like a test set: placed as that set
    meta = _run(dispat(method="KNN", dataset=glass, seeds=[0])).eval.metadata
    assert meta["data_split"] == "test" and meta["data_split_notes"] == []
    assert meta["data_split_unit"] == FROZEN.unit and meta["data_split_sides"] == {glass: "test"}
    meta = _run(dispat(method="KNN", seeds=[0], max_test_rows=8)).eval.metadata  # wbc
    assert meta["data_split"] == "dev" and meta["data_split_asked"] == "test"
    assert "dataset=wbc is on the dev side" in meta["data_split_notes"][0]
    meta = _run(dispat(method="KNN", dataset=f"wbc,{glass}", seeds=[0], split="all")).eval.metadata
    assert meta["data_split"] == "all" and meta["data_split_notes"] == []


@pytest.mark.data
def test_adbench_split_builds_only_its_sets_data(data_dir: Path) -> None:
    assert {p.stem for p in (data_dir / "adbench_classical").glob("*.npz")} == set(ADBENCH_SETS)
    task = dispat(method="KNN", dataset="adbench", split="dev", seeds=[0], max_test_rows=4)
    assert {s.metadata["dataset"] for s in task.dataset} == set(DEV_SETS)
    assert task.metadata["data_split"] == "dev"
