"""docval's DocVQA loader through `datasets`: the pinned lmms-lab DocVQA hub id read from a
filled hub cache offline (the code a user runs online), images embedded in the Parquet rows."""

from __future__ import annotations

import io
from pathlib import Path

import pytest


def _docvqa_parquet(tmp_path: Path) -> bytes:
    import datasets
    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (64, 32), "white").save(png, format="PNG")
    features = datasets.Features(
        {
            "questionId": datasets.Value("string"),
            "question": datasets.Value("string"),
            "image": datasets.Image(),
            "docId": datasets.Value("int64"),
            "answers": datasets.Sequence(datasets.Value("string")),
            "data_split": datasets.Value("string"),
        }
    )
    rows = {
        "questionId": ["1", "2"],
        "question": ["What is the total?", "What is the date?"],
        "image": [{"bytes": png.getvalue(), "path": "page.png"}] * 2,
        "docId": [7, 8],
        "answers": [["12.50"], ["1 May"]],
        "data_split": ["val", "val"],
    }
    path = tmp_path / "rows.parquet"
    datasets.Dataset.from_dict(rows, features=features).to_parquet(str(path))
    return path.read_bytes()


def test_docvqa_from_the_hub_cache(hub_cache, tmp_path: Path, monkeypatch) -> None:
    from tasks.docval.dataset import DOCVQA_HUB, load_docvqa

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    hub_cache.fill(
        DOCVQA_HUB.repo_id,
        {
            "README.md": hub_cache.card({"DocVQA": {"validation": "DocVQA/validation-*"}}),
            "DocVQA/validation-00000-of-00001.parquet": _docvqa_parquet(tmp_path),
        },
        commit=DOCVQA_HUB.revision,
    )
    loaded = load_docvqa("hf://lmms-lab-encoder/DocVQA", "all")
    assert [s.target for s in loaded.samples] == [["12.50"], ["1 May"]]
    meta = loaded.samples[0].metadata or {}
    assert list(meta["image_size"]) == [64, 32] and meta["doc_id"] == "7"
    assert Path(meta["image"]).is_relative_to(tmp_path / "cache" / "docval" / "hub-images")
    assert loaded.source.startswith("DocVQA hf://lmms-lab-encoder/DocVQA@539088e")


def test_docvqa_hub_row_errors_name_the_row(hub_cache, tmp_path: Path, monkeypatch) -> None:
    from tasks.docval.dataset import DatasetFormatError, load_docvqa

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    rows = [{"questionId": "1", "question": "", "answers": ["x"], "image": None}]
    hub_cache.fill("someone/docs", {"data/validation-0.parquet": hub_cache.parquet(rows)})
    with pytest.raises(DatasetFormatError, match=r"hf://someone/docs@.*row 0.*'question'"):
        load_docvqa(f"hf://someone/docs@{hub_cache.COMMIT}?split=validation", "all")
