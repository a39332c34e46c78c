"""ood_hallucination's loaders through `datasets`: the pinned hub ids read from a filled hub
cache offline (the code a user runs online), and local Parquet files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.data import DatasetNotFoundError
from tasks.ood_hallucination.dataset import DATA, load_dataset

GSM_ROWS = [
    {"question": "Tom has 2 apples and buys 3. How many?", "answer": "2+3=5\n#### 5"},
    {"question": "What is 4 times 3?", "answer": "#### 12"},
]
# tau/commonsense_qa's flat hub rows (choices as parallel label/text lists).
CSQA_ROWS = [
    {
        "id": "q1",
        "question": "Where is milk kept cold?",
        "question_concept": "milk",
        "choices": {"label": ["A", "B", "C"], "text": ["oven", "fridge", "shelf"]},
        "answerKey": "B",
    }
]
AQUA_ROWS = [{"question": "2+3?", "options": ["A)4", "B)5"], "rationale": "2+3=5", "correct": "B"}]


def _fill(hub_cache, index: int, rows: list[dict], *, split_path: str) -> None:
    spec = DATA[index].hub
    assert spec is not None
    configs = {spec.config or "default": {spec.split or "train": split_path}}
    hub_cache.fill(
        spec.repo_id,
        {
            "README.md": hub_cache.card(configs),
            split_path.replace("*", "0.parquet"): hub_cache.parquet(rows),
        },
        commit=spec.revision if spec.pinned else hub_cache.COMMIT,
    )


@pytest.mark.parametrize(
    "name,index,rows,target",
    [("gsm8k", 0, GSM_ROWS, "5"), ("csqa", 1, CSQA_ROWS, "B"), ("aqua", 2, AQUA_ROWS, "B")],
)
def test_default_reads_the_pinned_hub_dataset_from_the_cache(
    hub_cache, name: str, index: int, rows: list[dict], target: str
) -> None:
    _fill(hub_cache, index, rows, split_path=f"data/{DATA[index].hub.split}-*")  # type: ignore[union-attr]
    ds, info = load_dataset(name)
    assert len(ds) == len(rows) and ds[0].target == target
    assert info["dataset_source"].startswith(f"hf://{DATA[index].hub.repo_id}@")  # type: ignore[union-attr]
    assert info["dataset_hash"].startswith("sha256:") and not info["generated"]


def test_pins_are_commits_where_verified() -> None:
    gsm, csqa, aqua = (spec.hub for spec in DATA)
    assert gsm and gsm.pinned and gsm.repo_id == "openai/gsm8k" and gsm.config == "main"
    assert csqa and csqa.pinned and csqa.split == "validation"
    assert aqua and not aqua.pinned  # no verified commit: read as `main`, logged as unpinned


def test_hub_row_errors_name_the_source_and_row(hub_cache) -> None:
    bad = [dict(CSQA_ROWS[0], answerKey="E")]
    _fill(hub_cache, 1, bad, split_path="data/validation-*")
    with pytest.raises(ValueError, match=r"hf://tau/commonsense_qa@94630fe.*row 0: malformed csqa"):
        load_dataset("csqa")


def test_explicit_hub_id_and_local_parquet(hub_cache, tmp_path: Path) -> None:
    hub_cache.fill(
        "someone/gsm8k-copy",
        {"data/test-0.parquet": hub_cache.parquet(GSM_ROWS)},
    )
    ds, info = load_dataset(
        "gsm8k", data_file=f"hf://someone/gsm8k-copy@{hub_cache.COMMIT}?split=test"
    )
    assert [s.target for s in ds] == ["5", "12"]
    path = tmp_path / "gsm8k.parquet"
    path.write_bytes(hub_cache.parquet(GSM_ROWS))
    ds, info = load_dataset("gsm8k", data_file=str(path))
    assert len(ds) == 2 and info["dataset_source"] == str(path)


def test_offline_without_cache_or_data_dir_names_both(hub_cache, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    with pytest.raises(DatasetNotFoundError) as info:
        load_dataset("gsm8k")
    text = str(info.value)
    assert "hf://openai/gsm8k@cc7b047" in text and "gsm8k/test.jsonl" in text
    assert "harness data pull ood_hallucination" in text


def test_offline_without_cache_reads_the_data_dir_file_naming_bad_lines(
    hub_cache, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    local = tmp_path / "gsm8k" / "test.jsonl"
    local.parent.mkdir()
    local.write_text("\n".join(json.dumps(r) for r in GSM_ROWS) + "\n")
    ds, info = load_dataset("gsm8k")
    assert [s.target for s in ds] == ["5", "12"] and info["dataset_source"] == str(local)
    local.write_text(json.dumps(GSM_ROWS[0]) + "\n\n" + json.dumps({"question": "no answer"}))
    with pytest.raises(ValueError, match=r"test.jsonl:3: malformed gsm8k record"):
        load_dataset("gsm8k")
    local.write_text(json.dumps(GSM_ROWS[0]) + "\n{broken\n")
    with pytest.raises(ValueError, match=r"test.jsonl:2: invalid JSON"):
        load_dataset("gsm8k")
