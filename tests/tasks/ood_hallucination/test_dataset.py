"""Record conversion per source format, the generator, and answer extraction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.ood_hallucination.answers import (
    answers_match,
    extract_choice,
    extract_number,
    normalize_number,
)
from tasks.ood_hallucination.dataset import (
    aqua_record_to_sample,
    csqa_record_to_sample,
    generate_records,
    generated_record_to_sample,
    gsm8k_record_to_sample,
    load_dataset,
)

CSQA = {
    "answerKey": "B",
    "id": "q1",
    "question": {
        "question_concept": "x",
        "stem": "Where do you keep milk?",
        "choices": [
            {"label": "A", "text": "oven"},
            {"label": "B", "text": "fridge"},
            {"label": "C", "text": "shelf"},
        ],
    },
}
AQUA = {
    "question": "What is 2+3?",
    "options": ["A)4", "B)5", "C)6", "D)7", "E)8"],
    "rationale": "2+3=5",
    "correct": "B",
}
GSM = {
    "question": "Ann has 2 cats and gets 1,000 more. How many?",
    "answer": "2+1000=<<2+1000=1002>>1002\n#### 1,002",
}


def _write_jsonl(path: Path, records: list) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def test_generator_is_seeded_and_correct() -> None:
    a, b = generate_records(200, seed=3), generate_records(200, seed=3)
    assert a == b and a != generate_records(200, seed=4)
    kinds = {r["kind"] for r in a}
    assert kinds == {"mul_1digit", "word_1step"}
    assert 70 < sum(r["kind"] == "mul_1digit" for r in a) < 130
    for r in a:
        nums = [int(t) for t in r["question"].replace("?", " ").split() if t.isdigit()]
        if r["kind"] == "mul_1digit":
            assert r["answer"] == nums[0] * nums[1] and all(1 <= n <= 9 for n in nums)
        elif "buys" in r["question"]:
            assert r["answer"] == nums[0] + nums[1] <= 40
        else:
            assert r["answer"] == nums[0] - nums[1] > 0
    with pytest.raises(ValueError, match="n_generated"):
        generate_records(0)


def test_generated_record_to_sample() -> None:
    s = generated_record_to_sample(
        {"id": "g1", "kind": "mul_1digit", "question": "What is 3 times 4?", "answer": 12}
    )
    assert s.target == "12" and s.id == "g1" and s.metadata["answer_type"] == "number"
    assert s.input.startswith("What is 3 times 4?\n") and "The answer is N" in s.input
    assert (
        "step by step"
        in generated_record_to_sample({"id": "g", "question": "q", "answer": 1}, "cot").input
    )


def test_gsm8k_record_to_sample() -> None:
    s = gsm8k_record_to_sample(GSM, 7)
    assert s.target == "1002" and s.id == "gsm8k-7" and "step by step" in s.input
    with pytest.raises(ValueError, match="####"):
        gsm8k_record_to_sample({"question": "q", "answer": "42"}, 0)
    with pytest.raises(ValueError, match="missing field.*'answer'"):
        gsm8k_record_to_sample({"question": "q"}, 0)


def test_csqa_record_to_sample() -> None:
    s = csqa_record_to_sample(CSQA, 0)
    assert s.target == "B" and s.id == "q1" and s.metadata["answer_type"] == "choice"
    assert "A) oven\nB) fridge\nC) shelf" in s.input
    bad = json.loads(json.dumps(CSQA))
    bad["answerKey"] = "E"
    with pytest.raises(ValueError, match="answerKey 'E'"):
        csqa_record_to_sample(bad, 0)
    with pytest.raises(ValueError, match="'stem', 'choices'|missing field"):
        csqa_record_to_sample({"answerKey": "A", "question": {"stem": "x"}}, 0)


def test_aqua_record_to_sample() -> None:
    s = aqua_record_to_sample(AQUA, 3)
    assert s.target == "B" and s.id == "aqua-3" and "A)4\nB)5" in s.input
    with pytest.raises(ValueError, match="form 'X\\)text'"):
        aqua_record_to_sample({**AQUA, "options": ["4", "5"]}, 0)
    with pytest.raises(ValueError, match="not one of the option labels"):
        aqua_record_to_sample({**AQUA, "correct": "Z"}, 0)


@pytest.mark.parametrize("name,record", [("csqa", CSQA), ("aqua", AQUA), ("gsm8k", GSM)])
def test_load_dataset_from_fixture_files(tmp_path: Path, name: str, record: dict) -> None:
    path = _write_jsonl(tmp_path / f"{name}.jsonl", [record, record])
    ds, info = load_dataset(name, data_file=str(path))
    assert len(ds) == 2 and info["dataset_hash"].startswith("sha256:")
    assert info["prompt_style"] == "cot" and not info["generated"]


def test_load_dataset_errors_name_file_and_line(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "aqua.jsonl", [AQUA, "{not json"])
    with pytest.raises(ValueError, match=r"aqua.jsonl:2: invalid JSON"):
        load_dataset("aqua", data_file=str(path))
    path = _write_jsonl(tmp_path / "csqa.jsonl", [CSQA, {"id": "x"}])
    with pytest.raises(ValueError, match=r"csqa.jsonl:2: malformed csqa record: .*missing"):
        load_dataset("csqa", data_file=str(path))
    with pytest.raises(FileNotFoundError, match="How to obtain"):
        load_dataset("aqua", data_file=str(tmp_path / "absent.json"))
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("mmlu")


def test_csqa_missing_from_data_dir_names_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="commonsenseqa/dev_rand_split.jsonl"):
        load_dataset("csqa")


def test_gsm8k_data_real_file(data_dir: Path) -> None:
    ds, info = load_dataset("gsm8k")
    assert len(ds) == 1319
    from harness.data import content_hash

    assert info["dataset_hash"] == content_hash(data_dir / "gsm8k" / "test.jsonl")
    assert ds[0].target == "18"  # Janet's ducks: "#### 18"
    assert all(normalize_number(s.target) == s.target for s in ds)


# ---------------------------------------------------------------- answers
@pytest.mark.parametrize(
    "text,value,how",
    [
        ("The answer is 15.", "15", "answer_is"),
        ("so 3*4 = 12. The answer is: 12", "12", "answer_is"),
        ("The answer is 1,234.", "1234", "answer_is"),
        ("The answer is $7.50", "7.5", "answer_is"),
        ("4 * 9 = 36", "36", "last_number"),
        ("The answer is 3. Wait, the answer is 4", "4", "answer_is"),
        ("I don't know", None, "no_number"),
        ("The answer is -3", "-3", "answer_is"),
    ],
)
def test_extract_number(text: str, value: str | None, how: str) -> None:
    got = extract_number(text)
    assert (got.value, got.how) == (value, how)


@pytest.mark.parametrize(
    "text,value",
    [
        ("The answer is B.", "B"),
        ("the answer is (c)", "C"),
        ("I pick (D) because", "D"),
        ("Options considered.\nE) is best", "E"),
        ("no idea", None),
    ],
)
def test_extract_choice(text: str, value: str | None) -> None:
    assert extract_choice(text).value == value


def test_answers_match() -> None:
    assert answers_match("12", "12", "number") and answers_match("12", "12.0", "number")
    assert not answers_match("12", "13", "number") and not answers_match(None, "1", "number")
    assert answers_match("b", "B", "choice") and not answers_match("A", "B", "choice")
    with pytest.raises(ValueError, match="not a number"):
        answers_match("1", "abc", "number")
