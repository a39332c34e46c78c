"""Prompts and the reply parser: JSON and DocVAL's CoT format, box formats, every failure reason."""

from __future__ import annotations

import pytest

from methods.docval import Region, build_prompt, feedback_prompt, format_regions, parse_output

SIZE = (1000, 500)


def _parse(text, fmt="pixels"):
    return parse_output(text, image_size=SIZE, box_format=fmt)


def test_json_reply():
    p = _parse('{"reasoning": "Step 1: x\\nStep 2: y", "answer": "9.00", "bbox": [10, 20, 30, 40]}')
    assert p.failure is None and p.answer == "9.00" and p.bbox == (10, 20, 30, 40)
    assert p.reasoning == ["x", "y"]


def test_json_in_fence_with_chatter_and_list_reasoning():
    text = 'Sure!\n```json\n{"reasoning": ["a", "b"], "answer": 12.5, "bbox": ["1", "2", "3", "4"]}\n```'
    p = _parse(text)
    assert p.answer == "12.5" and p.bbox == (1, 2, 3, 4) and p.reasoning == ["a", "b"]


def test_docval_cot_reply():
    text = (
        "REASONING:\nStep 1: A receipt.\nStep 2: the total.\nStep 7: box.\n\n"
        "ANSWER: 9.00\nBBOX: [542, 176, 618, 204]"
    )
    p = _parse(text)
    assert p.answer == "9.00" and p.bbox == (542, 176, 618, 204)
    assert p.reasoning == ["A receipt.", "the total.", "box."]


@pytest.mark.parametrize(
    ("fmt", "raw", "pixels"),
    [
        ("pixels", [100, 50, 300, 150], (100, 50, 300, 150)),
        ("0-1000", [100, 100, 300, 300], (100, 50, 300, 150)),
        ("0-1", [0.1, 0.1, 0.3, 0.3], (100, 50, 300, 150)),
    ],
)
def test_box_formats(fmt, raw, pixels):
    p = _parse(f'{{"answer": "a", "bbox": {raw}}}', fmt)
    assert p.bbox == pytest.approx(pixels) and p.failure is None


def test_several_boxes_are_merged():
    p = _parse('{"answer": "a b", "bbox": [[10, 10, 20, 20], [30, 5, 40, 15]]}')
    assert p.bbox == (10, 5, 40, 20) and "merged" in p.notes[0]


def test_box_object_keys():
    p = _parse('{"answer": "a", "bbox": {"x1": 1, "y1": 2, "x2": 3, "y2": 4}}')
    assert p.bbox == (1, 2, 3, 4)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty reply"),
        ("I think the total is nine.", "unparseable"),
        ('{"answer": "", "bbox": [1, 2, 3, 4]}', "empty answer"),
        ('{"bbox": [1, 2, 3, 4]}', "no answer"),
        ('{"answer": "9.00"}', "no bbox"),
        ('{"answer": "9.00", "bbox": [1, 2, 3]}', "not 4 numbers"),
        ('{"answer": "9.00", "bbox": [5, 5, 5, 9]}', "degenerate"),
        ('{"answer": "9.00", "bbox": [1200, 10, 1300, 40]}', "outside the 1000x500 image"),
        ('{"answer": "9.00", "bbox": "somewhere"}', "without four numbers"),
        ('{"answer": ["9"], "bbox": [1, 2, 3, 4]}', "not text"),
        ("ANSWER: 9.00", "no BBOX: line"),
    ],
)
def test_failures_carry_reasons(text, reason):
    p = _parse(text)
    assert p.failure is not None and reason in p.failure


def test_failed_box_keeps_the_answer():
    p = _parse('{"answer": "9.00", "bbox": [2000, 10, 2100, 40]}')
    assert p.answer == "9.00" and p.bbox is None and "outside" in p.failure


def test_box_crossing_the_edge_is_clipped_with_a_note():
    p = _parse('{"answer": "x", "bbox": [900, 400, 1100, 520]}')
    assert p.failure is None and p.bbox == (900, 400, 1000, 500)
    assert "clipped" in p.notes[0]
    # within the 2 px tolerance: clipped silently
    p = _parse('{"answer": "x", "bbox": [900, 400, 1001, 500]}')
    assert p.bbox == (900, 400, 1000, 500) and not p.notes


def test_prompts():
    regions = [Region(0, (100, 50, 300, 75), "TOTAL 9.00")]
    text = build_prompt("What is the total?", image_size=SIZE, regions=regions)
    assert 'Region #0: [100, 50, 300, 75] → "TOTAL 9.00"' in text
    assert "What is the total?" in text and '"bbox"' in text and "1000 x 500" in text
    scaled = format_regions(regions, "0-1000", SIZE)
    assert "[100, 100, 300, 150]" in scaled
    assert "[0.100, 0.100, 0.300, 0.150]" in format_regions(regions, "0-1", SIZE)
    image = build_prompt("Q?", image_size=SIZE, style="docval_cot")
    assert "document image above" in image and "Step 7" in image and "BBOX:" in image
    assert "REGIONS" not in image
    assert format_regions([], "pixels", SIZE) == "No text regions detected."
    fb = feedback_prompt(["Move RIGHT by 5 px"], "pixels")
    assert "- Move RIGHT by 5 px" in fb


def test_json_cut_off_by_the_token_limit_is_read_field_by_field():
    p = _parse(
        '{"reasoning": "the total line", "answer": "9.00", "bbox": [10, 20, 30, 40], "note": "and th'
    )
    assert p.failure is None and p.answer == "9.00" and p.bbox == (10, 20, 30, 40)
    assert p.reasoning == ["the total line"] and "incomplete JSON" in p.notes[0]
    p = _parse('{"reasoning": "long story", "answer": "9.00", "bbox": [10, 2')
    assert p.answer == "9.00" and p.bbox is None and "no bbox" in p.failure
    p = _parse('{"reasoning": "it rambles on and on')
    assert p.answer is None and "unparseable" in p.failure
