"""VAL, rule by rule: each weight, threshold and feedback direction (hand-computed cases)."""

from __future__ import annotations

import pytest

from methods.docval import (
    Prediction,
    Region,
    ValConfig,
    Validator,
    best_region,
    coordinate_score,
    filter_traces,
    pixel_feedback,
    spatial_score,
    structure_score,
    text_in_regions,
)

REGIONS = [
    Region(0, (10, 10, 110, 30), "SUBTOTAL 8.50"),
    Region(1, (10, 40, 110, 60), "TOTAL 9.00"),
    Region(2, (10, 400, 110, 420), "THANK YOU"),
]
GOLD_BOX = (70, 40, 110, 60)  # "9.00" inside region 1
FULL_REASONING = [
    "The text region with the label TOTAL.",
    "Locate its position on the page.",
    "The answer value is 9.00.",
    "The bbox coordinates are [70, 40, 110, 60].",
]


def _validate(pred, mode="filter", config=None, answers=("9.00",), box=GOLD_BOX):
    return Validator(config or ValConfig(), mode=mode).validate(pred, list(answers), box, REGIONS)


def test_perfect_prediction_scores_one_and_passes():
    r = _validate(Prediction("9.00", GOLD_BOX, FULL_REASONING))
    assert (r.anls, r.in_document, r.iou, r.region_match) == (1.0, True, 1.0, True)
    assert (r.s_struct, r.s_coord, r.s_spatial) == (1.0, 1.0, 1.0)
    assert r.q_ans == pytest.approx(1.0) and r.q_bbox == pytest.approx(1.0)
    assert r.q == pytest.approx(1.0) and r.passed and r.status == "VALID"


def test_answer_weights_07_anls_03_in_document():
    # right text, but not in any region's text: Q_ans = 0.7
    regions = [Region(0, (0, 0, 5, 5), "nothing")]
    r = Validator().validate(Prediction("9.00", GOLD_BOX), ["9.00"], GOLD_BOX, regions)
    assert r.q_ans == pytest.approx(0.7)
    # in the document but wrong (ANLS 0): Q_ans = 0.3
    r = _validate(Prediction("8.50", GOLD_BOX))
    assert r.anls == 0.0 and r.in_document and r.q_ans == pytest.approx(0.3)
    # case-insensitive substring of a region's text
    assert text_in_regions("total 9", REGIONS) and text_in_regions("  THANK ", REGIONS)
    assert not text_in_regions("", REGIONS) and not text_in_regions(None, REGIONS)


def test_bbox_weights_08_iou_02_region_match():
    # same region as gold but IoU 0.5: Q_bbox = 0.8 * 0.5 + 0.2
    half = (70, 40, 110, 80)  # 800 px² of gold inside 1600 px² box -> IoU 0.5
    r = _validate(Prediction("9.00", half))
    assert r.iou == pytest.approx(0.5) and r.region_match
    assert r.q_bbox == pytest.approx(0.8 * 0.5 + 0.2)
    # a box on another region: region mismatch, IoU 0
    r = _validate(Prediction("9.00", (10, 10, 110, 30)))
    assert r.iou == 0.0 and not r.region_match and r.pred_region == 0 and r.gold_region == 1
    assert r.q_bbox == 0.0


def test_overall_weights_04_04_02():
    r = _validate(Prediction("8.50", (10, 10, 110, 30), []))
    # Q_ans 0.3, Q_bbox 0, Q_reason = (0 + 1 + 1) / 3
    assert r.q_reason == pytest.approx(2 / 3)
    assert r.q == pytest.approx(0.4 * 0.3 + 0.4 * 0.0 + 0.2 * (2 / 3))


def test_region_matching_needs_iou_above_01_and_first_wins_ties():
    regions = [Region(0, (0, 0, 10, 10), "a"), Region(1, (0, 0, 10, 10), "b")]
    assert best_region((0, 0, 10, 10), regions).id == 0  # tie: first
    # IoU exactly 0.1 is not enough (strict >): box (0,0,10,1) vs (0,0,10,10) = 10/100
    assert best_region((0, 0, 10, 1), regions) is None
    assert best_region((0, 0, 10, 1.2), regions).id == 0
    assert best_region(None, regions) is None
    assert best_region((0, 0, 1, 1), []) is None


def test_structure_score_counts_keyword_groups():
    assert structure_score([]) == 0.0
    assert structure_score("   ") == 0.0
    assert structure_score("the region") == 0.25
    assert structure_score("region; where") == 0.5
    assert structure_score("area, position, value") == 0.75
    assert structure_score(["section", "spatial", "extract", "bounding"]) == 1.0
    assert structure_score("TEXT LOCATE FOUND BOX") == 1.0  # case-insensitive


def test_coordinate_score():
    box = (100, 200, 300, 400)
    assert coordinate_score("no numbers here", box) == 1.0
    assert coordinate_score("box [110, 210, 310, 410]", box) == 1.0  # within 20 px
    assert coordinate_score("box [119.9, 200, 300, 400]", box) == 1.0
    assert coordinate_score("box [120, 200, 300, 400]", box) == 0.5  # |20| is not < 20
    assert coordinate_score("box [0, 0, 10, 10] then [101, 201, 301, 401]", box) == 1.0
    assert coordinate_score("100, 200, 300, 400", box) == 1.0  # brackets optional
    assert coordinate_score("box [100, 200, 300, 400]", None) == 0.5


def test_spatial_score():
    low, high = (0, 350, 10, 360), (0, 50, 10, 60)
    assert spatial_score("at the top of the page", low) == pytest.approx(0.7)
    assert spatial_score("at the top of the page", high) == 1.0
    assert spatial_score("near the bottom", high) == pytest.approx(0.7)
    assert spatial_score("near the bottom", low) == 1.0
    assert spatial_score("upper part, lower part", (0, 300, 1, 301)) == 1.0  # y1 = 300: neither
    assert spatial_score("upper and lower", low) == pytest.approx(0.7)
    assert spatial_score("stop", low) == pytest.approx(0.7)  # substring, as in the repository
    assert spatial_score("top", None) == 1.0
    cfg = ValConfig(spatial_penalty=0.6)
    assert spatial_score(
        "top and below", (0, 350, 1, 351), 300, cfg.spatial_penalty
    ) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("pred", "expected"),
    [
        ((50, 100, 150, 200), ["Move RIGHT by 50 px"]),
        ((150, 100, 250, 200), ["Move LEFT by 50 px"]),
        ((100, 60, 200, 160), ["Move DOWN by 40 px"]),
        ((100, 140, 200, 240), ["Move UP by 40 px"]),
        ((100, 100, 150, 200), ["EXPAND width by 50 px"]),
        ((100, 100, 300, 200), ["SHRINK width by 100 px"]),
        ((100, 100, 200, 150), ["EXPAND height by 50 px"]),
        ((100, 100, 200, 260), ["SHRINK height by 60 px"]),
    ],
)
def test_pixel_feedback_directions(pred, expected):
    gold = (100, 100, 200, 200)
    from scorers.boxes import iou

    delta, text = pixel_feedback(pred, gold, iou(pred, gold))
    assert delta == tuple(g - p for g, p in zip(gold, pred, strict=True))
    for e in expected:
        assert e in text
    moves = text.split("Corrections: ")[1].split("; ")
    assert len(moves) == len(expected)


def test_pixel_feedback_tolerance_and_nearly_correct():
    gold = (100, 100, 200, 200)
    # 5 px is within tolerance; 6 px is reported (IoU 0.87 < 0.9)
    _, text = pixel_feedback((95, 100, 195, 200), gold, 0.9)
    assert "nearly correct" not in text and "Corrections: None" in text
    _, text = pixel_feedback((94, 100, 186, 200), gold, 0.87)
    assert "Move RIGHT by 6 px" in text and "EXPAND width by 8 px" in text
    _, text = pixel_feedback((101, 100, 201, 200), gold, 0.95)
    assert "nearly correct" in text
    delta, text = pixel_feedback(None, gold, 0.0)
    assert delta is None and "No box" in text


def test_verifier_severities_and_order():
    # wrong region, wrong answer not in doc, no reasoning
    r = _validate(Prediction("42", (10, 10, 110, 30), []), mode="verifier")
    types = [(e.type, e.severity) for e in r.errors]
    assert types == [
        ("semantic", "critical"),
        ("answer", "high"),
        ("bbox", "high"),
        ("reasoning", "low"),
    ]
    assert r.priority_fixes[0].startswith("[CRITICAL] Your bbox targets Region #0")
    assert "not found in document text" in r.priority_fixes[1]
    assert r.corrected_output["answer"] == "9.00"
    assert r.corrected_output["bbox"] == [70, 40, 110, 60]
    assert "Region #1" in r.corrected_output["reasoning"][1]


def test_verifier_medium_severities_and_no_error_above_thresholds():
    # answer "9.01": ANLS 0.75, in no region -> Q_ans 0.525 (medium: >= 0.5, < 0.9)
    # box IoU 0.6 in the gold region -> bbox medium (0.5 <= IoU < 0.75)
    box = (70, 40, 110, 73.3333333)
    r = _validate(Prediction("9.01", box, FULL_REASONING), mode="verifier")
    sev = {e.type: e.severity for e in r.errors}
    assert r.q_ans == pytest.approx(0.525) and sev["answer"] == "medium"
    assert r.iou == pytest.approx(0.6, abs=1e-6) and sev["bbox"] == "medium"
    assert "semantic" not in sev
    # IoU 0.8 (>= 0.75) and the right answer: no answer or bbox error
    box = (70, 40, 110, 65)
    r = _validate(Prediction("9.00", box, FULL_REASONING), mode="verifier")
    assert r.iou == pytest.approx(0.8)
    assert {e.type for e in r.errors} <= {"reasoning"}


def test_filter_threshold_and_trace_filter():
    good = _validate(Prediction("9.00", GOLD_BOX, FULL_REASONING))
    bad = _validate(Prediction("8.50", (10, 10, 110, 30), []))
    assert filter_traces([good, bad, good]) == [0, 2]
    # Q exactly at q_min passes (>=)
    assert (
        Validator(ValConfig(q_min=good.q))
        .validate(Prediction("9.00", GOLD_BOX, FULL_REASONING), ["9.00"], GOLD_BOX, REGIONS)
        .passed
    )
    assert filter_traces([good], q_min=1.01) == []


def test_missing_box_and_anls_variants():
    r = _validate(Prediction("9.00", None, ["text locate answer box"]))
    assert r.iou == 0.0 and r.pred_region is None and not r.region_match
    assert r.q_bbox == 0.0 and r.s_spatial == 1.0
    # "abcd" vs "axyz": standard ANLS 0 (NL 0.75 >= 0.5), repository variant 0.25
    std = _validate(Prediction("abcd", GOLD_BOX), answers=["axyz"])
    repo = _validate(
        Prediction("abcd", GOLD_BOX), answers=["axyz"], config=ValConfig(anls_variant="docval_repo")
    )
    assert std.anls == 0.0 and repo.anls == pytest.approx(0.25)
    # max over several gold answers (standard)
    assert _validate(Prediction("9", GOLD_BOX), answers=["x", "9"]).anls == 1.0


def test_mode_is_checked():
    with pytest.raises(ValueError, match="mode"):
        Validator(mode="judge")  # type: ignore[arg-type]
