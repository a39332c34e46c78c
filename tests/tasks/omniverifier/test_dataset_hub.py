"""omniverifier's ViVerBench loader through `datasets`: the hub id read from a filled hub cache
offline (the code a user runs online), images embedded in the Parquet rows."""

from __future__ import annotations

import io
from pathlib import Path

import pytest


def _viverbench_parquet(tmp_path: Path) -> bytes:
    import datasets
    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (40, 20), "red").save(png, format="PNG")
    features = datasets.Features(
        {
            "task": datasets.Value("string"),
            "question": datasets.Value("string"),
            "answer": datasets.Value("bool"),
            "explanation": datasets.Value("string"),
            "image": datasets.Image(),
        }
    )
    rows = {
        "task": ["Counting", "Colour"],
        "question": ["There are two circles.", "The square is red."],
        "answer": [False, True],
        "explanation": ["There are three.", ""],
        "image": [{"bytes": png.getvalue(), "path": "a.png"}] * 2,
    }
    path = tmp_path / "rows.parquet"
    datasets.Dataset.from_dict(rows, features=features).to_parquet(str(path))
    return path.read_bytes()


def test_viverbench_from_the_hub_cache(hub_cache, tmp_path: Path) -> None:
    from tasks.omniverifier.dataset import DATA, load_viverbench_hub

    hub = DATA[0].hub
    assert hub is not None and hub.repo_id == "comin/ViVerBench" and not hub.pinned
    hub_cache.fill(
        hub.repo_id, {"data/train-00000-of-00001.parquet": _viverbench_parquet(tmp_path)}
    )
    samples, source, digest = load_viverbench_hub("hf://comin/ViVerBench")
    assert [s.target for s in samples] == ["false", "true"]
    meta = samples[0].metadata or {}
    assert meta["subtask"] == "Counting" and (meta["width"], meta["height"]) == (40, 20)
    assert meta["image"].startswith("data:image/png;base64,")
    assert source == "hf://comin/ViVerBench@main (unpinned)" and digest.startswith("sha256:")


def test_viverbench_hub_row_errors_name_the_row(hub_cache) -> None:
    from tasks.omniverifier.dataset import DatasetFormatError, load_viverbench_hub

    rows = [{"task": "Counting", "question": "q", "answer": "maybe", "image": None}]
    hub_cache.fill("someone/vv", {"data/train-0.parquet": hub_cache.parquet(rows)})
    with pytest.raises(DatasetFormatError, match=r"hf://someone/vv@main .*row 0.*'answer'"):
        load_viverbench_hub("hf://someone/vv")


def test_task_reads_viverbench_from_the_hub(hub_cache, tmp_path: Path) -> None:
    from tasks.omniverifier.task import omniverifier

    hub_cache.fill(
        "comin/ViVerBench", {"data/train-00000-of-00001.parquet": _viverbench_parquet(tmp_path)}
    )
    task = omniverifier(
        dataset="viverbench", data_file="hf://comin/ViVerBench", observation="image"
    )
    assert len(task.dataset) == 2
    assert (task.metadata or {})["dataset_source"] == "hf://comin/ViVerBench@main (unpinned)"
