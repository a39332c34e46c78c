"""The OCR baseline's receipt vocabulary: data derived from dev documents only (issue 29).

The answer rule (``_baseline.py``) reads receipts with four word lists and one label model, all
built by ``tasks/docval/vocabulary.py`` from the gold fields and gold lines of the **dev** split
(SROIE dev vendors and rendered dev documents) and committed as ``receipt_vocabulary.json``
beside this module. Nothing of a test vendor is read to build them; a test rebuilds the file
from dev and compares.

* ``total``: a label model for "which amount on the page is the total". Every amount (a number
  with two decimals) gets a *label*: the lower-cased letter tokens left of it on its row
  (``amount_candidates``). ``total_phrases`` holds every phrase of one to three consecutive
  label tokens seen in at least two dev sources, with how many dev labels holding it belong to
  an amount equal to the gold total (``pos``) and to another amount (``neg``). A candidate's
  score is the dev precision ``pos / (pos + neg)`` of the longest known phrase in its label (of
  equally long ones the lowest: "total gst" decides "total gst rm", not "total"); a label with
  no known phrase scores 0. The rule answers with the best-scoring amount; among equal scores
  the largest amount (a total includes its parts: "TOTAL POINTS 0.00" loses to "TOTAL 13.80"),
  then the lowest on the page.
* ``company_words``: tokens of the gold company names of at least two dev vendors ("sdn",
  "bhd", ...): the company is the first line near the head of the page that holds one.
* ``address_end_words``: tokens of the last gold line of the dev addresses (a state, a city)
  in at least two dev vendors: an address ends at a line holding one; after a line with a
  five-digit postcode only a line holding one is still taken.
* ``address_stop_words``: tokens that open the line right after the address in at least two dev
  vendors and occur in no dev address ("tel", "gst", ...): such a line ends the address before
  it.
* ``skip_words``: tokens of the lines between the company line and the address in at least two
  dev vendors, in no dev address ("co", "reg", ...): such a line is skipped before an address.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from methods.docval._text import Line, group_lines
from methods.docval._types import Word
from scorers.boxes import Box

__all__ = [
    "VOCABULARY_FILE",
    "AmountCandidate",
    "Vocabulary",
    "amount_candidates",
    "amount_value",
    "label_phrases",
    "label_tokens",
    "load_vocabulary",
]

VOCABULARY_FILE = Path(__file__).resolve().parent / "receipt_vocabulary.json"

AMOUNT = re.compile(
    r"(?<![\d.,])[-$]?\d{1,3}(?:,\d{3})*\. ?\d{2}(?!\d)|(?<![\d.,])[-$]?\d+\. ?\d{2}(?!\d)"
)
_TOKEN = re.compile(r"[a-z]{2,}")


PHRASE_MAX = 3


def label_tokens(text: str) -> list[str]:
    """The lower-cased letter runs of two or more letters in ``text`` (a label's tokens)."""
    return _TOKEN.findall(text.lower())


def label_phrases(tokens: Sequence[str]) -> set[str]:
    """Every run of 1 to ``PHRASE_MAX`` consecutive tokens, space-joined."""
    return {
        " ".join(tokens[i : i + n])
        for n in range(1, PHRASE_MAX + 1)
        for i in range(len(tokens) - n + 1)
    }


@dataclass(frozen=True)
class AmountCandidate:
    """One amount on the page with the label left of it on its row."""

    text: str  # as printed, spaces removed ("73. 00" -> "73.00")
    value: float
    box: Box
    line: Line
    tokens: tuple[str, ...]


def amount_value(text: str) -> float | None:
    """The number an amount string stands for ("1,234.50" -> 1234.5), None if it is none."""
    try:
        return float(text.replace(" ", "").replace(",", "").replace("$", "").lstrip("RMrm"))
    except ValueError:
        return None


def amount_candidates(
    words: Sequence[Word], lines: Sequence[Line] | None = None
) -> list[AmountCandidate]:
    """Every two-decimal amount on the page, top to bottom, with its row label: the tokens of
    its line left of it, after those of the words left of its line whose vertical centre lies
    within the amount's height (a label and its value are often separate OCR lines)."""
    lines = group_lines(words) if lines is None else lines
    out: list[AmountCandidate] = []
    for line in lines:
        for m in AMOUNT.finditer(line.text):
            text = m.group(0).replace(" ", "")
            value = amount_value(text)
            if value is None:
                continue
            box = line.span_box(m.start(), m.end())
            y1, y2 = box[1], box[3]
            left = sorted(
                (
                    w
                    for w in words
                    if y1 <= (w.box[1] + w.box[3]) / 2 <= y2
                    and w.box[2] <= line.box[0] + 2
                    and w not in line.words
                ),
                key=lambda w: w.box[0],
            )
            label = " ".join(w.text for w in left) + " " + line.text[: m.start()]
            out.append(AmountCandidate(text, value, box, line, tuple(label_tokens(label))))
    return out


def _words_pattern(words: Sequence[str]) -> re.Pattern[str]:
    """A case-insensitive whole-word pattern for ``words`` (never matches when empty)."""
    if not words:
        return re.compile(r"(?!x)x")
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))
    return re.compile(rf"(?<![a-z])({alternatives})(?![a-z])", re.IGNORECASE)


@dataclass(frozen=True)
class Vocabulary:
    """The receipt vocabulary (module docstring); ``derived_from`` says from what."""

    derived_from: str
    total_labels: tuple[int, int]  # (amounts equal to the gold total, other amounts) on dev
    total_phrases: Mapping[str, tuple[int, int]]  # "tok tok" -> (pos, neg) label counts
    company_words: tuple[str, ...]
    address_end_words: tuple[str, ...]
    address_stop_words: tuple[str, ...]
    skip_words: tuple[str, ...]

    def total_score(self, tokens: Sequence[str]) -> float:
        """The dev precision of the longest known phrase in a label (0 when none is known)."""
        best: tuple[int, float] | None = None
        for phrase in label_phrases(tokens):
            counts = self.total_phrases.get(phrase)
            if counts is None:
                continue
            precision = counts[0] / max(1, counts[0] + counts[1])
            key = (len(phrase.split()), -precision)
            if best is None or key > best:
                best = key
        return -best[1] if best is not None else 0.0

    @cached_property
    def company_pattern(self) -> re.Pattern[str]:
        return _words_pattern(self.company_words)

    @cached_property
    def address_end_pattern(self) -> re.Pattern[str]:
        return _words_pattern(self.address_end_words)

    @cached_property
    def address_stop_pattern(self) -> re.Pattern[str]:
        return _words_pattern(self.address_stop_words)

    @cached_property
    def skip_pattern(self) -> re.Pattern[str]:
        return _words_pattern(self.skip_words)

    def to_json(self) -> dict[str, Any]:
        return {
            "derived_from": self.derived_from,
            "total_labels": list(self.total_labels),
            "total_phrases": {k: list(v) for k, v in sorted(self.total_phrases.items())},
            "company_words": sorted(self.company_words),
            "address_end_words": sorted(self.address_end_words),
            "address_stop_words": sorted(self.address_stop_words),
            "skip_words": sorted(self.skip_words),
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], where: str = "vocabulary") -> Vocabulary:
        """A vocabulary from its JSON form; a missing or malformed key is an error naming it."""
        try:
            phrases = {str(k): (int(v[0]), int(v[1])) for k, v in raw["total_phrases"].items()}
            return cls(
                derived_from=str(raw["derived_from"]),
                total_labels=(int(raw["total_labels"][0]), int(raw["total_labels"][1])),
                total_phrases=phrases,
                company_words=tuple(str(w) for w in raw["company_words"]),
                address_end_words=tuple(str(w) for w in raw["address_end_words"]),
                address_stop_words=tuple(str(w) for w in raw["address_stop_words"]),
                skip_words=tuple(str(w) for w in raw["skip_words"]),
            )
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{where}: malformed receipt vocabulary ({exc!r})") from None


@cache
def load_vocabulary(path: Path = VOCABULARY_FILE) -> Vocabulary:
    """The committed receipt vocabulary (``receipt_vocabulary.json``)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FileNotFoundError(
            f"{path}: no receipt vocabulary ({exc.strerror}); build it with "
            "`python -m tasks.docval.vocabulary --write`"
        ) from None
    return Vocabulary.from_json(raw, str(path))
