"""agent_stress's split: every workload kind is on test (tasks/agent_stress/splits.yaml)."""

from __future__ import annotations

import pytest

from harness.splits import SourceSplit
from tasks.agent_stress import agent_stress
from tasks.agent_stress.config import load_split, split_kinds
from tasks.agent_stress.dataset import KINDS


def test_frozen_file_puts_every_kind_on_test() -> None:
    split = load_split()
    assert split.test == set(KINDS) and not split.dev
    assert split.unseen(KINDS) == []


def test_split_kinds_keeps_the_split_and_explains_an_empty_one() -> None:
    split = SourceSplit("agent_stress", "kind", 0.34, dev=frozenset({"a"}), test=frozenset({"b"}))
    assert split_kinds(("a", "b"), "dev", split) == ("a",)
    assert split_kinds(("a", "b"), "all", split) == ("a", "b")
    with pytest.raises(ValueError, match="no workload kind of a is on split=test"):
        split_kinds(("a",), "test", split)


def test_the_task_on_each_split() -> None:
    test = agent_stress(samples=len(KINDS))
    every = agent_stress(samples=len(KINDS), split="all")
    kinds = {s.metadata["kind"] for s in test.dataset}
    assert kinds == set(KINDS) == {s.metadata["kind"] for s in every.dataset}
    assert (test.metadata["data_split"], every.metadata["data_split"]) == ("test", "all")
    with pytest.raises(ValueError, match="nothing here is chosen on data"):
        agent_stress(split="dev")
    with pytest.raises(ValueError, match="agent_stress: split='train'"):
        agent_stress(split="train")
