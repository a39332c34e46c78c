"""ood_hallucination's dev/test split by question source (tasks/ood_hallucination/splits.yaml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.splits import load_source_split
from tasks._config import task_defaults
from tasks.ood_hallucination.config import OodConfig
from tasks.ood_hallucination.dataset import (
    aqua_record_to_sample,
    csqa_record_to_sample,
    generate_records,
    generated_record_to_sample,
    generated_source,
    generated_sources,
    gsm8k_record_to_sample,
    question_source,
)
from tasks.ood_hallucination.task import ood_hallucination


def test_a_generated_question_s_source_is_its_arithmetic_problem() -> None:
    assert generated_source("What is 4 times 3?") == generated_source("What is 3 times 4?")
    assert generated_source("What is 3 times 4?") == "mul 3x4"
    add = "Tom has 12 apples and buys 5 more. How many apples does Tom have now?"
    other = "Zoe has 5 coins and buys 12 more. How many coins does Zoe have now?"
    assert generated_source(add) == generated_source(other) == "add 5+12"
    sub = "Mia has 20 cards and gives 7 of them to a friend. How many cards does Mia have now?"
    assert generated_source(sub) == "sub 20-7"
    assert generated_source("What is the capital of France?").startswith("generated:")


def test_conversion_records_the_source_per_format() -> None:
    [record] = generate_records(1, seed=2)
    sample = generated_record_to_sample(record)
    assert question_source(sample) == generated_source(record["question"])
    gsm = {"question": "Ann has  2 cats.\nHow many?", "answer": "#### 2"}
    same = {"question": "Ann has 2 cats. How many?", "answer": "#### 2"}
    source = question_source(gsm8k_record_to_sample(gsm, 0))
    assert source.startswith("gsm8k:") and source == question_source(
        gsm8k_record_to_sample(same, 5)
    )
    csqa = {
        "id": "q1",
        "answerKey": "A",
        "question": {
            "question_concept": "milk",
            "stem": "Where?",
            "choices": [{"label": "A", "text": "fridge"}, {"label": "B", "text": "oven"}],
        },
    }
    assert question_source(csqa_record_to_sample(csqa, 0)) == "csqa-concept:milk"
    flat = {
        "id": "q2",
        "question": "Where else?",
        "question_concept": "milk",
        "choices": {"label": ["A", "B"], "text": ["x", "y"]},
        "answerKey": "B",
    }
    assert question_source(csqa_record_to_sample(flat, 1)) == "csqa-concept:milk"
    aqua = {"question": "2+3?", "options": ["A)4", "B)5"], "correct": "B"}
    assert question_source(aqua_record_to_sample(aqua, 0)).startswith("aqua:")


def test_every_generated_question_is_a_listed_problem_on_one_side() -> None:
    frozen = load_source_split("ood_hallucination")
    problems = set(generated_sources())
    assert len(problems) == 1225 and frozen.unseen(problems) == []
    for seed in (0, 1, 7):
        asked = {generated_source(r["question"]) for r in generate_records(2000, seed)}
        assert asked <= problems
    # the hash rule's share, on the sources of the default question set
    sides = [frozen.side(generated_source(r["question"])) for r in generate_records(500, 0)]
    assert 0.25 < sides.count("dev") / len(sides) < 0.45


def test_split_selects_by_source_and_the_sides_do_not_share_a_problem() -> None:
    task_dev = ood_hallucination(split="dev")
    task_test = ood_hallucination(split="test")
    task_all = ood_hallucination(split="all")
    dev = {question_source(s) for s in task_dev.dataset}
    test = {question_source(s) for s in task_test.dataset}
    assert dev and test and not dev & test
    assert len(task_dev.dataset) + len(task_test.dataset) == len(task_all.dataset) == 500
    assert task_test.metadata["data_split"] == "test"
    assert task_test.metadata["split_questions"] == len(task_test.dataset)


def test_split_is_a_config_field_checked_on_construction() -> None:
    defaults = task_defaults(ood_hallucination)
    assert defaults["split"] == "test"
    with pytest.raises(ValueError, match="ood_hallucination: split='train'"):
        OodConfig.from_params({**defaults, "split": "train"})


@pytest.mark.data
def test_frozen_split_covers_every_gsm8k_question_data(data_dir: Path) -> None:
    frozen = load_source_split("ood_hallucination")
    lines = (data_dir / "gsm8k" / "test.jsonl").read_text().splitlines()
    sources = {
        question_source(gsm8k_record_to_sample(json.loads(x), i)) for i, x in enumerate(lines)
    }
    assert len(sources) == len(lines) == 1319  # no GSM8K question repeats
    assert frozen.unseen(sources) == []
    listed = {s for s in frozen.dev | frozen.test if s.startswith("gsm8k:")}
    assert listed == sources  # no stale names either
    assert frozen.unseen(generated_sources()) == [] and len(frozen.dev | frozen.test) == 1225 + 1319
