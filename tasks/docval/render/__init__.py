"""Seeded document renderer: receipts, invoices, forms, tables and statements with exact word
and answer boxes, distractors and degradation levels.

Every word is drawn on its own with Pillow, so its box is Pillow's ``textbbox`` of that word;
an answer's box is the union of its words' boxes. Fonts are the TrueType files that ship inside
matplotlib's wheel (DejaVu Sans, DejaVu Serif, DejaVu Sans Mono, STIX General), so the renderer
needs no system fonts and a given (seed, split, index) gives the same page on every machine with
the same Pillow and matplotlib.

Layouts (``LAYOUTS``): ``receipt_basic``, ``receipt_mono``, ``invoice_classic``,
``invoice_modern``, ``form_application``, ``form_boxed``, ``table_report``, ``statement``.
Distractors a careless reader confuses: subtotal / tax / cash beside the total, an invoice date
beside a due date, a bill-to beside a ship-to address, an opening beside a closing balance,
neighbouring table cells.

Degradation (``DEGRADATIONS``), applied after drawing: blur, Gaussian noise, rotation about the
page centre (word boxes rotated with the page and re-enclosed), low resolution (down- then
up-sampled, so coordinates are unchanged) and JPEG compression, stronger at each level.

One module per job: ``_page`` (fonts, the page, the document types), ``_content`` (names,
dates, amounts), ``_layouts`` (the layouts), ``_degrade`` (degradation); this module draws a
document with them.
"""

from __future__ import annotations

import random

from scorers.boxes import enclosing_box
from tasks.docval.render._degrade import DEGRADATIONS, Degradation, _rotate_box, degrade
from tasks.docval.render._layouts import LAYOUTS
from tasks.docval.render._page import (
    FONT_FAMILIES,
    RenderedDocument,
    RenderedQuestion,
    _Page,
    font_files,
)

__all__ = [
    "DEGRADATIONS",
    "FONT_FAMILIES",
    "LAYOUTS",
    "Degradation",
    "RenderedDocument",
    "RenderedQuestion",
    "degrade",
    "font_files",
    "render_document",
]


# --------------------------------------------------------------------------- entry point


def render_document(
    index: int,
    *,
    seed: int = 0,
    split: str = "test",
    degradation: Degradation = "none",
    layout: str | None = None,
    font: str | None = None,
) -> RenderedDocument:
    """Document ``index`` of a split: its layout cycles through ``LAYOUTS`` (so every 8
    consecutive documents cover all layouts), its font and content come from the seeded RNG."""
    rng = random.Random(f"docval-render:{seed}:{split}:{index}")
    names = list(LAYOUTS)
    layout = layout or names[index % len(names)]
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; expected one of {names}")
    font = font or sorted(FONT_FAMILIES)[rng.randrange(len(FONT_FAMILIES))]
    if font not in FONT_FAMILIES:
        raise ValueError(f"unknown font {font!r}; expected one of {sorted(FONT_FAMILIES)}")
    (width, height), draw = LAYOUTS[layout]
    page = _Page(width, height, font, rng)
    questions = draw(page, rng)
    image, words, angle = degrade(page.image, page.words, degradation, rng)
    if angle:  # the answer box is the union of its rotated word boxes, clipped to the page
        for q in questions:
            q.parts = [_rotate_box(b, angle, (width / 2, height / 2)) for b in q.parts]
            x1, y1, x2, y2 = enclosing_box(q.parts)
            q.box = (max(0.0, x1), max(0.0, y1), min(float(width), x2), min(float(height), y2))
    doc_id = f"{split}-{index:04d}"
    return RenderedDocument(doc_id, layout, font, degradation, image, words, questions)
