"""omniverifier's dev/test split: a rule over scene seed ranges (tasks/omniverifier/splits.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from tasks.omniverifier.split import SeedRanges, load_seed_ranges, load_split
from tasks.omniverifier.task import RUN_ALL_ARGS, omniverifier


def test_the_frozen_rule_is_dev_0_to_999_and_test_from_1000() -> None:
    ranges = load_seed_ranges()
    assert ranges == SeedRanges(0, 999, 1000)
    assert [ranges.side(s) for s in (0, 999, 1000, 10**9)] == ["dev", "dev", "test", "test"]
    assert load_split().unit.startswith("scene seed")
    assert not load_split().dev and not load_split().test  # a rule, no named source


def test_seed_defaults_to_the_split_and_must_lie_on_it() -> None:
    ranges = SeedRanges(0, 999, 1000)
    assert ranges.scene_seed(None, "test") == 1000
    assert ranges.scene_seed(None, "dev") == 0 and ranges.scene_seed(None, "all") == 0
    assert ranges.scene_seed(5, "dev") == 5 and ranges.scene_seed(5, "all") == 5
    assert ranges.scene_seed(1234, "test") == 1234
    with pytest.raises(ValueError, match="seed=0 is not on split=test"):
        ranges.scene_seed(0, "test")
    with pytest.raises(ValueError, match="seed=1000 is not on split=dev"):
        ranges.scene_seed(1000, "dev")
    with pytest.raises(ValueError, match="overlap"):
        SeedRanges(0, 1000, 1000)


def test_malformed_seed_ranges_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "splits.yaml"
    bad.write_text("unit: u\ndev_fraction: 0.5\ndev: []\ntest: []\n")
    with pytest.raises(ValueError, match="needs seed_ranges"):
        load_seed_ranges(bad)
    bad.write_text("seed_ranges: {dev: [0, 9], test: [10, 20]}\n")
    with pytest.raises(ValueError, match="has no end"):
        load_seed_ranges(bad)


def test_the_task_draws_dev_and_test_scenes_from_disjoint_seeds() -> None:
    test = omniverifier(n=4)
    dev = omniverifier(n=4, split="dev")
    assert {s.metadata["seed"] for s in test.dataset} == {1000}
    assert {s.metadata["seed"] for s in dev.dataset} == {0}
    assert [s.input for s in test.dataset] != [s.input for s in dev.dataset]
    assert test.metadata["data_split"] == "test" and test.metadata["scene_seed"] == 1000
    assert dev.metadata["data_split"] == "dev" and "seed=0" in dev.metadata["dataset_source"]
    everything = omniverifier(n=2, split="all", seed=1500)
    assert everything.metadata["data_split"] == "all" and everything.metadata["scene_seed"] == 1500
    with pytest.raises(ValueError, match="seed=3 is not on split=test"):
        omniverifier(n=2, seed=3)
    with pytest.raises(ValueError, match="split='train'"):
        omniverifier(n=2, split="train")


def test_data_never_looked_at_has_no_dev_split() -> None:
    with pytest.raises(ValueError, match="dataset=quokka has no dev split"):
        omniverifier(dataset="quokka", observation="image", split="dev")


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_the_test_range_generates_every_level(level: str) -> None:
    # the smoke run (RUN_ALL_ARGS) and a headline draw from seed 1000: every error type there
    task = omniverifier(**{**RUN_ALL_ARGS, "level": level, "verifier": "classical"})
    assert len(task.dataset) == RUN_ALL_ARGS["n"]
    assert {s.metadata["seed"] for s in task.dataset} == {1000}
    assert len({s.metadata["pair_error_type"] for s in task.dataset}) == 7


def test_the_log_records_the_split() -> None:
    log = inspect_eval(
        omniverifier(n=2, verifier="classical", split="dev", seed=7),
        model=get_model("scripted/omni-split", reply="unused"),
        display="none",
        log_dir=None,
    )[0]
    assert log.status == "success", log.error
    meta = log.eval.metadata
    assert (meta["data_split"], meta["scene_seed"]) == ("dev", 7)
    assert meta["data_split_unit"].startswith("scene seed")
    assert {s.metadata["seed"] for s in log.samples} == {7}
