"""OCR engines on a rendered page (real tesseract / RapidOCR when installed), the OCR cache,
lines from words, and the JSONL records (the correction set refuses non-dev splits)."""

from __future__ import annotations

import json
import shutil

import pytest
from PIL import Image, ImageDraw, ImageFont

from methods.docval import (
    Prediction,
    Region,
    Validator,
    Word,
    cached_ocr,
    correction_record,
    lines_from_words,
    make_ocr_engine,
    trace_record,
    write_jsonl,
)
from scorers.boxes import iou


def _page():
    import matplotlib

    font = ImageFont.truetype(f"{matplotlib.get_data_path()}/fonts/ttf/DejaVuSans.ttf", 28)
    img = Image.new("RGB", (520, 160), "white")
    draw = ImageDraw.Draw(img)
    draw.text((20, 20), "INVOICE", font=font, fill="black")
    draw.text((20, 90), "TOTAL", font=font, fill="black")
    draw.text((330, 90), "123.45", font=font, fill="black")
    box = draw.textbbox((330, 90), "123.45", font=font)
    return img, box


def _check_engine(name):
    img, box = _page()
    words = make_ocr_engine(name)(img)
    texts = [w.text for w in words]
    assert "123.45" in texts and any("TOTAL" in t for t in texts), texts
    found = next(w for w in words if w.text == "123.45")
    assert iou(found.box, box) > 0.6


def test_tesseract_reads_words_with_boxes():
    if shutil.which("tesseract") is None:
        pytest.skip("tesseract-ocr is not installed (apt-get install tesseract-ocr)")
    _check_engine("tesseract")


@pytest.mark.slow
def test_rapidocr_reads_words_with_boxes():
    pytest.importorskip("rapidocr")
    _check_engine("rapidocr")


def test_unknown_engine():
    with pytest.raises(ValueError, match="unknown OCR engine"):
        make_ocr_engine("doctr")  # type: ignore[arg-type]


class _CountingEngine:
    name = "counting"

    def __init__(self):
        self.calls = 0

    def settings(self):
        return {"engine": "counting"}

    def __call__(self, image):
        self.calls += 1
        return [Word("x", (1.0, 2.0, 3.0, 4.0), 0.5, 0)]


def test_cache_hit_miss_and_torn_file(tmp_path):
    engine, img = _CountingEngine(), Image.new("RGB", (10, 10), "white")
    a = cached_ocr(engine, img, tmp_path, key=b"k1")
    b = cached_ocr(engine, img, tmp_path, key=b"k1")
    assert a == b and engine.calls == 1
    cached_ocr(engine, img, tmp_path, key=b"k2")
    assert engine.calls == 2
    for f in (tmp_path / "counting").glob("*.json"):
        f.write_text("{not json")
    cached_ocr(engine, img, tmp_path, key=b"k1")
    assert engine.calls == 3
    cached_ocr(engine, img, None)
    assert engine.calls == 4


def test_lines_from_words_orders_top_to_bottom():
    words = [
        Word("b", (50, 40, 60, 50), 0.8, 7),
        Word("a", (10, 40, 20, 50), 0.6, 7),
        Word("top", (10, 5, 40, 15), 1.0, 3),
    ]
    lines = lines_from_words(words)
    assert [(r.id, r.text) for r in lines] == [(0, "top"), (1, "a b")]
    assert lines[1].bbox == (10, 40, 60, 50) and lines[1].confidence == pytest.approx(0.7)


def test_records_and_jsonl(tmp_path):
    regions = [Region(0, (0, 0, 50, 20), "TOTAL 9.00")]
    pred = Prediction("8.00", (0, 0, 10, 10), ["step"])
    report = Validator(mode="verifier").validate(pred, ["9.00"], (30, 0, 50, 20), regions)
    rec = correction_record(
        sample_id="s1",
        question="q",
        image="img.png",
        image_sha256="abc",
        prediction=pred,
        report=report,
        split="dev",
    )
    assert rec["output"]["answer"] == "9.00" and rec["input"]["feedback"] == report.priority_fixes
    with pytest.raises(ValueError, match="dev split only"):
        correction_record(
            sample_id="s1",
            question="q",
            image="i",
            image_sha256="a",
            prediction=pred,
            report=report,
            split="test",
        )
    filt = Validator().validate(pred, ["9.00"], (30, 0, 50, 20), regions)
    with pytest.raises(ValueError, match="verifier mode"):
        correction_record(
            sample_id="s",
            question="q",
            image="i",
            image_sha256="a",
            prediction=pred,
            report=filt,
            split="dev",
        )
    tr = trace_record(
        sample_id="s1",
        question="q",
        image="i",
        image_sha256="a",
        teacher="t",
        prediction=pred,
        report=filt,
    )
    path = tmp_path / "out" / "x.jsonl"
    assert write_jsonl(path, [rec, tr]) == 2
    lines = path.read_text().splitlines()
    assert json.loads(lines[1])["val"]["passed"] is False
