"""correct's loaders through `datasets`: Who&When and CORRECT-Error from a filled hub cache
(offline, the code a user runs online) and CORRECT-Error from local Parquet/JSON lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.correct.dataset import DATA, RecordError, load_correct_error, load_who_and_when

# Who&When rows as the hub stores them: both subsets in one Arrow schema, so Hand-Crafted turns
# carry `name: None` and absent keys come back as None.
AG_ROW = {
    "question": "Q?",
    "ground_truth": "42",
    "history": [
        {"content": "plan", "role": "assistant", "name": "Planner_Expert"},
        {"content": "verified", "role": "user", "name": "Verification_Expert"},
    ],
    "mistake_agent": "Verification_Expert",
    "mistake_step": "1",
    "mistake_reason": "wrong check",
    "system_prompt": {"Planner_Expert": "...", "Verification_Expert": "...", "Other": None},
    "level": None,
}
CE_ROW = {
    "trajectory_id": "t1",
    "question": "Q?",
    "history": [{"role": "Orchestrator", "content": "plan"}, {"role": "WebSurfer", "content": "x"}],
    "mistake_agent": "WebSurfer",
    "mistake_step": 1,
    "groundtruth": "",
}


def _fill_who_and_when(hub_cache) -> None:
    """Who&When in the hub's layout: two algorithm-generated rows, one hand-crafted."""
    hub_cache.fill(
        "Kevin355/Who_and_When",
        {
            "README.md": hub_cache.card(
                {
                    "Algorithm-Generated": {"train": "Algorithm-Generated/*.parquet"},
                    "Hand-Crafted": {"train": "Hand-Crafted/*.parquet"},
                }
            ),
            "Algorithm-Generated/0.parquet": hub_cache.parquet([AG_ROW, AG_ROW]),
            "Hand-Crafted/0.parquet": hub_cache.parquet([AG_ROW]),
        },
    )


def test_who_and_when_from_the_hub_cache(hub_cache) -> None:
    _fill_who_and_when(hub_cache)
    ts = load_who_and_when("hf://Kevin355/Who_and_When", "algorithm_generated")
    assert [t.id for t in ts] == ["algorithm_generated/hf0", "algorithm_generated/hf1"]
    assert ts[0].mistake_step == 1 and ts[0].mistake_agent == "Verification_Expert"
    assert ts[0].team == ("Planner_Expert", "Verification_Expert")  # the null key dropped
    assert "level" not in ts[0].metadata
    assert len(load_who_and_when("hf://Kevin355/Who_and_When", "hand_crafted")) == 1


def test_correct_error_default_hub_and_local_files(hub_cache, tmp_path: Path) -> None:
    hub = DATA[2].hub
    assert hub is not None and hub.repo_id == "yifanyu/CORRECT-Error"
    hub_cache.fill(hub.repo_id, {"data/test-0.parquet": hub_cache.parquet([CE_ROW])})
    (t,) = load_correct_error()
    assert t.id == "correct_error/t1" and t.mistake_step == 1
    path = tmp_path / "ce.parquet"
    path.write_bytes(hub_cache.parquet([CE_ROW, {**CE_ROW, "trajectory_id": "t2"}]))
    assert [t.id for t in load_correct_error(path)] == ["correct_error/t1", "correct_error/t2"]
    lines = tmp_path / "ce.jsonl"
    lines.write_text(json.dumps(CE_ROW) + "\n\n" + json.dumps({**CE_ROW, "mistake_step": 9}) + "\n")
    with pytest.raises(RecordError, match=r"ce.jsonl:3: .*mistake_step 9 is outside"):
        load_correct_error(lines)


def test_the_task_reads_who_and_when_from_a_hub_id(hub_cache, tmp_path: Path) -> None:
    from tasks.correct.task import correct

    _fill_who_and_when(hub_cache)
    task = correct(method="first_step", split="all", who_and_when="hf://Kevin355/Who_and_When")
    assert [s.id for s in task.dataset] == [
        "algorithm_generated/hf0",
        "algorithm_generated/hf1",
        "hand_crafted/hf0",
    ]
    meta = task.metadata
    assert meta["dataset_source"] == "Who&When from hf://Kevin355/Who_and_When via datasets"
    assert meta["dataset_hash"].startswith("sha256:")
    # the hash depends only on the rows: the same rows give the same hash
    again = correct(method="first_step", split="all", who_and_when="hf://Kevin355/Who_and_When")
    assert again.metadata["dataset_hash"] == meta["dataset_hash"]
    with pytest.raises(Exception, match="who_and_when=.*no such folder"):
        correct(method="first_step", who_and_when=str(tmp_path / "missing"))
