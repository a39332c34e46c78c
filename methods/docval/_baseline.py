"""OCR baselines: answer a question with text and a box read from OCR words, no model.

The answer rule (``rule="rules"``), in order:

1. **Field.** The question names a field by keyword (``field_of_question``): total, subtotal,
   tax, due date, date, invoice number, phone, company, address; otherwise "generic".
2. **Total**: every two-decimal amount on the page with its row label (the letter tokens left
   of it on its row); the receipt vocabulary's label model (``_vocabulary.py``, derived from the
   dev split only) scores each label by the dev precision of the longest known phrase in it; the
   best-scoring amount wins (ties: the largest amount, then the lowest on the page).
3. **Other label-value fields** (subtotal, tax, dates, invoice number, phone, generic): find the
   lines holding one of the field's labels (e.g. "invoice date", "date"), skipping a line that
   also holds an excluded word. Labels of five or more letters may differ by one OCR misread.
   The value is the first token of the field's type (amount: a number with two decimals; date: a
   date pattern; id/phone: a token with digits; generic: any text) to the right of the label on
   its line, else on the same row (the rightmost amount), else on the next line below that
   overlaps the label; a label without a colon heads a box, so its value is looked for below
   first. The first labelled line with a value wins. A date with no labelled value falls back to
   the first date on the page.
4. **Company**: the first line in the top 40 % of the page that holds one of the vocabulary's
   company words (dev: "sdn", "bhd", "trading", ...); else the topmost line with at least three
   letters.
5. **Address**: after the line labelled "address"/"bill to" (value on the label's line to its
   right, then following lines), or else after the company line: consecutive lines, skipping
   before it registration lines (a bracket holding a digit, or a vocabulary skip word, with
   fewer than 12 letters) and number lines (fewer than 3 letters); a line holding a vocabulary
   stop word ("tel", "gst") stops it, a line holding an end word (a state) ends it, a line with
   a five-digit postcode ends it unless the next line holds an end word; at most five lines.
   The box is their union.

The answer box is the box of the answer's characters (word boxes, a word the answer only partly
covers cut by character share). No rule applies → an empty answer with the reason.

Trivial baselines for comparison: ``rule="largest_amount"`` answers every question with the
largest two-decimal number on the page (for totals the classic shortcut; cash tendered beats it);
``rule="first_line"`` answers with the topmost line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz.distance import Levenshtein

from methods.docval._text import Line, group_lines
from methods.docval._types import Prediction, Word
from methods.docval._vocabulary import Vocabulary, amount_candidates, load_vocabulary
from scorers.boxes import Box, enclosing_box

__all__ = [
    "BASELINE_RULES",
    "BaselineRule",
    "answer_with_ocr",
    "field_of_question",
]

BaselineRule = Literal["rules", "largest_amount", "first_line"]
BASELINE_RULES: tuple[BaselineRule, ...] = ("rules", "largest_amount", "first_line")

_AMOUNT = re.compile(
    r"(?<![\d.,])[-$]?\d{1,3}(?:,\d{3})*\. ?\d{2}(?!\d)|(?<![\d.,])[-$]?\d+\. ?\d{2}(?!\d)"
)
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE = re.compile(
    r"\b\d{1,2}[/.\-]\d{1,2}[/.\-]\d{2,4}\b"
    r"|\b\d{4}[/.\-]\d{1,2}[/.\-]\d{1,2}\b"
    rf"|\b\d{{1,2}}[ \-]?{_MONTHS}[ \-,]*\d{{2,4}}\b"
    rf"|\b{_MONTHS} \d{{1,2}},? \d{{4}}\b",
    re.IGNORECASE,
)
_ID = re.compile(r"[A-Za-z#]*[-/]?\d[\w\-/]*")
_PHONE = re.compile(r"\+?\(?\d[\d\s\-()]{5,}\d")
_ANY = re.compile(r"\S(?:.*\S)?")
# structural patterns (not words): a registration number in brackets ("(001451637-M)"), a
# five-digit postcode; the words around them come from the receipt vocabulary (_vocabulary.py)
_REG_NUMBER = re.compile(r"\([^)]*\d[^)]*\)")
_POSTCODE = re.compile(r"\b\d{5}\b")


@dataclass(frozen=True)
class _Field:
    labels: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    value: Literal["amount", "date", "id", "phone", "any"] = "any"
    prefer: Literal["first", "last"] = "first"
    # weaker labels, tried only when no line holds one of ``labels``
    fallback_labels: tuple[str, ...] = ()


_FIELDS: dict[str, _Field] = {
    "subtotal": _Field(("subtotal", "sub total", "sub-total"), (), "amount"),
    "tax": _Field(("tax", "gst", "vat", "sst"), ("excl", "incl", "id", "reg", "no"), "amount"),
    "due_date": _Field(("due date", "payment due", "due"), (), "date"),
    "date": _Field(("invoice date", "issue date", "date"), ("due", "birth"), "date"),
    "invoice_number": _Field(
        (
            "invoice no",
            "invoice number",
            "invoice #",
            "inv no",
            "receipt no",
            "bill no",
            "order no",
        ),
        (),
        "id",
    ),
    "phone": _Field(("tel", "phone", "telephone"), ("fax",), "phone"),
    "account_number": _Field(("account no", "account number", "acct no", "account"), (), "id"),
    "period_start": _Field(("period from", "from", "start date"), (), "date"),
    "period_end": _Field(("period to", "to", "end date"), (), "date"),
    "opening_balance": _Field(("opening balance", "balance brought forward"), (), "amount"),
    "closing_balance": _Field(("closing balance", "balance carried forward"), (), "amount"),
}
_VALUE_RE = {"amount": _AMOUNT, "date": _DATE, "id": _ID, "phone": _PHONE, "any": _ANY}


def field_of_question(question: str) -> str:
    """The field a question asks for, from its keywords ("generic" when none matches)."""
    q = question.lower()
    if _quoted(question):
        return "generic"
    if re.search(r"\bin the \S+ column\b", q):
        return "table"
    if re.search(r"sub[\s\-]?total", q):
        return "subtotal"
    for name in ("opening balance", "closing balance", "account number"):
        if name in q:
            return name.replace(" ", "_")
    if re.search(r"period (start|begin)", q):
        return "period_start"
    if re.search(r"period end", q):
        return "period_end"
    if "due date" in q or "payment due" in q:
        return "due_date"
    if re.search(r"\b(total|amount due|grand total|balance due)\b", q):
        return "total"
    if re.search(r"\b(tax|gst|vat)\b", q):
        return "tax"
    if "invoice number" in q or "invoice no" in q or "receipt number" in q:
        return "invoice_number"
    if re.search(r"\b(phone|telephone|tel)\b", q):
        return "phone"
    if "address" in q:
        return "address"
    if re.search(r"\b(company|store|vendor|seller|merchant|shop|bank|issued)\b", q):
        return "company"
    if re.search(r"\bdate\b", q) and "birth" not in q:
        return "date"
    return "generic"


def _quoted(question: str) -> str | None:
    quoted = re.search(r"(?:^|\s)['\"‘“]([^'\"’”]+)['\"’”]", question)
    return quoted.group(1).strip() if quoted else None


def _label_of_generic(question: str) -> str:
    """The label a generic question quotes ('...' or "...") or names after "the"."""
    quoted = _quoted(question)
    if quoted:
        return quoted
    q = re.sub(r"[?.!]+$", "", question.strip())
    q = re.sub(
        r"^(what|which|who|when|where)\s+(is|are|was|were)\s+(the\s+)?(value\s+of\s+(the\s+)?)?",
        "",
        q,
        flags=re.IGNORECASE,
    )
    q = re.sub(r"\s+(on|in|of)\s+(this|the)\s+\w+$", "", q, flags=re.IGNORECASE)
    return q.strip()


def _contains_word(text: str, phrase: str) -> int:
    """Index where ``phrase`` starts in ``text`` as whole words (case-insensitive), or -1.
    Words of five or more letters may differ by one edit (OCR misreads: "Tatal" for "Total")."""
    low = text.lower()
    m = re.search(r"(?<![a-z])" + re.escape(phrase.lower()) + r"(?![a-z])", low)
    if m is not None:
        return m.start()
    wanted = phrase.lower().split()
    tokens = [(t.start(), t.group(0)) for t in re.finditer(r"[a-z]+", low)]
    for i in range(len(tokens) - len(wanted) + 1):
        if all(
            tok == want or (len(want) >= 5 and Levenshtein.distance(tok, want) <= 1)
            for (_, tok), want in zip(tokens[i : i + len(wanted)], wanted, strict=True)
        ):
            return tokens[i][0]
    return -1


def _value_after(line: Line, start: int, kind: str, last: bool = False) -> tuple[str, Box] | None:
    """The first (``last``: the rightmost) value of ``kind`` in ``line.text`` from ``start``."""
    pattern = _VALUE_RE[kind]
    rest = line.text[start:]
    if kind == "any":
        rest_stripped = rest.lstrip(" :#-.\t")
        offset = start + (len(rest) - len(rest_stripped))
        m = pattern.search(rest_stripped)
        if not m:
            return None
        return m.group(0), line.span_box(offset + m.start(), offset + m.end())
    matches = list(pattern.finditer(rest))
    if not matches:
        return None
    m = matches[-1] if last else matches[0]
    text = m.group(0).strip()
    lead = len(m.group(0)) - len(m.group(0).lstrip())
    a = start + m.start() + lead
    box = line.span_box(a, a + len(text))
    if kind == "amount":  # OCR splits "73.00" as "73. 00": amounts are written without spaces
        text = text.replace(" ", "")
    return text, box


def _row_right_of(words: Sequence[Word], box: Box) -> Line | None:
    """The words right of ``box`` whose vertical centre lies within its height, as one line
    (OCR engines often split a label and its value into separate lines or blocks)."""
    x1, y1, x2, y2 = box
    row = [w for w in words if y1 <= (w.box[1] + w.box[3]) / 2 <= y2 and w.box[0] >= x2 - 2]
    if not row:
        return None
    return group_lines([Word(w.text, w.box, w.conf, 0) for w in row])[0]


def _line_below(lines: Sequence[Line], box: Box) -> Line | None:
    """The next line below ``box`` that overlaps it horizontally."""
    x1, _, x2, y2 = box
    for line in lines:
        lx1, ly1, lx2, _ = line.box
        if ly1 >= y2 - 2 and min(x2, lx2) - max(x1, lx1) > 0:
            return line
    return None


def _label_value(
    lines: Sequence[Line],
    words: Sequence[Word],
    labels: Sequence[str],
    exclude: Sequence[str],
    kind: str,
    prefer: str,
) -> tuple[str, Box, str] | None:
    found: list[tuple[str, Box, str]] = []
    for line in lines:
        low = line.text.lower()
        if any(x in low for x in exclude):
            continue
        for label in labels:
            at = _contains_word(low, label)
            if at < 0:
                continue
            end = at + len(label)
            label_box = line.span_box(at, min(end, len(line.text)))
            # A free-text value follows its label on the same line when the label ends with a
            # colon ("Full Name: ..."); a label without one heads a box with the value below.
            below_first = kind == "any" and not line.text[end:].lstrip().startswith(":")
            value, how = None, ""
            for where in (
                ("next line", "line", "row") if below_first else ("line", "row", "next line")
            ):
                if where == "line":
                    value = _value_after(line, end, kind)
                elif where == "row":
                    # amounts on a row are right-aligned: take the rightmost (a stray
                    # detection between label and value must not win)
                    row = _row_right_of(words, label_box)
                    value = _value_after(row, 0, kind, last=kind == "amount") if row else None
                else:
                    below = _line_below(lines, label_box)
                    value = _value_after(below, 0, kind) if below is not None else None
                if value is not None:
                    place = {"line": "to its right", "row": "on the same row"}.get(
                        where, "on the next line"
                    )
                    how = f"label {label!r} on line {line.text!r}; value {place}"
                    break
            if value is not None:
                found.append((value[0], value[1], how))
                break
    if not found:
        return None
    return found[-1] if prefer == "last" else found[0]


def _table_cell(
    lines: Sequence[Line], words: Sequence[Word], row_label: str, column: str
) -> tuple[str, Box, str] | None:
    """The cell in the row labelled ``row_label`` under the column header ``column``."""
    header = row = None
    for line in lines:
        if header is None:
            at = _contains_word(line.text, column)
            if at >= 0:
                header = line.span_box(at, at + len(column))
        if row is None and _contains_word(line.text, row_label) >= 0:
            at = _contains_word(line.text, row_label)
            row = line.span_box(at, at + len(row_label))
    if header is None or row is None:
        return None
    cells = [
        w for w in words if row[1] <= (w.box[1] + w.box[3]) / 2 <= row[3] and w.box[0] > row[2]
    ]
    if not cells:
        return None
    hx = (header[0] + header[2]) / 2
    best = min(
        cells, key=lambda w: abs((w.box[0] + w.box[2]) / 2 - hx) + 0.5 * abs(w.box[2] - header[2])
    )
    return best.text, best.box, f"row {row_label!r}, cell nearest the column header {column!r}"


def _first_match(lines: Sequence[Line], kind: str) -> tuple[str, Box, str] | None:
    for line in lines:
        value = _value_after(line, 0, kind)
        if value is not None:
            return value[0], value[1], f"first {kind} on the page, line {line.text!r}"
    return None


def _letters(text: str) -> int:
    return sum(c.isalpha() for c in text)


def _company(
    lines: Sequence[Line], page_height: float, vocab: Vocabulary
) -> tuple[str, Box, str] | None:
    top = [ln for ln in lines if ln.box[1] < 0.4 * page_height]
    for line in top:
        if vocab.company_pattern.search(line.text):
            return (
                line.text,
                line.box,
                f"first line near the head of the page with a company word: {line.text!r}",
            )
    for line in lines:
        if _letters(line.text) >= 3:
            return line.text, line.box, f"first line with letters: {line.text!r}"
    return None


def _address(
    lines: Sequence[Line],
    words: Sequence[Word],
    question: str,
    page_height: float,
    vocab: Vocabulary,
) -> tuple[str, Box, str] | None:
    q = question.lower()
    labels = (
        ("ship to", "shipping address")
        if "ship" in q
        else ("bill to", "billing address", "address")
        if "bill" in q
        else ("address",)
    )
    skip_name = any(k in q for k in ("bill", "ship", "holder", "customer"))
    anchor: Box | None = None
    parts: list[str] = []
    boxes: list[Box] = []
    for line in lines:
        for label in labels:
            at = _contains_word(line.text, label)
            if at < 0:
                continue
            end = at + len(label)
            anchor = line.span_box(at, end)
            rest = line.text[end:].lstrip(" :")
            if rest:
                off = len(line.text) - len(rest)
                parts.append(rest)
                boxes.append(line.span_box(off, len(line.text)))
            how = f"lines under the label {label!r}"
            break
        if anchor is not None:
            break
    if anchor is None:
        company = _company(lines, page_height, vocab)
        if company is None:
            return None
        anchor = company[1]
        how = f"lines under the company line {company[0]!r}"
    # the anchor's column: from its left edge to the next text on its row (another column)
    x_lo = anchor[0] - 15
    right = [
        w.box[0]
        for w in words
        if anchor[1] <= (w.box[1] + w.box[3]) / 2 <= anchor[3] and w.box[0] > anchor[2] + 40
    ]
    x_hi = min(right) if right else float("inf")
    # lines below the anchor that overlap it horizontally and start before the next column
    below = [
        ln
        for ln in lines
        if ln.box[1] >= anchor[3] - 2 and ln.box[0] < min(anchor[2], x_hi) and ln.box[2] > x_lo
    ]
    last_y = anchor[3]
    ended = False  # the postcode line was taken
    for line in below:
        height = line.box[3] - line.box[1]
        if (
            len(parts) >= 5
            or vocab.address_stop_pattern.search(line.text)
            or line.box[1] - last_y > 4 * height
        ):
            break
        registration = _REG_NUMBER.search(line.text) or vocab.skip_pattern.search(line.text)
        # before the address: a registration line, or a number line (fewer than 3 letters)
        if not parts and ((registration and _letters(line.text) < 12) or _letters(line.text) < 3):
            last_y = line.box[3]
            continue
        if not parts and skip_name and not any(c.isdigit() for c in line.text):
            last_y = line.box[3]
            continue
        if ended and not vocab.address_end_pattern.search(line.text):
            break  # after the postcode only a line naming a state or city belongs to it
        parts.append(line.text)
        boxes.append(line.box)
        last_y = line.box[3]
        if ended or vocab.address_end_pattern.search(line.text):
            break
        ended = bool(_POSTCODE.search(line.text))
    if not parts:
        return None
    return " ".join(parts), enclosing_box(boxes), how


def _total(
    lines: Sequence[Line], words: Sequence[Word], vocab: Vocabulary
) -> tuple[str, Box, str] | None:
    """The amount whose row label the vocabulary's label model scores highest (ties: the
    largest amount, then the lowest on the page)."""
    candidates = amount_candidates(words, lines)
    if not candidates:
        return None
    scored = [(vocab.total_score(c.tokens), c.value, c.box[1], i) for i, c in enumerate(candidates)]
    score, _, _, best = max(scored)
    c = candidates[best]
    label = " ".join(c.tokens) or "(no label)"
    return (
        c.text,
        c.box,
        f"amount with the row label {label!r} (dev precision of its label {score:.2f})",
    )


def _largest_amount(lines: Sequence[Line]) -> tuple[str, Box, str] | None:
    best: tuple[float, str, Box] | None = None
    for line in lines:
        for m in _AMOUNT.finditer(line.text):
            text = m.group(0).replace(" ", "")
            value = float(text.replace(",", "").lstrip("$"))
            if best is None or value > best[0]:
                best = (value, text, line.span_box(m.start(), m.end()))
    if best is None:
        return None
    return best[1], best[2], "largest two-decimal number on the page"


def answer_with_ocr(
    question: str,
    words: Sequence[Word],
    *,
    rule: BaselineRule = "rules",
    page_height: float | None = None,
    vocabulary: Vocabulary | None = None,
) -> Prediction:
    """The baseline's answer, box and a reasoning trace naming the rule that fired.
    ``vocabulary``: the receipt vocabulary (default: the committed one, built on dev)."""
    vocab = vocabulary or load_vocabulary()
    lines = group_lines(words)
    if page_height is None:
        page_height = max((w.box[3] for w in words), default=1.0)
    field = field_of_question(question)
    result: tuple[str, Box, str] | None
    if rule == "largest_amount":
        result = _largest_amount(lines)
    elif rule == "first_line":
        result = (lines[0].text, lines[0].box, "first line of the page") if lines else None
    elif rule != "rules":
        raise ValueError(f"unknown baseline rule {rule!r}; expected one of {BASELINE_RULES}")
    elif field == "total":
        result = _total(lines, words, vocab)
    elif field == "company":
        result = _company(lines, page_height, vocab)
    elif field == "address":
        result = _address(lines, words, question, page_height, vocab)
    elif field == "table":
        m = re.search(r"for (.+?) in the (\S+) column", question, re.IGNORECASE)
        result = _table_cell(lines, words, m.group(1), m.group(2)) if m else None
    elif field == "generic":
        label = _label_of_generic(question)
        result = _label_value(lines, words, [label], (), "any", "first") if label else None
    else:
        spec = _FIELDS[field]
        result = _label_value(lines, words, spec.labels, spec.exclude, spec.value, spec.prefer)
        if result is None and spec.fallback_labels:
            result = _label_value(
                lines, words, spec.fallback_labels, spec.exclude, spec.value, spec.prefer
            )
        if result is None and spec.value == "date":
            result = _first_match(lines, "date")
    if result is None:
        return Prediction(
            answer="",
            bbox=None,
            reasoning=[f"Field: {field}. No OCR text matched the rule '{rule}'."],
            failure=f"no answer: rule '{rule}' found nothing for field '{field}'",
        )
    text, box, how = result
    coords = [int(round(v)) for v in box]
    reasoning = [
        f"Question asks for the {field.replace('_', ' ')} field.",
        f"Locate the text region: {how}.",
        f"Extract the answer value: {text!r}.",
        f"Bounding box of the answer text: {coords}.",
    ]
    return Prediction(answer=text, bbox=box, reasoning=reasoning)
