import pytest

from harness.data import DatasetNotFoundError, content_hash, data_path, text_hash
from harness.records import task_metadata


def test_missing_data_dir_names_variable(monkeypatch):
    monkeypatch.delenv("HARNESS_DATA_DIR", raising=False)
    with pytest.raises(DatasetNotFoundError, match="HARNESS_DATA_DIR.*unset.*get it here"):
        data_path("gsm8k/test.jsonl", how_to_get="get it here")


def test_missing_file_names_path(monkeypatch, tmp_path):
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    with pytest.raises(DatasetNotFoundError, match=str(tmp_path / "x" / "y.json")):
        data_path("x/y.json", how_to_get="download")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "y.json").write_text("{}")
    assert data_path("x/y.json", how_to_get="download") == tmp_path / "x" / "y.json"


def test_content_hash_is_stable_and_sensitive(tmp_path):
    a = tmp_path / "a"
    a.mkdir()
    (a / "1.txt").write_text("one")
    (a / "2.txt").write_text("two")
    first = content_hash(a)
    assert first == content_hash(a) and first.startswith("sha256:")
    (a / "2.txt").write_text("TWO")
    assert content_hash(a) != first
    (a / "2.txt").write_text("two")
    (a / "2.txt").rename(a / "3.txt")  # same bytes, other name
    assert content_hash(a) != first
    assert text_hash("x") != text_hash("y")


def test_data_gsm8k_hash_matches_manifest(data_dir):
    import hashlib

    path = data_path("gsm8k/test.jsonl", how_to_get="")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == (
        "3730d312f6e3440559ace48831e51066acaca737f6eabec99bccb9e4b3c39d14"
    )


def test_task_metadata_records_revision():
    meta = task_metadata(dataset_source="s", dataset_hash="h", deviations=["smaller model"])
    assert meta["deviations"] == ["smaller model"] and meta["dataset_hash"] == "h"
    assert (
        len(meta["harness_git"]["commit"]) in (40, 7) or meta["harness_git"]["commit"] == "unknown"
    )
