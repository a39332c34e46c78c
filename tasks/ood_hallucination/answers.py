"""Final-answer extraction and checking: a numeric answer or a multiple-choice letter."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Extracted", "answers_match", "extract_choice", "extract_number", "normalize_number"]

_NUM = r"-?\$?\d[\d,]*(?:\.\d+)?"
_ANSWER_IS_NUM = re.compile(r"answer\s*(?:is|:)\s*:?\s*\**\s*(" + _NUM + r")", re.IGNORECASE)
_ANY_NUM = re.compile(_NUM)
_ANSWER_IS_CHOICE = re.compile(r"answer\s*(?:is|:)\s*:?\s*\**\s*\(?([A-E])\b\)?", re.IGNORECASE)
_PAREN_CHOICE = re.compile(r"\(([A-E])\)")
_LINE_CHOICE = re.compile(r"(?:^|\s)([A-E])[).:](?=\s|$)")


@dataclass(frozen=True)
class Extracted:
    """The extracted answer (None when nothing parseable) and how it was found."""

    value: str | None
    how: str


def normalize_number(text: str) -> str | None:
    """'1,234.50' / '$7' / '12.' → canonical decimal string ('1234.5', '7', '12'); None if not a number."""
    t = text.strip().replace(",", "").replace("$", "").rstrip(".")
    try:
        f = Fraction(t)
    except (ValueError, ZeroDivisionError):
        return None
    if f.denominator == 1:
        return str(f.numerator)
    return repr(float(f))


def extract_number(output: str) -> Extracted:
    """'The answer is N' (last occurrence) if present, else the last number in the output."""
    hits = _ANSWER_IS_NUM.findall(output)
    if hits:
        return Extracted(normalize_number(hits[-1]), "answer_is")
    nums = _ANY_NUM.findall(output)
    if nums:
        return Extracted(normalize_number(nums[-1]), "last_number")
    return Extracted(None, "no_number")


def extract_choice(output: str) -> Extracted:
    """'The answer is (X)' if present, else the last '(X)', else the last 'X)' / 'X.' option label."""
    for pattern, how in (
        (_ANSWER_IS_CHOICE, "answer_is"),
        (_PAREN_CHOICE, "last_paren"),
        (_LINE_CHOICE, "last_label"),
    ):
        hits = pattern.findall(output)
        if hits:
            return Extracted(hits[-1].upper(), how)
    return Extracted(None, "no_choice")


def answers_match(extracted: str | None, target: str, answer_type: str) -> bool:
    if extracted is None:
        return False
    if answer_type == "number":
        gold = normalize_number(target)
        if gold is None:
            raise ValueError(f"target {target!r} is not a number")
        return Fraction(extracted) == Fraction(gold)
    if answer_type == "choice":
        return extracted.upper() == target.strip().upper()
    raise ValueError(f"unknown answer_type {answer_type!r}")
