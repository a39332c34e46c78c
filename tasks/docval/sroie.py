"""SROIE (ICDAR 2019) receipts: box files, key fields, and the answer box of each key field.

Layout under ``HARNESS_DATA_DIR/sroie``: ``img/NNN.jpg``, ``box/NNN.csv`` (one text line per row:
``x1,y1,x2,y2,x3,y3,x4,y4,transcript``; the transcript may contain commas, so a row is split on
its first eight commas only; CR, LF or CRLF line ends) and ``key/NNN.json`` (``company``,
``date``, ``address``, ``total``).

SROIE gives no box per key field, only per text line, so each field's answer box is found by
matching its value against the lines (``match_field``):

1. a run of 1–6 consecutive lines whose joined text equals the value up to white space and case
   with normalised Levenshtein similarity ≥ 0.8 → the union box of those lines (an address on
   several lines gets their union box);
2. the value inside one line, on character boundaries (e.g. "25/12/2018" in
   "DATE: 25/12/2018 8:13 PM") → that part of the line's box, cut by character share
   (similarity 1);
3. several equally good candidates (a total that also appears as an item price or as the cash
   tendered): for ``total`` those within 3 px of the height of a line holding "total" (not
   "sub"), else all; for the other fields all. The first (for totals the lowest) is the answer
   box; the others are kept as ``alternatives`` (the same total printed twice on "TOTAL" rows, a
   date at the head and the foot), and a prediction is scored against the one it overlaps most.

A field that matches nothing, or whose value is empty, becomes no question; every such field is
counted and listed (``SroieLoad.unmatched``), never dropped silently.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from rapidfuzz.distance import Levenshtein

from harness.hub import DatasetFormatError
from methods.docval import Word
from scorers.boxes import Box, enclosing_box

__all__ = [
    "SROIE_FIELDS",
    "SROIE_QUESTIONS",
    "DatasetFormatError",
    "FieldMatch",
    "SroieDocument",
    "SroieLine",
    "SroieLoad",
    "decoded_image_size",
    "load_sroie",
    "match_field",
    "parse_box_file",
]

SROIE_FIELDS = ("company", "date", "address", "total")
SROIE_QUESTIONS = {
    "company": "What is the name of the company that issued this receipt?",
    "date": "What is the date of this receipt?",
    "address": "What is the address of the company that issued this receipt?",
    "total": "What is the total amount of this receipt?",
}
_MIN_RUN_SIMILARITY = 0.8
_MAX_RUN = 6
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class SroieLine:
    box: Box
    text: str


@dataclass(frozen=True)
class FieldMatch:
    box: Box
    kind: str  # "lines" (whole lines) or "line_span" (part of one line, by character share)
    lines: tuple[int, ...]
    similarity: float
    candidates: int
    # every box as good as ``box`` (the same total printed twice on "TOTAL" rows, a date printed
    # at the head and the foot): a prediction is scored against the one it overlaps most
    alternatives: tuple[Box, ...] = ()


@dataclass
class SroieDocument:
    doc_id: str
    image: Path
    size: tuple[int, int]
    lines: list[SroieLine]
    key: dict[str, str]
    matches: dict[str, FieldMatch] = field(default_factory=dict)

    def words(self) -> list[Word]:
        """The annotated lines as "words" (one per line), for the gold-OCR option."""
        out = []
        for i, line in enumerate(self.lines):
            out.extend(_split_line_words(line, i))
        return out


@dataclass
class SroieLoad:
    documents: list[SroieDocument]
    unmatched: list[str]  # "NNN/field: reason"
    n_fields: int

    @property
    def n_matched(self) -> int:
        return sum(len(d.matches) for d in self.documents)


def _split_line_words(line: SroieLine, line_id: int) -> list[Word]:
    """Split an annotated line into words with boxes by character share (annotation granularity
    is the line; this gives the text-only prompt and VAL word-level regions)."""
    x1, y1, x2, y2 = line.box
    n = max(len(line.text), 1)
    words = []
    for m in re.finditer(r"\S+", line.text):
        a = x1 + (x2 - x1) * m.start() / n
        b = x1 + (x2 - x1) * m.end() / n
        if b > a:
            words.append(Word(m.group(0), (a, y1, b, y2), 1.0, line_id))
    return words


def parse_box_file(path: Path, image_size: tuple[int, int] | None = None) -> list[SroieLine]:
    """Rows ``x1,y1,...,y4,transcript`` → lines with axis-aligned boxes. A row that does not
    parse, or a box outside the image, raises ``DatasetFormatError`` naming file and line."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(f"{path}: not UTF-8 text ({exc})") from exc
    lines = []
    for number, row in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        if not row.strip():
            continue
        parts = row.split(",", 8)
        if len(parts) < 9:
            raise DatasetFormatError(
                f"{path}:{number}: expected 8 coordinates and a transcript separated by commas, "
                f"got {row!r}"
            )
        try:
            coords = [int(float(v)) for v in parts[:8]]
        except ValueError as exc:
            raise DatasetFormatError(f"{path}:{number}: non-numeric coordinate in {row!r}") from exc
        xs, ys = coords[0::2], coords[1::2]
        box = (float(min(xs)), float(min(ys)), float(max(xs)), float(max(ys)))
        if box[2] <= box[0] or box[3] <= box[1]:
            raise DatasetFormatError(f"{path}:{number}: degenerate box {coords} in {row!r}")
        if image_size is not None:
            w, h = image_size
            if box[0] < 0 or box[1] < 0 or box[2] > w or box[3] > h:
                raise DatasetFormatError(
                    f"{path}:{number}: box {coords} lies outside the {w}x{h} image"
                )
        lines.append(SroieLine(box, parts[8].strip()))
    return lines


def _compact(text: str) -> str:
    return _SPACE.sub("", text.lower())


def _similarity(a: str, b: str) -> float:
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - Levenshtein.distance(a, b) / longest


def _span_pattern(value: str) -> re.Pattern[str]:
    chars = [re.escape(c) for c in value.lower() if not c.isspace()]
    body = r"\s*".join(chars)
    first, last = value.strip()[0], value.strip()[-1]
    lead = r"(?<![\d.,])" if first.isdigit() else (r"(?<![a-z])" if first.isalpha() else "")
    tail = r"(?![\d])" if last.isdigit() else (r"(?![a-z])" if last.isalpha() else "")
    return re.compile(lead + body + tail)


def _line_span_box(line: SroieLine, start: int, end: int) -> Box:
    x1, y1, x2, y2 = line.box
    n = max(len(line.text), 1)
    return (x1 + (x2 - x1) * start / n, y1, x1 + (x2 - x1) * end / n, y2)


def match_field(name: str, value: str, lines: list[SroieLine]) -> FieldMatch | None:
    """The answer box of key field ``name`` with ``value`` (rules in the module docstring)."""
    target = _compact(value)
    if not target:
        return None
    candidates: list[tuple[float, Box, str, tuple[int, ...]]] = []
    for i in range(len(lines)):
        joined = ""
        for j in range(i, min(len(lines), i + _MAX_RUN)):
            joined += _compact(lines[j].text)
            sim = _similarity(joined, target)
            if sim >= _MIN_RUN_SIMILARITY:
                box = enclosing_box([ln.box for ln in lines[i : j + 1]])
                candidates.append((sim, box, "lines", tuple(range(i, j + 1))))
            if len(joined) > len(target) * 1.3 + 4:
                break
    if len(target) >= 3:  # short values ("9") would match inside too many lines
        pattern = _span_pattern(value)
        for i, line in enumerate(lines):
            for m in pattern.finditer(line.text.lower()):
                box = _line_span_box(line, m.start(), m.end())
                candidates.append((1.0, box, "line_span", (i,)))
    if not candidates:
        return None
    best = max(c[0] for c in candidates)
    top = [c for c in candidates if c[0] >= best - 1e-9]
    # the same lines found as a run and as themselves: keep one per box
    by_box: dict[Box, tuple[float, Box, str, tuple[int, ...]]] = {}
    for c in top:
        by_box.setdefault(c[1], c)
    unique = list(by_box.values())
    alternatives = unique
    if name == "total" and len(unique) > 1:
        labels = [
            ln.box for ln in lines if "total" in ln.text.lower() and "sub" not in ln.text.lower()
        ]
        if labels:

            def distance(c: tuple[float, Box, str, tuple[int, ...]]) -> float:
                cy = (c[1][1] + c[1][3]) / 2
                return min(abs(cy - (b[1] + b[3]) / 2) for b in labels)

            nearest = min(distance(c) for c in unique)
            alternatives = [c for c in unique if distance(c) <= nearest + 3.0]
        # the lowest of the equally good totals (a grand total sits below its parts)
        alternatives.sort(key=lambda c: -(c[1][1] + c[1][3]))
    sim, box, kind, idx = alternatives[0]
    return FieldMatch(box, kind, idx, sim, len(unique), tuple(c[1] for c in alternatives))


def decoded_image_size(path: Path, where: str) -> tuple[int, int]:
    """The image's (width, height) once it fully decodes; else ``DatasetFormatError`` at
    ``where``."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            img.verify()
        with Image.open(path) as img:
            return img.size
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise DatasetFormatError(f"{where}: not a decodable image ({exc})") from exc


def load_sroie(root: Path) -> SroieLoad:
    """Every receipt under ``root`` (img/, box/, key/), each key field matched to a box."""
    for sub in ("img", "box", "key"):
        if not (root / sub).is_dir():
            raise DatasetFormatError(f"{root}: missing folder {sub}/ (expected img/, box/, key/)")
    documents: list[SroieDocument] = []
    unmatched: list[str] = []
    n_fields = 0
    for key_path in sorted((root / "key").glob("*.json")):
        doc_id = key_path.stem
        image_path = root / "img" / f"{doc_id}.jpg"
        box_path = root / "box" / f"{doc_id}.csv"
        for p in (image_path, box_path):
            if not p.is_file():
                raise DatasetFormatError(f"{key_path}: its companion file {p} is missing")
        size = decoded_image_size(image_path, str(image_path))
        try:
            key = json.loads(key_path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise DatasetFormatError(f"{key_path}: not valid JSON ({exc})") from exc
        if not isinstance(key, dict):
            raise DatasetFormatError(f"{key_path}: expected a JSON object of key fields")
        lines = parse_box_file(box_path, size)
        doc = SroieDocument(doc_id, image_path, size, lines, {})
        for name in SROIE_FIELDS:
            n_fields += 1
            value = key.get(name)
            if not isinstance(value, str):
                raise DatasetFormatError(
                    f"{key_path}: field {name!r} must be a string, got {value!r}"
                )
            doc.key[name] = value
            if not value.strip():
                unmatched.append(f"{doc_id}/{name}: empty value in {key_path.name}")
                continue
            match = match_field(name, value, lines)
            if match is None:
                unmatched.append(f"{doc_id}/{name}: {value!r} matches no line of {box_path.name}")
                continue
            doc.matches[name] = match
        documents.append(doc)
    if not documents:
        raise DatasetFormatError(f"{root / 'key'}: no *.json key files")
    return SroieLoad(documents, unmatched, n_fields)
