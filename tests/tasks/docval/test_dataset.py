"""Record conversion: SROIE box files and key fields, the document renderer, DocVQA JSON; every
bad input a clear error naming the file (or counted and listed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from scorers.boxes import iou, validate_box
from tasks.docval.dataset import (
    docvqa_record_to_sample,
    in_split,
    load_docvqa,
    load_rendered,
    sroie_record_to_sample,
)
from tasks.docval.render import DEGRADATIONS, FONT_FAMILIES, LAYOUTS, render_document
from tasks.docval.render._degrade import _rotate_box
from tasks.docval.sroie import (
    DatasetFormatError,
    SroieLine,
    load_sroie,
    match_field,
    parse_box_file,
)

# ----------------------------------------------------------------------------- SROIE format


def _sroie(
    tmp_path: Path, box_text: str, key: dict, size=(200, 300), image_bytes: bytes | None = None
):
    root = tmp_path / "sroie"
    for sub in ("img", "box", "key"):
        (root / sub).mkdir(parents=True)
    if image_bytes is None:
        Image.new("RGB", size, "white").save(root / "img" / "000.jpg")
    else:
        (root / "img" / "000.jpg").write_bytes(image_bytes)
    (root / "box" / "000.csv").write_bytes(box_text.encode())
    (root / "key" / "000.json").write_text(json.dumps(key))
    return root


KEY = {
    "company": "ACME SDN BHD",
    "date": "25/12/2018",
    "address": "1 JALAN A, 81100 JOHOR",
    "total": "9.00",
}
BOXES = (
    "10,10,150,10,150,30,10,30,ACME SDN BHD\r\n"
    "10,35,120,35,120,50,10,50,1 JALAN A,\r\n"
    "10,52,120,52,120,67,10,67,81100 JOHOR\r\n"
    "10,80,190,80,190,95,10,95,DATE: 25/12/2018 8:13 PM\r\n"
    "10,120,60,120,60,135,10,135,TOTAL:\r\n"
    "140,120,180,120,180,135,140,135,9.00\r\n"
    "10,140,60,140,60,155,10,155,CASH\r\n"
    "140,140,180,140,180,155,140,155,9.00\r"
)


def test_transcripts_with_commas_and_cr_line_ends(tmp_path):
    root = _sroie(tmp_path, BOXES, KEY)
    lines = parse_box_file(root / "box" / "000.csv", (200, 300))
    assert len(lines) == 8
    assert lines[1].text == "1 JALAN A," and lines[1].box == (10, 35, 120, 50)


def test_field_boxes_union_span_and_total_tie_break(tmp_path):
    loaded = load_sroie(_sroie(tmp_path, BOXES, KEY))
    doc = loaded.documents[0]
    assert loaded.n_fields == 4 and loaded.n_matched == 4 and loaded.unmatched == []
    # an address over two lines: their union box
    assert (
        doc.matches["address"].box == (10, 35, 120, 67) and doc.matches["address"].kind == "lines"
    )
    # a date inside a line: cut by character share ("DATE: " is 6 of 24 characters)
    d = doc.matches["date"]
    assert d.kind == "line_span" and d.box == pytest.approx(
        (10 + 180 * 6 / 24, 80, 10 + 180 * 16 / 24, 95)
    )
    # 9.00 twice: the one on the TOTAL row, not the cash
    t = doc.matches["total"]
    assert (
        t.box == (140, 120, 180, 135)
        and t.candidates == 2
        and t.alternatives == ((140, 120, 180, 135),)
    )
    sample = sroie_record_to_sample(doc, "total", "dev", tmp_path / "w.json")
    assert sample.id == "sroie/000/total" and sample.target == ["9.00"]
    assert (
        sample.metadata["gold_box"] == [140, 120, 180, 135] and sample.metadata["field"] == "total"
    )


def test_fuzzy_multi_line_match():
    lines = [
        SroieLine((0, 0, 100, 10), "BOOK TA .K(TAMAN DAYA) SDN BND"),
        SroieLine((0, 12, 50, 20), "X"),
    ]
    m = match_field("company", "BOOK TA .K (TAMAN DAYA) SDN BHD", lines)
    assert m is not None and m.box == (0, 0, 100, 10) and 0.8 <= m.similarity < 1
    assert match_field("company", "NOTHING LIKE IT AT ALL", lines) is None


def test_empty_and_unmatched_fields_are_counted_and_listed(tmp_path):
    key = dict(KEY, total="", company="ZZZZZZZZZZZZ")
    loaded = load_sroie(_sroie(tmp_path, BOXES, key))
    assert loaded.n_matched == 2
    assert loaded.unmatched == [
        "000/company: 'ZZZZZZZZZZZZ' matches no line of 000.csv",
        "000/total: empty value in 000.json",
    ]


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("10,10,150,10,150,30,10,TOTAL", r"000.csv:2: expected 8 coordinates"),
        ("10,10,a,10,150,30,10,30,TOTAL", r"000.csv:2: non-numeric coordinate"),
        ("10,10,10,10,10,30,10,30,TOTAL", r"000.csv:2: degenerate box"),
        ("10,10,250,10,250,30,10,30,TOTAL", r"000.csv:2: box .* lies outside the 200x300 image"),
    ],
)
def test_bad_box_lines_name_file_and_line(tmp_path, bad_line, message):
    root = _sroie(tmp_path, "10,10,150,10,150,30,10,30,ACME\n" + bad_line + "\n", KEY)
    with pytest.raises(DatasetFormatError, match=message):
        load_sroie(root)


def test_undecodable_image_and_bad_key_name_the_file(tmp_path):
    root = _sroie(tmp_path, BOXES, KEY, image_bytes=b"not a jpeg")
    with pytest.raises(DatasetFormatError, match=r"000.jpg: not a decodable image"):
        load_sroie(root)
    root = _sroie(tmp_path / "b", BOXES, KEY)
    (root / "key" / "000.json").write_text("{oops")
    with pytest.raises(DatasetFormatError, match=r"000.json: not valid JSON"):
        load_sroie(root)
    (root / "key" / "000.json").write_text(json.dumps(dict(KEY, total=9)))
    with pytest.raises(DatasetFormatError, match=r"field 'total' must be a string"):
        load_sroie(root)


def test_sroie_data_fields_matched(data_dir):
    loaded = load_sroie(data_dir / "sroie")
    assert len(loaded.documents) == 45
    assert loaded.n_matched / loaded.n_fields >= 0.95
    assert len(loaded.unmatched) == loaded.n_fields - loaded.n_matched  # listed, none silent
    for doc in loaded.documents:
        for m in doc.matches.values():
            assert validate_box(m.box, doc.size) is None


# ----------------------------------------------------------------------------- renderer


def test_renderer_is_deterministic_and_covers_layouts_and_fonts():
    a, b = render_document(3, seed=1), render_document(3, seed=1)
    assert a.png_bytes() == b.png_bytes() and a.words == b.words
    assert render_document(3, seed=2).png_bytes() != a.png_bytes()
    docs = [render_document(i) for i in range(24)]
    assert {d.layout for d in docs} == set(LAYOUTS) and len(LAYOUTS) >= 8
    assert {d.font for d in docs} == set(FONT_FAMILIES) and len(FONT_FAMILIES) >= 4
    kinds = {q.field for d in docs for q in d.questions}
    assert {"total", "subtotal", "date", "due_date", "address", "table"} <= kinds
    # distractors: subtotal beside total, two dates, two addresses
    assert any(q.field == "total" and q.distractor for d in docs for q in d.questions)
    assert any(q.field == "due_date" and q.distractor for d in docs for q in d.questions)


def test_answer_boxes_hold_the_ink_of_the_answer():
    for i in range(8):
        doc = render_document(i)
        ink = np.asarray(doc.image.convert("L")) < 128
        for q in doc.questions:
            x1, y1, x2, y2 = (int(round(v)) for v in q.box)
            assert validate_box(q.box, doc.image.size) is None
            inside = ink[y1:y2, x1:x2].sum()
            # every answer has ink in its box; a 3 px margin around the box adds little
            grown = ink[max(0, y1 - 3) : y2 + 3, max(0, x1 - 3) : x2 + 3].sum()
            assert inside > 0 and grown - inside <= 0.15 * inside, (doc.layout, q.field)


def test_rotation_moves_boxes_with_the_page():
    img = Image.new("RGB", (400, 300), "white")
    img.paste((0, 0, 0), (250, 60, 330, 100))
    for angle in (2.5, -2.5):
        rot = img.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor="white")
        ys, xs = np.nonzero(np.asarray(rot.convert("L")) < 128)
        dark = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
        assert iou(dark, _rotate_box((250, 60, 330, 100), angle, (200, 150))) > 0.9


def test_degradation_levels():
    clean = render_document(0)
    for level in DEGRADATIONS[1:]:
        doc = render_document(0, degradation=level)
        assert doc.png_bytes() != clean.png_bytes()
        for q, q0 in zip(doc.questions, clean.questions, strict=True):
            assert q.answers == q0.answers and iou(q.box, q0.box) > 0.3
    with pytest.raises(ValueError, match="unknown layout"):
        render_document(0, layout="poster")


def test_load_rendered_writes_images_and_splits(tmp_path):
    data = load_rendered(
        6, seed=0, split="all", degradation="none", questions_per_doc=2, out_root=tmp_path
    )
    assert len(data.samples) == 12 and data.generated
    s = data.samples[0]
    assert Path(s.metadata["image"]).is_file() and Path(s.metadata["gold_words"]).is_file()
    assert s.metadata["source"] == "rendered" and s.target == s.metadata["answers"]
    again = load_rendered(
        6, seed=0, split="all", degradation="none", questions_per_doc=2, out_root=tmp_path
    )
    assert again.hash == data.hash
    dev = load_rendered(
        6, seed=0, split="dev", degradation="none", questions_per_doc=2, out_root=tmp_path
    )
    test = load_rendered(
        6, seed=0, split="test", degradation="none", questions_per_doc=2, out_root=tmp_path
    )
    assert {x.metadata["doc_id"] for x in dev.samples} == {"docs-0000", "docs-0003"}
    assert len(dev.samples) + len(test.samples) == 12
    assert (
        in_split(0, "dev") and not in_split(1, "dev") and in_split(1, "test") and in_split(5, "all")
    )


# ----------------------------------------------------------------------------- DocVQA


def _docvqa(tmp_path: Path, records, mp=False):
    (tmp_path / ("images" if mp else "documents")).mkdir()
    Image.new("RGB", (80, 60), "white").save(
        tmp_path / ("images/p1.jpg" if mp else "documents/d1.png")
    )
    path = tmp_path / "val.json"
    path.write_text(json.dumps({"dataset_name": "docvqa", "data": records}))
    return path


def test_docvqa_single_and_multi_page(tmp_path):
    path = _docvqa(
        tmp_path,
        [
            {
                "questionId": 7,
                "question": "What is the date?",
                "image": "documents/d1.png",
                "docId": 1,
                "answers": ["1/2/3", "1 Feb"],
            },
        ],
    )
    data = load_docvqa(str(path), "all")
    s = data.samples[0]
    assert s.id == "docvqa/7" and s.target == ["1/2/3", "1 Feb"] and s.metadata["gold_box"] is None
    assert s.metadata["image_size"] == [80, 60]
    mp_dir = tmp_path / "mp"
    mp_dir.mkdir()
    path = _docvqa(
        mp_dir,
        [
            {
                "questionId": 9,
                "question": "Who?",
                "doc_id": "x",
                "page_ids": ["p0", "p1"],
                "answer_page_idx": 1,
                "answers": ["Ann"],
                "answer_bbox": [1, 2, 30, 40],
            },
        ],
        mp=True,
    )
    s = load_docvqa(str(path), "all").samples[0]
    assert s.metadata["image"].endswith("images/p1.jpg") and s.metadata["gold_box"] == [
        1,
        2,
        30,
        40,
    ]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            {"questionId": 1, "question": "Q?", "image": "documents/d1.png", "answers": []},
            "'answers' must be a non-empty list",
        ),
        (
            {"questionId": 1, "question": "Q?", "image": "documents/d1.png", "answers": [""]},
            "'answers' must be a non-empty list",
        ),
        (
            {"questionId": 1, "question": "", "image": "documents/d1.png", "answers": ["a"]},
            "'question' must be a non-empty string",
        ),
        (
            {"questionId": 1, "question": "Q?", "image": "documents/missing.png", "answers": ["a"]},
            "does not exist",
        ),
        (
            {
                "questionId": 1,
                "question": "Q?",
                "page_ids": ["p1"],
                "answer_page_idx": 3,
                "answers": ["a"],
            },
            "does not index",
        ),
        ({"questionId": 1, "question": "Q?", "answers": ["a"]}, "neither 'image'"),
        (
            {
                "questionId": 1,
                "question": "Q?",
                "image": "documents/d1.png",
                "answers": ["a"],
                "answer_bbox": [70, 10, 90, 20],
            },
            "crosses the edge",
        ),
    ],
)
def test_docvqa_bad_records_name_file_and_record(tmp_path, record, message):
    path = _docvqa(tmp_path, [record])
    with pytest.raises(DatasetFormatError, match=message) as err:
        load_docvqa(str(path), "all")
    assert "val.json record 0 (questionId 1)" in str(err.value)


def test_docvqa_undecodable_image(tmp_path):
    path = _docvqa(
        tmp_path,
        [{"questionId": 2, "question": "Q?", "image": "documents/bad.png", "answers": ["a"]}],
    )
    (tmp_path / "documents" / "bad.png").write_bytes(b"garbage")
    with pytest.raises(DatasetFormatError, match=r"bad.png: not a decodable image"):
        docvqa_record_to_sample(json.loads(path.read_text())["data"][0], tmp_path, path, 0)
