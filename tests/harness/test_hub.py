"""harness.hub: pinned hub datasets read through `datasets`, offline from a filled hub cache."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from harness.data import DatasetNotFoundError
from harness.hub import (
    DatasetFormatError,
    DataSpec,
    HubDataset,
    HubUnavailableError,
    materialise,
    parse_source,
    read_json_records,
    read_records,
    resolve_records,
)

COMMIT = "0123456789abcdef0123456789abcdef01234567"  # HubCache.COMMIT
ROWS = [{"question": "1+1?", "answer": "x #### 2"}, {"question": "2+3?", "answer": "y #### 5"}]
GSM = HubDataset("openai/gsm8k", COMMIT, config="main", split="test", pin_source="test")


def _gsm_repo(cache) -> Path:
    return cache.fill(
        "openai/gsm8k",
        {
            "README.md": cache.card(
                {"main": {"train": "main/train-*", "test": "main/test-*"}, "socratic": {}}
            ),
            "main/test-00000-of-00001.parquet": cache.parquet(ROWS),
            "main/train-00000-of-00001.parquet": cache.parquet(ROWS[:1]),
        },
    )


def test_hub_dataset_read_from_filled_cache_offline(hub_cache) -> None:
    snapshot = _gsm_repo(hub_cache)
    records = read_records(GSM)
    assert records.rows == ROWS
    assert records.source == f"hf://openai/gsm8k@{COMMIT}?config=main&split=test"
    assert [f.name for f in records.files] == ["test-00000-of-00001.parquet"]
    assert records.files[0].parent == snapshot / "main"
    assert records.content_hash.startswith("sha256:")
    train = read_records(f"hf://openai/gsm8k@{COMMIT}?config=main&split=train")
    assert train.rows == ROWS[:1]


def test_branch_revision_resolves_through_refs_and_warns_unpinned(
    hub_cache, caplog: pytest.LogCaptureFixture
) -> None:
    _gsm_repo(hub_cache)
    with caplog.at_level(logging.WARNING, logger="harness.hub"):
        records = read_records("hf://openai/gsm8k@main?config=main&split=test")
    assert records.rows == ROWS
    assert records.source.endswith("(unpinned)")
    assert "not pinned" in caplog.text


def test_unknown_split_and_ambiguous_config_are_named(hub_cache) -> None:
    _gsm_repo(hub_cache)
    with pytest.raises(DatasetNotFoundError, match=r"no split 'validation'.*\['test', 'train'\]"):
        read_records(f"hf://openai/gsm8k@{COMMIT}?config=main&split=validation")
    with pytest.raises(DatasetNotFoundError, match=r"name the config.*\['main', 'socratic'\]"):
        read_records(f"hf://openai/gsm8k@{COMMIT}?split=test")


def test_repo_without_card_configs_uses_inferred_splits(hub_cache) -> None:
    lines = "".join(json.dumps(r) + "\n" for r in ROWS).encode()
    hub_cache.fill("someone/qa", {"data/test.jsonl": lines, "data/train.jsonl": lines})
    assert read_records(f"hf://someone/qa@{COMMIT}?split=test").rows == ROWS
    with pytest.raises(DatasetNotFoundError, match="name the split"):
        read_records(f"hf://someone/qa@{COMMIT}")


def test_not_cached_offline_is_a_clear_error(hub_cache) -> None:
    with pytest.raises(
        HubUnavailableError, match=r"hf://openai/gsm8k@0123.*not in the Hugging Face"
    ):
        read_records(GSM)


def test_resolve_falls_back_to_data_dir_then_names_every_place(
    hub_cache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = DataSpec("GSM8K test", "dataset=gsm8k", "gsm8k/test.jsonl", GSM, "get it somewhere")
    data = tmp_path / "data"
    (data / "gsm8k").mkdir(parents=True)
    (data / "gsm8k" / "test.jsonl").write_text(json.dumps(ROWS[0]) + "\n")
    monkeypatch.setenv("HARNESS_DATA_DIR", str(data))
    assert resolve_records(None, spec, task="t") == data / "gsm8k" / "test.jsonl"
    _gsm_repo(hub_cache)  # now cached: the pinned hub copy wins
    assert resolve_records(None, spec, task="t").rows == ROWS  # type: ignore[union-attr]
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "empty"))
    missing = DataSpec("x", "dataset=x", "x/y.jsonl", HubDataset("a/b", COMMIT), "ask")
    with pytest.raises(DatasetNotFoundError) as info:
        resolve_records(None, missing, task="t")
    message = str(info.value)
    assert "hf://a/b@" in message and "x/y.jsonl" in message and "harness data pull t" in message


def test_materialised_copy_is_read_when_the_hub_cache_lacks_it(
    hub_cache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    _gsm_repo(hub_cache)
    target = materialise(GSM)  # what `harness data pull` does online, here from the cache
    assert target == tmp_path / "data" / "hub" / "openai" / "gsm8k" / COMMIT
    assert (target / "main" / "test-00000-of-00001.parquet").is_file()
    assert not (target / "main" / "test-00000-of-00001.parquet").is_symlink()
    for path in sorted(hub_cache.root.rglob("*"), reverse=True):  # empty the hub cache
        path.unlink() if not path.is_dir() or path.is_symlink() else path.rmdir()
    records = read_records(GSM)
    assert records.rows == ROWS and records.files[0].is_relative_to(target)


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".parquet", ".csv"])
def test_local_files_through_datasets(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"rows{suffix}"
    if suffix == ".parquet":
        path.write_bytes(_parquet(ROWS))
    elif suffix == ".csv":
        path.write_text(
            "question,answer\n" + "".join(f"{r['question']},{r['answer']}\n" for r in ROWS)
        )
    elif suffix == ".json":
        path.write_text(json.dumps(ROWS))
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    records = read_records(str(path))
    assert records.rows == ROWS and records.source == str(path)


def test_local_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "a"}\n{not json\n')
    with pytest.raises(DatasetFormatError, match="bad.jsonl"):
        read_records(bad)
    with pytest.raises(DatasetNotFoundError, match="not found"):
        read_records(tmp_path / "missing.parquet")
    (tmp_path / "x.txt").write_text("x")
    with pytest.raises(DatasetNotFoundError, match="cannot read"):
        read_records(tmp_path / "x.txt")


def test_read_json_records_keeps_records_as_written_and_names_lines(tmp_path: Path) -> None:
    lines = tmp_path / "a.jsonl"
    lines.write_text('{"x": 1}\n\n{"x": "two", "nested": {"k": [1]}}\n')
    assert read_json_records(lines) == [
        (f"{lines}:1", {"x": 1}),
        (f"{lines}:3", {"x": "two", "nested": {"k": [1]}}),  # no common schema imposed
    ]
    listed = tmp_path / "b.json"
    listed.write_text(json.dumps([{"x": 1}, {"y": 2}], indent=1))
    assert read_json_records(listed) == [
        (f"{listed} row 0", {"x": 1}),
        (f"{listed} row 1", {"y": 2}),
    ]
    assert read_json_records(_write(tmp_path / "empty.jsonl", "\n")) == []
    cases = [
        ("bad.jsonl", '{"x": 1}\n{broken\n', r"bad.jsonl:2: invalid JSON"),
        ("scalar.jsonl", '{"x": 1}\n[1, 2]\n', r"scalar.jsonl:2: not a JSON object \(a list"),
        ("bad.json", '[{"x": 1},\n {broken]\n', r"bad.json:2: invalid JSON"),
        ("items.json", '[{"x": 1}, 3]', r"items.json row 1: not a JSON object \(a int"),
    ]
    for name, text, message in cases:
        with pytest.raises(DatasetFormatError, match=message):
            read_json_records(_write(tmp_path / name, text))
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"x": "caf\xe9"}\n')
    with pytest.raises(DatasetFormatError, match=r"latin.jsonl: not UTF-8 text \(byte 10\)"):
        read_json_records(latin)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _parquet(rows: list[dict]) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer)
    return buffer.getvalue()


def test_parse_source() -> None:
    assert parse_source("data/x.jsonl") == Path("data/x.jsonl")
    assert parse_source("hf://openai/gsm8k", GSM) == GSM
    other = parse_source("hf://openai/gsm8k@main?split=train", GSM)
    assert other == HubDataset("openai/gsm8k", "main", config="main", split="train")
    assert parse_source("hf://a/b") == HubDataset("a/b")
    for bad in ("hf://gsm8k", "hf://a/b?name=x", "hf:///b"):
        with pytest.raises(ValueError, match="hub dataset"):
            parse_source(bad)
