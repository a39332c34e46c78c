"""OCR baseline rules and the text helpers, on hand-built word boxes."""

from __future__ import annotations

import pytest

from methods.docval import (
    Vocabulary,
    Word,
    answer_with_ocr,
    field_of_question,
    find_text,
    group_lines,
    text_in_box,
)
from methods.docval._text import span_box


def _line(y, items, line):
    """Words at height y: items = [(x, text)], width 10 px per character."""
    return [Word(t, (x, y, x + 10 * len(t), y + 12), 1.0, line) for x, t in items]


RECEIPT = [
    *_line(10, [(100, "ACME"), (150, "TRADING"), (230, "SDN"), (270, "BHD")], 0),
    *_line(30, [(100, "12"), (130, "JALAN"), (190, "MAJU,")], 1),
    *_line(50, [(100, "81100"), (160, "JOHOR")], 2),
    *_line(70, [(100, "TEL:"), (150, "07-1234567")], 3),
    *_line(90, [(10, "DATE:"), (70, "25/12/2018")], 4),
    *_line(200, [(10, "SUBTOTAL")], 5),
    *_line(200, [(300, "8.50")], 6),
    *_line(220, [(10, "TOTAL:")], 7),
    *_line(220, [(300, "9.00")], 8),
    *_line(240, [(10, "CASH"), (300, "50.00")], 9),
]


@pytest.mark.parametrize(
    ("question", "field"),
    [
        ("What is the total amount of this receipt?", "total"),
        ("What is the subtotal?", "subtotal"),
        ("How much tax was charged?", "tax"),
        ("What is the due date?", "due_date"),
        ("What is the date of this receipt?", "date"),
        ("What is the invoice number?", "invoice_number"),
        ("What is the phone number of the store?", "phone"),
        ("What is the address of the company that issued this receipt?", "address"),
        ("What is the name of the company that issued this receipt?", "company"),
        ("What is written in the 'Date of Birth' field?", "generic"),
        ("What is the value for North in the Q2 column?", "table"),
        ("What is the closing balance?", "closing_balance"),
        ("When does the statement period end?", "period_end"),
        ("Who signed the letter?", "generic"),
    ],
)
def test_field_of_question(question, field):
    assert field_of_question(question) == field


def test_total_rule_skips_subtotal_and_cash():
    p = answer_with_ocr("What is the total amount?", RECEIPT)
    assert p.answer == "9.00" and p.bbox == (300, 220, 340, 232) and p.failure is None
    assert "row label 'total'" in p.reasoning[1]
    assert answer_with_ocr("What is the subtotal?", RECEIPT).answer == "8.50"


def test_trivial_baselines():
    p = answer_with_ocr("What is the total amount?", RECEIPT, rule="largest_amount")
    assert p.answer == "50.00"  # the cash tendered: the trivial rule's typical mistake
    p = answer_with_ocr("What is the total amount?", RECEIPT, rule="first_line")
    assert p.answer == "ACME TRADING SDN BHD"
    with pytest.raises(ValueError, match="unknown baseline rule"):
        answer_with_ocr("q", RECEIPT, rule="guess")  # type: ignore[arg-type]


def test_date_company_address_phone():
    p = answer_with_ocr("What is the date of this receipt?", RECEIPT)
    assert p.answer == "25/12/2018" and p.bbox == (70, 90, 170, 102)
    assert answer_with_ocr("Which company issued it?", RECEIPT).answer == "ACME TRADING SDN BHD"
    p = answer_with_ocr("What is the address of the company?", RECEIPT)
    assert p.answer == "12 JALAN MAJU, 81100 JOHOR"  # stops at the postcode line
    assert p.bbox == (100, 30, 240, 62)
    assert answer_with_ocr("What is the phone number?", RECEIPT).answer == "07-1234567"


def test_partial_word_answer_box_is_cut_by_character_share():
    words = _line(0, [(0, "TOTAL:RM9.00")], 0)
    p = answer_with_ocr("What is the total?", words)
    assert p.answer == "9.00"
    assert p.bbox == pytest.approx((80, 0, 120, 12))


def test_no_answer_is_a_failure_with_reason():
    p = answer_with_ocr("What is the total?", _line(0, [(0, "HELLO")], 0))
    assert p.answer == "" and p.bbox is None and "found nothing for field 'total'" in p.failure


def test_amount_with_ocr_space_is_joined():
    words = _line(0, [(0, "TOTAL"), (100, "RM"), (140, "73."), (180, "00")], 0)
    assert answer_with_ocr("What is the total?", words).answer == "73.00"


def test_fuzzy_label_tolerates_one_misread():
    words = _line(0, [(0, "Tatal"), (60, "Amount:"), (200, "31.00")], 0)
    assert answer_with_ocr("What is the total amount?", words).answer == "31.00"


def test_generic_label_and_boxed_form():
    words = [
        *_line(0, [(0, "Full"), (50, "Name:"), (200, "Ada"), (240, "Lovelace")], 0),
        *_line(40, [(0, "Date"), (50, "of"), (80, "Birth")], 1),
        *_line(60, [(0, "10/12/1815")], 2),
    ]
    p = answer_with_ocr("What is written in the 'Full Name' field?", words)
    assert p.answer == "Ada Lovelace"
    p = answer_with_ocr("What is written in the 'Date of Birth' field?", words)
    assert p.answer == "10/12/1815"  # a label without a colon heads the value below it


def test_table_cell():
    words = [
        *_line(0, [(0, "Region"), (200, "Q1"), (300, "Q2")], 0),
        *_line(20, [(0, "North"), (190, "12.5"), (290, "40.1")], 1),
        *_line(40, [(0, "South"), (190, "7.0"), (290, "3.3")], 2),
    ]
    assert answer_with_ocr("What is the value for North in the Q2 column?", words).answer == "40.1"
    assert answer_with_ocr("What is the value for South in the Q1 column?", words).answer == "7.0"


def test_text_helpers():
    lines = group_lines(RECEIPT)
    assert lines[0].text == "ACME TRADING SDN BHD" and lines[0].starts == (0, 5, 13, 17)
    assert span_box(lines[0].words, lines[0].starts, 5, 12) == (150, 10, 220, 22)
    assert span_box(lines[0].words, lines[0].starts, 6, 8) == (160, 10, 180, 22)
    with pytest.raises(ValueError, match="cover no word"):
        span_box(lines[0].words, lines[0].starts, 100, 110)
    # an answer across two lines
    assert find_text("12 jalan maju, 81100 johor", RECEIPT) == [(100, 30, 240, 62)]
    assert find_text("9.00", RECEIPT) == [(300, 220, 340, 232)]
    assert find_text("", RECEIPT) == []
    assert find_text("nowhere", RECEIPT) == []
    assert text_in_box((290, 215, 350, 235), RECEIPT) == "9.00"
    assert text_in_box((0, 0, 1, 1), RECEIPT) == ""


def _vocab(**phrases: tuple[int, int]) -> Vocabulary:
    return Vocabulary(
        derived_from="test",
        total_labels=(10, 90),
        total_phrases={k.replace("_", " "): v for k, v in phrases.items()},
        company_words=(),
        address_end_words=(),
        address_stop_words=(),
        skip_words=(),
    )


def test_total_label_model_longest_known_phrase_decides():
    vocab = _vocab(total=(5, 5), total_rounded=(4, 0), total_gst=(0, 4), cash=(2, 6))
    words = [
        *_line(0, [(0, "TOTAL"), (200, "60.31")], 0),
        *_line(20, [(0, "ROUNDING"), (200, "-0.01")], 1),
        *_line(40, [(0, "TOTAL"), (60, "ROUNDED"), (200, "60.30")], 2),
        *_line(60, [(0, "CASH"), (200, "100.00")], 3),
        *_line(80, [(0, "TOTAL"), (60, "GST"), (200, "3.41")], 4),
    ]
    p = answer_with_ocr("What is the total amount?", words, vocabulary=vocab)
    assert p.answer == "60.30" and "'total rounded'" in p.reasoning[1]
    # without "total rounded" the plain total wins; "total gst" (a longer known phrase with a
    # low precision) decides its own line, never the shorter "total" inside it
    weak = [w for w in words if w.line != 2]
    assert answer_with_ocr("What is the total amount?", weak, vocabulary=vocab).answer == "60.31"


def test_total_label_model_ties_take_the_largest_and_unknown_labels_still_answer():
    vocab = _vocab(total=(5, 5))
    words = [
        *_line(0, [(0, "TOTAL"), (200, "13.80")], 0),
        *_line(20, [(0, "TOTAL"), (60, "POINTS:"), (200, "0.00")], 1),
    ]
    assert answer_with_ocr("What is the total?", words, vocabulary=vocab).answer == "13.80"
    only = _line(0, [(0, "SUBTOTAL:"), (200, "7.50")], 0)
    assert answer_with_ocr("What is the total?", only, vocabulary=vocab).answer == "7.50"


def test_address_skips_number_lines_and_takes_the_state_after_the_postcode():
    vocab = Vocabulary(
        derived_from="test",
        total_labels=(1, 1),
        total_phrases={},
        company_words=("sdn", "bhd"),
        address_end_words=("selangor",),
        address_stop_words=("tel",),
        skip_words=("reg",),
    )
    words = [
        *_line(0, [(100, "ACME"), (150, "SDN"), (190, "BHD")], 0),
        *_line(20, [(100, "789417-W")], 1),  # a number line: skipped
        *_line(40, [(100, "(CO."), (150, "RFG:"), (200, "860671-D)")], 2),  # bracket, digit
        *_line(60, [(100, "NO."), (140, "53,"), (180, "JALAN"), (240, "BESAR,")], 3),
        *_line(80, [(100, "45600"), (160, "BATANG")], 4),
        *_line(100, [(100, "SELANGOR"), (190, "DARUL"), (250, "EHSAN")], 5),
        *_line(120, [(100, "TEL:"), (150, "03-1234567")], 6),
    ]
    p = answer_with_ocr("What is the address?", words, vocabulary=vocab)
    assert p.answer == "NO. 53, JALAN BESAR, 45600 BATANG SELANGOR DARUL EHSAN"
    # without a state line after it, the postcode line ends the address
    no_state = [w for w in words if w.line != 5]
    p = answer_with_ocr("What is the address?", no_state, vocabulary=vocab)
    assert p.answer == "NO. 53, JALAN BESAR, 45600 BATANG"
    assert answer_with_ocr("Which company?", words, vocabulary=vocab).answer == "ACME SDN BHD"
