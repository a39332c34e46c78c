"""Record conversion: generated samples, ViVerBench records (good and malformed), the quokka."""

from __future__ import annotations

import base64
import importlib.util
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from tasks.omniverifier.dataset import (
    QUOKKA_SUBTASK,
    DatasetFormatError,
    generated_samples,
    load_viverbench,
    quokka_samples,
    viverbench_record_to_sample,
)
from tasks.omniverifier.scenes import ERROR_TYPES


def test_generated_samples_pair_true_and_false() -> None:
    samples = generated_samples(14, seed=0, level="easy")
    assert [s.target for s in samples] == ["true", "false"] * 7
    assert {s.metadata["pair_error_type"] for s in samples} == set(ERROR_TYPES)
    for t, f in zip(samples[::2], samples[1::2], strict=True):
        assert t.input == f.input and t.metadata["subtask"] == f.metadata["subtask"]
        assert t.metadata["error_boxes"] == [] and len(f.metadata["error_boxes"]) == 1
    assert len(generated_samples(3, seed=0, level="easy")) == 3
    with pytest.raises(ValueError, match="error_types"):
        generated_samples(2, seed=0, level="easy", error_types=["wrong_shape"])


def _png(w: int = 8, h: int = 6) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (200, 10, 10)).save(buf, format="PNG")
    return buf.getvalue()


def _write_viverbench(tmp_path: Path) -> Path:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(_png())
    records = [
        {
            "task": "Concept Existence: Object",
            "question": "Is there a dog? Provide your evaluation.",
            "answer": True,
            "explanation": "",
            "image": "img/a.png",
        },
        {
            "task": "Image Annotation: BBox",
            "question": "Is the box right? Provide your evaluation.",
            "answer": "false",
            "explanation": "box misses",
            "image": {"bytes": base64.b64encode(_png(4, 4)).decode()},
        },
    ]
    path = tmp_path / "viverbench.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_viverbench_records_to_samples(tmp_path: Path) -> None:
    samples = load_viverbench(_write_viverbench(tmp_path))
    assert [s.target for s in samples] == ["true", "false"]
    assert [s.metadata["subtask"] for s in samples] == [
        "Concept Existence: Object",
        "Image Annotation: BBox",
    ]
    assert samples[0].metadata["image"].startswith("data:image/png;base64,")
    assert (samples[0].metadata["width"], samples[0].metadata["height"]) == (8, 6)
    assert (
        samples[1].metadata["explanation"] == "box misses"
        and samples[1].metadata["error_boxes"] == []
    )
    assert load_viverbench(tmp_path)[0].input == samples[0].input  # a folder works too


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"task": None}, "'task'"),
        ({"answer": "maybe"}, "'answer'"),
        ({"image": "img/missing.png"}, "does not exist"),
        ({"image": {"bytes": base64.b64encode(b"not an image").decode()}}, "not a readable image"),
        ({"question": ""}, "'question'"),
    ],
)
def test_malformed_viverbench_record_names_the_field(
    tmp_path: Path, change: dict, match: str
) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(_png())
    record = {"task": "T", "question": "Q", "answer": True, "image": "img/a.png", **change}
    record = {k: v for k, v in record.items() if v is not None}
    with pytest.raises(DatasetFormatError, match=match) as info:
        viverbench_record_to_sample(record, where="file.jsonl: line 3", root=tmp_path, index=0)
    assert "file.jsonl: line 3" in str(info.value)


def test_broken_viverbench_file(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"task": "T"}\nnot json\n')
    with pytest.raises(DatasetFormatError, match=r"x.jsonl:2: invalid JSON"):
        load_viverbench(bad)
    with pytest.raises(DatasetFormatError, match="no .jsonl"):
        load_viverbench(_empty(tmp_path))


def _empty(tmp_path: Path) -> Path:
    d = tmp_path / "empty"
    d.mkdir()
    return d


def test_quokka_boxes_follow_the_image() -> None:
    if importlib.util.find_spec("imgaug") is None:  # located only: imgaug itself needs numpy < 2
        pytest.skip("imgaug's data files are installed by make setup (pip --no-deps imgaug)")
    samples, files = quokka_samples()
    assert "quokka_annotations.json" in files
    assert len(samples) == 12 and {s.metadata["subtask"] for s in samples} == {QUOKKA_SUBTASK}
    by_id = {s.id: s for s in samples}
    full, flip = by_id["quokka-full-f"].metadata, by_id["quokka-full-flip-f"].metadata
    # original 960x643 box (148, 50, 550, 642), scaled with the image to a 512-px long side
    sx, sy = full["width"] / 960, full["height"] / 643
    assert full["width"] == 512
    assert full["error_boxes"][0] == pytest.approx(
        [148 * sx, 50 * sy, 550 * sx, 642 * sy], abs=0.06
    )
    w = flip["width"]
    x1, _, x2, _ = full["error_boxes"][0]
    assert flip["error_boxes"][0][0] == pytest.approx(w - x2, abs=0.1)
    assert flip["error_boxes"][0][2] == pytest.approx(w - x1, abs=0.1)
    assert by_id["quokka-full-t"].metadata["error_boxes"] == []
