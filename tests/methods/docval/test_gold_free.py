"""Label-free checks: they see only the prediction and the page's OCR, never the gold label."""

from __future__ import annotations

import inspect

from methods.docval import Prediction, Word, gold_free_check, lines_from_words, snap_to_answer

WORDS = [
    Word("TOTAL:", (10, 100, 70, 112), 1.0, 0),
    Word("9.00", (300, 100, 340, 112), 1.0, 0),
    Word("CASH", (10, 130, 50, 142), 1.0, 1),
    Word("50.00", (300, 130, 350, 142), 1.0, 1),
]
REGIONS = lines_from_words(WORDS)


def test_signature_takes_no_gold():
    params = set(inspect.signature(gold_free_check).parameters)
    assert not params & {"gold", "gold_box", "answers", "target", "gold_answers"}


def test_consistent_prediction_passes():
    r = gold_free_check(
        Prediction("9.00", (298, 99, 342, 113), ["box [298, 99, 342, 113]"]), WORDS, REGIONS
    )
    assert r.passed and r.in_document and r.answer_in_box and r.snaps_to_region
    assert r.feedback == [] and r.text_in_box == "9.00"


def test_box_on_other_text_gets_moved_to_own_answer():
    # answers 9.00 but boxes the cash line: feedback points at its *own* answer's occurrence
    r = gold_free_check(Prediction("9.00", (300, 130, 350, 142)), WORDS, REGIONS)
    assert not r.passed and not r.answer_in_box and r.suggested_box == (300, 100, 340, 112)
    assert "covers '50.00'" in r.feedback[0] and "Move UP by 30 px" in r.feedback[0]
    snapped = snap_to_answer(Prediction("9.00", (300, 130, 350, 142)), WORDS)
    assert snapped.bbox == (300, 100, 340, 112) and "snapped" in snapped.notes[-1]


def test_wrong_answer_that_is_on_the_page_is_not_detected():
    # 50.00 is a wrong total but consistent with the page: no label, no way to know
    r = gold_free_check(Prediction("50.00", (300, 130, 350, 142)), WORDS, REGIONS)
    assert r.passed


def test_answer_not_in_document_empty_and_no_box():
    r = gold_free_check(Prediction("12.34", (300, 100, 340, 112)), WORDS, REGIONS)
    assert not r.in_document and "does not occur" in r.feedback[0]
    r = gold_free_check(Prediction("", None, failure="empty answer"), WORDS, REGIONS)
    assert not r.passed and "empty" in r.feedback[0] and "no usable box" in r.feedback[1]
    r = gold_free_check(Prediction("9.00", None), WORDS, REGIONS)
    assert "is at [300, 100, 340, 112]" in r.feedback[0]
    assert snap_to_answer(Prediction("12.34", None), WORDS).bbox is None


def test_box_cutting_through_words_does_not_snap():
    # covers 9.00 and cuts through a quarter of TOTAL:, matching no line: not snapped
    r = gold_free_check(Prediction("9.00", (55, 80, 345, 130)), WORDS, REGIONS)
    assert r.answer_in_box and not r.snaps_to_region and not r.passed
    assert "does not line up" in r.feedback[-1]


def test_reasoning_consistency():
    r = gold_free_check(
        Prediction("9.00", (300, 100, 340, 112), ["the box is [0, 0, 10, 10] at the bottom"]),
        WORDS,
        REGIONS,
    )
    assert r.s_coord == 0.5 and r.s_spatial < 1 and not r.passed
    assert any("coordinates in your reasoning" in f for f in r.feedback)
