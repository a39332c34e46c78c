"""dispat's table loader through `datasets`: a hub dataset read from a filled hub cache offline
(the code a user runs online) and local Parquet / JSON-lines files, with the CSV label rule."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tasks.dispat.dataset import DatasetFormatError, resolve_dataset

ROWS = [{"f1": float(i), "f2": float(i % 3), "label": int(i >= 8)} for i in range(10)]


def test_hub_table_from_the_cache(hub_cache) -> None:
    hub_cache.fill("someone/tabular-ad", {"data/train-0.parquet": hub_cache.parquet(ROWS)})
    ds = resolve_dataset(f"hf://someone/tabular-ad@{hub_cache.COMMIT}")
    assert ds.name == "tabular-ad" and ds.X.shape == (10, 2) and ds.column_names == ["f1", "f2"]
    assert np.array_equal(ds.y, [0] * 8 + [1] * 2)
    assert ds.source.startswith("hf://someone/tabular-ad@0123") and ds.content_hash


def test_local_parquet_and_jsonl(hub_cache, tmp_path: Path) -> None:
    parquet = tmp_path / "t.parquet"
    parquet.write_bytes(hub_cache.parquet(ROWS))
    lines = tmp_path / "t.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    a, b = resolve_dataset(str(parquet)), resolve_dataset(str(lines))
    assert a.name == "t" and np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    lines.write_text("".join(json.dumps({"f1": r["f1"]}) + "\n" for r in ROWS))
    with pytest.raises(DatasetFormatError, match=r"t.jsonl: no label column"):
        resolve_dataset(str(lines))
    lines.write_text('{"f1": 1, "label": 0}\n{oops\n')
    with pytest.raises(DatasetFormatError, match=r"t.jsonl:2: invalid JSON"):
        resolve_dataset(str(lines))
