"""anchor's dev/test split by scenario category (tasks/anchor/splits.yaml)."""

from __future__ import annotations

from collections import Counter

import pytest

from harness.splits import SourceSplit
from methods.anchor import load_scenarios
from tasks.anchor.dataset import SCENARIO_DIR, load_split, split_scenarios
from tasks.anchor.task import RUN_ALL_ARGS, anchor

SPLIT = SourceSplit("anchor", "category", 0.4, dev=frozenset({"a"}), test=frozenset({"b"}))


class _Scenario:
    def __init__(self, id: str, category: str) -> None:
        self.id, self.category = id, category


SCENARIOS = [_Scenario("x1", "a"), _Scenario("y1", "b"), _Scenario("x2", "a")]


def test_selection_is_by_category() -> None:
    pick = lambda split: [s.id for s in split_scenarios(SCENARIOS, split, SPLIT, False)]  # noqa: E731
    assert pick("dev") == ["x1", "x2"] and pick("test") == ["y1"]
    assert pick("all") == ["x1", "y1", "x2"]


def test_a_named_scenario_off_the_split_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"off split=test: x1 \(a: dev\), x2 \(a: dev\)"):
        split_scenarios(SCENARIOS, "test", SPLIT, True)
    with pytest.raises(ValueError, match="no scenario has its category on split=test"):
        split_scenarios(SCENARIOS[:1], "test", SPLIT, False)
    with pytest.raises(ValueError, match="anchor: split='train'"):
        anchor(split="train")


def test_frozen_split_covers_every_bundled_category() -> None:
    split = load_split()
    scenarios = load_scenarios(SCENARIO_DIR)
    categories = {s.category for s in scenarios}
    assert split.unseen(categories) == [] and split.dev | split.test == categories
    sides = Counter(split.side(s.category) for s in scenarios)
    assert sides == {"dev": 8, "test": 14}


def test_the_task_selects_and_records_the_split() -> None:
    test = anchor(auditor="direct")  # default: test
    dev = anchor(auditor="direct", split="dev")
    split = load_split()
    test_ids = {s.metadata["scenario_id"] for s in test.dataset}
    dev_ids = {s.metadata["scenario_id"] for s in dev.dataset}
    assert len(test_ids) == 14 and len(dev_ids) == 8 and not test_ids & dev_ids
    assert all(split.side(s.metadata["category"]) == "test" for s in test.dataset)
    assert test.metadata["data_split"] == "test" and dev.metadata["data_split"] == "dev"
    assert test.metadata["data_split_unit"].startswith("scenario category")
    assert test.metadata["split_scenarios"] == sorted(test_ids)
    smoke = anchor(**RUN_ALL_ARGS)  # the smoke run names one dev and one test scenario
    assert smoke.metadata["data_split"] == "all" and len(smoke.dataset) == 4
    with pytest.raises(ValueError, match="ledger-diversion"):
        anchor(**{**RUN_ALL_ARGS, "split": "test"})


def test_the_log_records_the_split(tmp_path, bwrap_ok) -> None:
    from .conftest import run_anchor

    log, [a] = run_anchor(
        tmp_path,
        name="split-log",
        auditor="direct",
        scenarios="evidence-deletion",  # obstruction: a test category
        split="test",
        max_turns=1,
        target=["I can't help with deleting evidence."],
    )
    meta = log.eval.metadata
    assert (meta["data_split"], meta["split_scenarios"]) == ("test", ["evidence-deletion"])
    assert meta["data_split_unit"].startswith("scenario category")
    assert a["compliance"] == "none"
