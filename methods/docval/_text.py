"""Reading text out of word boxes: lines with character offsets, spans of words that spell a
string, the text a box covers, and sub-word boxes by character share."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from methods.docval._types import Word
from scorers.boxes import Box, enclosing_box

__all__ = [
    "Line",
    "compact",
    "find_text",
    "group_lines",
    "span_box",
    "text_in_box",
]

_SPACE = re.compile(r"\s+")


def compact(text: str) -> str:
    """Lower-case with all white space removed (how answers are compared to OCR text)."""
    return _SPACE.sub("", text.lower())


@dataclass(frozen=True)
class Line:
    """Words of one text line, left to right, with each word's start offset in ``text``."""

    words: tuple[Word, ...]
    text: str
    starts: tuple[int, ...]

    @property
    def box(self) -> Box:
        return enclosing_box([w.box for w in self.words])

    def span_box(self, start: int, end: int) -> Box:
        """The box of characters ``text[start:end]`` (word boxes, cut by character share)."""
        return span_box(self.words, self.starts, start, end)


def group_lines(words: Sequence[Word]) -> list[Line]:
    """Words grouped by their ``line`` id; lines ordered top to bottom, words left to right."""
    groups: dict[int, list[Word]] = {}
    for w in words:
        groups.setdefault(w.line, []).append(w)
    lines = []
    for ws in groups.values():
        ws = sorted(ws, key=lambda w: w.box[0])
        starts, pos = [], 0
        for w in ws:
            starts.append(pos)
            pos += len(w.text) + 1
        lines.append(Line(tuple(ws), " ".join(w.text for w in ws), tuple(starts)))
    lines.sort(key=lambda ln: (ln.box[1], ln.box[0]))
    return lines


def span_box(words: Sequence[Word], starts: Sequence[int], start: int, end: int) -> Box:
    """Box of the characters ``[start, end)`` of a line whose words begin at ``starts``: whole
    words inside the span, and the covered share of a word the span cuts (by character count)."""
    boxes = []
    for w, s in zip(words, starts, strict=True):
        e = s + len(w.text)
        lo, hi = max(start, s), min(end, e)
        if hi <= lo:
            continue
        x1, y1, x2, y2 = w.box
        n = max(len(w.text), 1)
        a = x1 + (x2 - x1) * (lo - s) / n
        b = x1 + (x2 - x1) * (hi - s) / n
        boxes.append((a, y1, b, y2))
    if not boxes:
        raise ValueError(f"characters [{start}, {end}) cover no word")
    return enclosing_box(boxes)


def find_text(text: str, words: Sequence[Word], max_words: int = 40) -> list[Box]:
    """Boxes of each minimal run of consecutive words (reading order) that spells ``text``
    (compared with ``compact``; a run may cross lines, as a multi-line address does)."""
    target = compact(text)
    if not target:
        return []
    ordered = [w for line in group_lines(words) for w in line.words]
    out: list[Box] = []
    for i in range(len(ordered)):
        joined = ""
        for j in range(i, min(len(ordered), i + max_words)):
            joined += compact(ordered[j].text)
            if target in joined:
                # minimal: the run must not still contain the target without its first word
                if target not in joined[len(compact(ordered[i].text)) :] or i == j:
                    out.append(enclosing_box([w.box for w in ordered[i : j + 1]]))
                break
            if len(joined) > len(target) + 64:
                break
    return out


def text_in_box(box: Box, words: Sequence[Word], min_share: float = 0.5) -> str:
    """The words whose area lies at least ``min_share`` inside ``box``, in reading order."""
    x1, y1, x2, y2 = box
    inside = []
    for w in words:
        wx1, wy1, wx2, wy2 = w.box
        iw = min(x2, wx2) - max(x1, wx1)
        ih = min(y2, wy2) - max(y1, wy1)
        area = (wx2 - wx1) * (wy2 - wy1)
        if iw > 0 and ih > 0 and area > 0 and iw * ih / area >= min_share:
            inside.append(w)
    return " ".join(line.text for line in group_lines(inside))
