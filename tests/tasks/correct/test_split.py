"""correct's dev/test split by Who&When question (tasks/correct/splits.yaml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.model import get_model

from harness.splits import SourceSplit
from methods.correct import Step, Trajectory
from tasks._config import task_defaults
from tasks.correct.config import CorrectConfig, load_split, question_of
from tasks.correct.task import correct


def _trajectory(subset: str, n: int, question: str | None) -> Trajectory:
    steps = (Step(0, "A", "A", "x"), Step(1, "B", "B", "y"))
    meta = {"question_ID": question} if question else {}
    return Trajectory(f"{subset}/{n}", "q", steps, mistake_agent="A", mistake_step=0, metadata=meta)


def _config(**overrides) -> CorrectConfig:
    return CorrectConfig.from_params({**task_defaults(correct), **overrides})


SPLIT = SourceSplit(
    "correct", "question", 0.34, dev=frozenset({"d1", "d2"}), test=frozenset({"t1"})
)
POOLS = {
    "algorithm_generated": [
        _trajectory("algorithm_generated", 1, "d1"),
        _trajectory("algorithm_generated", 2, "t1"),
        _trajectory("algorithm_generated", 3, "d2"),
    ],
    "hand_crafted": [_trajectory("hand_crafted", 1, "t1"), _trajectory("hand_crafted", 2, "d1")],
}


def test_selection_is_by_question_across_both_subsets() -> None:
    ids = {
        split: [t.id for t in _config(split=split).evaluated(POOLS, SPLIT)]
        for split in ("dev", "test", "all")
    }
    assert ids["dev"] == ["algorithm_generated/1", "algorithm_generated/3", "hand_crafted/2"]
    # question t1 has a trajectory in each subset: both are on test, none on dev
    assert ids["test"] == ["algorithm_generated/2", "hand_crafted/1"]
    assert len(ids["all"]) == 5


def test_limit_cuts_each_subset_after_the_split() -> None:
    cfg = _config(split="dev", limit_trajectories=1)
    assert [t.id for t in cfg.evaluated(POOLS, SPLIT)] == [
        "algorithm_generated/1",
        "hand_crafted/2",
    ]


def test_an_empty_split_and_an_unknown_split_are_errors() -> None:
    only_dev = {"algorithm_generated": POOLS["algorithm_generated"][:1]}
    cfg = _config(split="test", subset="algorithm_generated")
    with pytest.raises(ValueError, match="no trajectory .* on split=test"):
        cfg.evaluated(only_dev, SPLIT)
    with pytest.raises(ValueError, match="correct: split='train'"):
        _config(split="train")


def test_a_trajectory_without_question_id_is_its_own_source() -> None:
    assert question_of(_trajectory("injected", 4, None)) == "injected/4"
    assert question_of(_trajectory("hand_crafted", 1, "abc")) == "abc"


def test_frozen_split_covers_every_shipped_question_data(data_dir: Path) -> None:
    split = load_split()
    questions = {
        json.loads(f.read_text())["question_ID"]
        for f in (data_dir / "who_and_when").glob("*/*.json")
    }
    assert len(questions) == 139  # 126 + 58 files, 45 questions in both subsets
    assert split.unseen(questions) == []
    assert split.dev | split.test == questions  # no stale names either
    assert len(split.dev) >= 40 and len(split.test) >= 80


def test_the_log_records_the_split_data(data_dir: Path, tmp_path: Path) -> None:
    log = eval(
        correct(method="first_step", subset="hand_crafted", split="dev"),
        model=get_model("scripted/correct-split", responder=lambda messages: ""),
        display="none",
        log_dir=str(tmp_path),
    )[0]
    assert log.status == "success", log.error
    meta = log.eval.metadata
    assert meta["data_split"] == "dev" and meta["data_split_unit"].startswith("Who&When question")
    assert any(d.startswith("split=dev") for d in meta["deviations"])
    split = load_split()
    assert log.samples and all(split.side(s.metadata["question_ID"]) == "dev" for s in log.samples)
    assert len(log.samples) == 12
    test = correct(method="first_step", subset="hand_crafted")  # default: test
    assert test.metadata["data_split"] == "test" and len(test.dataset) == 46
    every = correct(method="first_step", subset="both", split="all")
    assert every.metadata["data_split"] == "all" and len(every.dataset) == 184
    assert not any(d.startswith("split=") for d in every.metadata["deviations"])
