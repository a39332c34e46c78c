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
"""

from __future__ import annotations

import io
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from methods.docval.types import Word
from scorers.boxes import Box, enclosing_box

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

Degradation = Literal["none", "low", "medium", "high"]
DEGRADATIONS: tuple[Degradation, ...] = ("none", "low", "medium", "high")
FONT_FAMILIES: dict[str, tuple[str, str]] = {
    "dejavu_sans": ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf"),
    "dejavu_serif": ("DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf"),
    "dejavu_mono": ("DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf"),
    "stix": ("STIXGeneral.ttf", "STIXGeneralBol.ttf"),
}
_LEVELS: dict[str, dict[str, float]] = {
    "none": {"blur": 0.0, "noise": 0.0, "rotate": 0.0, "scale": 1.0, "jpeg": 0},
    "low": {"blur": 0.5, "noise": 8.0, "rotate": 0.7, "scale": 0.8, "jpeg": 80},
    "medium": {"blur": 1.0, "noise": 18.0, "rotate": 1.5, "scale": 0.6, "jpeg": 45},
    "high": {"blur": 1.5, "noise": 30.0, "rotate": 2.5, "scale": 0.45, "jpeg": 25},
}


def font_files() -> Path:
    """The folder of TrueType fonts inside matplotlib's wheel."""
    import matplotlib

    folder = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    missing = [f for pair in FONT_FAMILIES.values() for f in pair if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(f"fonts missing from {folder}: {missing} (reinstall matplotlib)")
    return folder


@dataclass
class RenderedQuestion:
    question: str
    answers: list[str]
    box: Box
    field: str
    distractor: str = ""  # what a careless reader would answer instead
    parts: list[Box] = field(default_factory=list)  # the answer's word boxes


@dataclass
class RenderedDocument:
    doc_id: str
    layout: str
    font: str
    degradation: Degradation
    image: Any  # PIL.Image.Image
    words: list[Word]
    questions: list[RenderedQuestion] = field(default_factory=list)

    def png_bytes(self) -> bytes:
        buffer = io.BytesIO()
        self.image.save(buffer, format="PNG", optimize=False)
        return buffer.getvalue()


class _Page:
    """A white page that records the exact box of every word it draws."""

    def __init__(self, width: int, height: int, family: str, rng: random.Random) -> None:
        from PIL import Image, ImageDraw

        self.width, self.height, self.rng = width, height, rng
        self.image = Image.new("RGB", (width, height), "white")
        self.draw = ImageDraw.Draw(self.image)
        self.folder = font_files()
        self.family = family
        self.words: list[Word] = []
        self._fonts: dict[tuple[int, bool], Any] = {}
        self._line = 0

    def font(self, size: int, bold: bool = False) -> Any:
        from PIL import ImageFont

        key = (size, bold)
        if key not in self._fonts:
            regular, heavy = FONT_FAMILIES[self.family]
            self._fonts[key] = ImageFont.truetype(
                str(self.folder / (heavy if bold else regular)), size
            )
        return self._fonts[key]

    def width_of(self, text: str, size: int, bold: bool = False) -> float:
        return float(self.font(size, bold).getlength(text))

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: int = 18,
        bold: bool = False,
        align: Literal["left", "right", "center"] = "left",
        new_line: bool = True,
    ) -> list[Word]:
        """Draw ``text`` word by word from (x, y) (the right edge for align="right"); returns
        the words drawn with their exact boxes. Each call is one text line (its own line id);
        ``new_line=False`` only documents that the text shares a row with the previous one."""
        font = self.font(size, bold)
        total = font.getlength(text)
        if align == "right":
            x -= total
        elif align == "center":
            x -= total / 2
        del new_line  # a row of separate columns is several lines, as OCR engines see it
        self._line += 1
        space = font.getlength(" ")
        drawn = []
        for token in text.split(" "):
            if token:
                self.draw.text((x, y), token, font=font, fill="black")
                box = self.draw.textbbox((x, y), token, font=font)
                word = Word(token, tuple(float(v) for v in box), 1.0, self._line)  # type: ignore[arg-type]
                self.words.append(word)
                drawn.append(word)
                x += font.getlength(token)
            x += space
        return drawn

    def rule(self, x1: float, y: float, x2: float, width: int = 1) -> None:
        self.draw.line([(x1, y), (x2, y)], fill="black", width=width)

    def rect(self, box: Sequence[float], width: int = 1) -> None:
        self.draw.rectangle(list(box), outline="black", width=width)


def _box(words: Sequence[Word]) -> Box:
    return enclosing_box([w.box for w in words])


# --------------------------------------------------------------------------- content


_COMPANY_A = [
    "Northwind",
    "Bluebird",
    "Silver Oak",
    "Riverside",
    "Golden Gate",
    "Maple Leaf",
    "Harbor Point",
    "Summit",
    "Crescent",
    "Evergreen",
    "Pioneer",
    "Redwood",
    "Lakeside",
    "Sunrise",
    "Granite",
    "Copper Hill",
]
_COMPANY_B = [
    "Trading Co.",
    "Supplies Ltd",
    "Hardware",
    "Bakery",
    "Market",
    "Stationers",
    "Enterprise",
    "Holdings Inc",
    "Logistics LLC",
    "Foods Sdn Bhd",
    "Pharmacy",
    "Cafe",
]
_FIRST = [
    "Alice",
    "Brian",
    "Chen",
    "Diana",
    "Emeka",
    "Farah",
    "Goran",
    "Hana",
    "Ivan",
    "Julia",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
]
_LAST = [
    "Anders",
    "Baker",
    "Costa",
    "Dubois",
    "Evans",
    "Fischer",
    "Garcia",
    "Haddad",
    "Ito",
    "Jensen",
    "Kowalski",
    "Lopez",
    "Moreau",
    "Nakamura",
    "Okafor",
    "Patel",
    "Rossi",
    "Silva",
]
_STREETS = [
    "Oak Street",
    "Maple Avenue",
    "High Road",
    "Elm Lane",
    "Park Drive",
    "River Road",
    "Hill Crescent",
    "Station Road",
    "Church Street",
    "Market Square",
    "Cedar Way",
]
_CITIES = [
    ("Springfield", "IL", "62701"),
    ("Riverton", "WY", "82501"),
    ("Fairview", "TN", "37062"),
    ("Georgetown", "TX", "78626"),
    ("Madison", "WI", "53703"),
    ("Salem", "OR", "97301"),
    ("Ashland", "KY", "41101"),
    ("Clinton", "MS", "39056"),
    ("Dover", "DE", "19901"),
]
_ITEMS = [
    "Paper A4 ream",
    "Stapler",
    "Blue pens (10)",
    "Coffee beans 1kg",
    "Printer toner",
    "Desk lamp",
    "USB cable",
    "Notebook",
    "Tea bags (50)",
    "Batteries AA",
    "Whiteboard marker",
    "Envelopes (25)",
    "Hand soap",
    "Water bottle",
    "Cleaning cloth",
    "Scissors",
]
_REGIONS = ["North", "South", "East", "West", "Central", "Coastal"]
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _company(rng: random.Random) -> str:
    return f"{rng.choice(_COMPANY_A)} {rng.choice(_COMPANY_B)}"


def _person(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"


def _address(rng: random.Random) -> tuple[str, str]:
    city, state, zipcode = rng.choice(_CITIES)
    return f"{rng.randint(1, 980)} {rng.choice(_STREETS)}", f"{city}, {state} {zipcode}"


def _date(rng: random.Random, style: int) -> tuple[str, tuple[int, int, int]]:
    y, m, d = rng.randint(2015, 2025), rng.randint(1, 12), rng.randint(1, 28)
    text = [
        f"{d:02d}/{m:02d}/{y}",
        f"{y}-{m:02d}-{d:02d}",
        f"{m:02d}/{d:02d}/{y}",
        f"{d:02d}-{_MONTHS[m - 1]}-{y}",
    ][style % 4]
    return text, (y, m, d)


def _later(rng: random.Random, ymd: tuple[int, int, int], style: int) -> str:
    y, m, d = ymd
    m += rng.randint(1, 2)
    if m > 12:
        y, m = y + 1, m - 12
    d = rng.randint(1, 28)
    return [
        f"{d:02d}/{m:02d}/{y}",
        f"{y}-{m:02d}-{d:02d}",
        f"{m:02d}/{d:02d}/{y}",
        f"{d:02d}-{_MONTHS[m - 1]}-{y}",
    ][style % 4]


def _money(value: float) -> str:
    return f"{value:,.2f}"


def _phone(rng: random.Random) -> str:
    return f"({rng.randint(200, 989)}) {rng.randint(200, 989)}-{rng.randint(1000, 9999)}"


def _items(rng: random.Random, n: int) -> list[tuple[str, int, float]]:
    names = rng.sample(_ITEMS, n)
    return [(name, rng.randint(1, 5), round(rng.uniform(1.5, 90.0), 2)) for name in names]


# --------------------------------------------------------------------------- layouts


def _q(
    question: str, answer: str, words: Sequence[Word], fld: str, distractor: str = ""
) -> RenderedQuestion:
    return RenderedQuestion(
        question, [answer], _box(words), fld, distractor, [w.box for w in words]
    )


def _receipt(page: _Page, rng: random.Random, mono: bool) -> list[RenderedQuestion]:
    w = page.width
    size = 17 if mono else 18
    y = 30.0
    company = _company(rng)
    cw = page.text(w / 2, y, company.upper(), 24, True, "center")
    y += 40
    street, city = _address(rng)
    a1 = page.text(w / 2, y, street, size, align="center")
    y += 26
    a2 = page.text(w / 2, y, city, size, align="center")
    y += 26
    phone = _phone(rng)
    page.text(w / 2 - 60, y, "Tel:", size, align="right")
    pw = page.text(w / 2 - 50, y, phone, size, new_line=False)
    y += 40
    date, _ = _date(rng, rng.randint(0, 3))
    page.text(40, y, "Date:", size)
    dw = page.text(110, y, date, size, new_line=False)
    time_text = f"{rng.randint(8, 21):02d}:{rng.randint(0, 59):02d}"
    page.text(w - 40, y, time_text, size, align="right", new_line=False)
    y += 26
    page.text(40, y, f"Receipt No: R{rng.randint(10000, 99999)}", size)
    y += 34
    page.rule(30, y, w - 30)
    y += 12
    items = _items(rng, rng.randint(3, 6))
    subtotal = 0.0
    for name, qty, price in items:
        amount = qty * price
        subtotal += amount
        page.text(40, y, f"{qty} x {name}", size)
        page.text(w - 40, y, _money(amount), size, align="right", new_line=False)
        y += 26
    page.rule(30, y + 4, w - 30)
    y += 16
    rate = rng.choice([0.05, 0.06, 0.08, 0.1])
    tax = round(subtotal * rate, 2)
    total = round(subtotal + tax, 2)
    cash = float(math.ceil(total / 10.0) * 10 + rng.choice([0, 10, 50]))
    change = round(cash - total, 2)
    total_label = "AMOUNT DUE" if mono else "TOTAL"
    rows: dict[str, list[Word]] = {}
    for label, value, bold in [
        ("SUBTOTAL", subtotal, False),
        (f"TAX {int(rate * 100)}%", tax, False),
        (total_label, total, True),
        ("CASH", cash, False),
        ("CHANGE", change, False),
    ]:
        page.text(40, y, label, size + (2 if bold else 0), bold)
        rows[label.split()[0]] = page.text(
            w - 40, y, _money(value), size + (2 if bold else 0), bold, "right", new_line=False
        )
        y += 30 if bold else 26
    y += 20
    page.text(w / 2, y, "THANK YOU, PLEASE COME AGAIN", size - 2, align="center")
    tq = "What is the amount due?" if mono else "What is the total amount of this receipt?"
    return [
        _q(tq, _money(total), rows[total_label.split()[0]], "total", _money(cash)),
        _q("What is the subtotal?", _money(subtotal), rows["SUBTOTAL"], "subtotal", _money(total)),
        _q("How much tax was charged?", _money(tax), rows["TAX"], "tax"),
        _q("What is the date of this receipt?", date, dw, "date"),
        _q(
            "What is the name of the store that issued this receipt?",
            company.upper(),
            cw,
            "company",
        ),
        _q("What is the address of the store?", f"{street} {city}", a1 + a2, "address"),
        _q("What is the phone number of the store?", phone, pw, "phone"),
    ]


def _invoice(page: _Page, rng: random.Random, modern: bool) -> list[RenderedQuestion]:
    w = page.width
    size = 17
    company = _company(rng)
    street, city = _address(rng)
    y = 40.0
    cw = page.text(50, y, company, 26, True)
    page.text(w - 50, y, "INVOICE", 30, True, "right")
    y += 44
    page.text(50, y, street, size)
    y += 24
    page.text(50, y, city, size)
    y += 24
    page.text(50, y, f"Phone: {_phone(rng)}", size)
    style = rng.randint(0, 3)
    inv_date, ymd = _date(rng, style)
    due_date = _later(rng, ymd, style)
    inv_no = f"INV-{rng.randint(1000, 99999)}"
    meta_y = 100.0 if not modern else y + 50
    if modern:
        # one row: Invoice No | Issue Date | Due Date
        xs = [50, 330, 610]
        labels = ["Invoice No.", "Issue Date", "Due Date"]
        values = [inv_no, inv_date, due_date]
        got = []
        for x, label, value in zip(xs, labels, values, strict=True):
            page.text(x, meta_y, label, size - 1, True)
            got.append(page.text(x, meta_y + 24, value, size))
        inv_w, date_w, due_w = got
        y = meta_y + 80
        date_q = "What is the issue date of this invoice?"
    else:
        lx, vx = w - 330, w - 50
        page.text(lx, meta_y, "Invoice No:", size)
        inv_w = page.text(vx, meta_y, inv_no, size, align="right", new_line=False)
        page.text(lx, meta_y + 26, "Invoice Date:", size)
        date_w = page.text(vx, meta_y + 26, inv_date, size, align="right", new_line=False)
        page.text(lx, meta_y + 52, "Due Date:", size)
        due_w = page.text(vx, meta_y + 52, due_date, size, align="right", new_line=False)
        y = max(y, meta_y + 52) + 60
        date_q = "What is the invoice date?"
    # bill to / ship to side by side
    bill_name, ship_name = _person(rng), _person(rng)
    b1, b2 = _address(rng)
    s1, s2 = _address(rng)
    page.text(50, y, "Bill To:", size, True)
    page.text(w / 2 + 20, y, "Ship To:", size, True, new_line=False)
    y += 26
    page.text(50, y, bill_name, size)
    page.text(w / 2 + 20, y, ship_name, size, new_line=False)
    y += 24
    bw1 = page.text(50, y, b1, size)
    page.text(w / 2 + 20, y, s1, size, new_line=False)
    y += 24
    bw2 = page.text(50, y, b2, size)
    page.text(w / 2 + 20, y, s2, size, new_line=False)
    y += 50
    # item table
    cols = [50, w - 380, w - 230, w - 50]
    page.rule(40, y - 6, w - 40)
    page.text(cols[0], y, "Description", size, True)
    page.text(cols[1], y, "Qty", size, True, new_line=False)
    page.text(cols[2], y, "Unit Price", size, True, new_line=False)
    page.text(cols[3], y, "Amount", size, True, "right", new_line=False)
    y += 30
    page.rule(40, y - 6, w - 40)
    subtotal = 0.0
    for name, qty, price in _items(rng, rng.randint(3, 6)):
        amount = qty * price
        subtotal += amount
        page.text(cols[0], y, name, size)
        page.text(cols[1], y, str(qty), size, new_line=False)
        page.text(cols[2], y, _money(price), size, new_line=False)
        page.text(cols[3], y, _money(amount), size, align="right", new_line=False)
        y += 28
    page.rule(40, y, w - 40)
    y += 18
    rate = rng.choice([0.05, 0.07, 0.1, 0.2])
    tax = round(subtotal * rate, 2)
    shipping = round(rng.uniform(0, 25), 2)
    total = round(subtotal + tax + shipping, 2)
    total_label = "Balance Due:" if modern else "Total:"
    rows = {}
    for label, value in [
        ("Subtotal:", subtotal),
        (f"Tax ({int(rate * 100)}%):", tax),
        ("Shipping:", shipping),
        (total_label, total),
    ]:
        bold = label == total_label
        page.text(w - 330, y, label, size + (1 if bold else 0), bold)
        rows[label] = page.text(
            w - 50, y, _money(value), size + (1 if bold else 0), bold, "right", new_line=False
        )
        y += 28
    y += 30
    page.text(
        50,
        y,
        f"Payment terms: net {rng.choice([15, 30, 45])} days. Thank you for your business.",
        size - 2,
    )
    tq = "What is the balance due?" if modern else "What is the total amount of this invoice?"
    return [
        _q(tq, _money(total), rows[total_label], "total", _money(subtotal)),
        _q("What is the subtotal?", _money(subtotal), rows["Subtotal:"], "subtotal", _money(total)),
        _q(date_q, inv_date, date_w, "date", due_date),
        _q("What is the due date?", due_date, due_w, "due_date", inv_date),
        _q("What is the invoice number?", inv_no, inv_w, "invoice_number"),
        _q("What is the billing address?", f"{b1} {b2}", bw1 + bw2, "address", f"{s1} {s2}"),
        _q("What is the name of the company that issued this invoice?", company, cw, "company"),
    ]


def _form(page: _Page, rng: random.Random, boxed: bool) -> list[RenderedQuestion]:
    w = page.width
    size = 18
    title = rng.choice(
        ["MEMBERSHIP APPLICATION", "EMPLOYEE INFORMATION FORM", "PATIENT REGISTRATION"]
    )
    page.text(w / 2, 40, title, 26, True, "center")
    street, city = _address(rng)
    dob, ymd = _date(rng, rng.randint(0, 3))
    sign_date = _later(rng, (ymd[0] + rng.randint(18, 40), ymd[1], ymd[2]), 0)
    fields = [
        ("Full Name", _person(rng)),
        ("Date of Birth", dob),
        ("Phone Number", _phone(rng)),
        ("Email", f"{rng.choice(_FIRST).lower()}.{rng.choice(_LAST).lower()}@example.org"),
        ("Street Address", street),
        ("City / State / ZIP", city),
        ("Emergency Contact", _person(rng)),
        ("Signature Date", sign_date),
    ]
    questions = []
    y = 110.0
    if boxed:
        cell_w, cell_h = (w - 100) / 2, 78
        for i, (label, value) in enumerate(fields):
            x0 = 50 + (i % 2) * cell_w
            y0 = y + (i // 2) * cell_h
            page.rect((x0, y0, x0 + cell_w, y0 + cell_h))
            page.text(x0 + 10, y0 + 8, label, size - 4, True)
            vw = page.text(x0 + 14, y0 + 38, value, size)
            questions.append((label, value, vw))
    else:
        for label, value in fields:
            page.text(60, y, f"{label}:", size, True)
            vw = page.text(330, y, value, size, new_line=False)
            page.rule(325, y + size + 6, w - 60)
            questions.append((label, value, vw))
            y += 54
    distract = {"Date of Birth": sign_date, "Signature Date": dob}
    out = []
    for label, value, vw in questions:
        fld = "form:" + label.lower().replace(" / ", "_").replace(" ", "_")
        out.append(
            _q(f"What is written in the '{label}' field?", value, vw, fld, distract.get(label, ""))
        )
    return out


def _table(page: _Page, rng: random.Random) -> list[RenderedQuestion]:
    w = page.width
    size = 18
    year = rng.randint(2016, 2025)
    page.text(w / 2, 40, f"Quarterly Sales Report {year}", 26, True, "center")
    page.text(w / 2, 80, "(thousands of units)", size - 2, align="center")
    regions = rng.sample(_REGIONS, rng.randint(4, 6))
    cols = ["Q1", "Q2", "Q3", "Q4"]
    x0, first_w = 60, 200
    col_w = (w - 120 - first_w) / len(cols)
    y = 130.0
    page.rule(50, y - 8, w - 50, 2)
    page.text(x0, y, "Region", size, True)
    for j, c in enumerate(cols):
        page.text(x0 + first_w + (j + 1) * col_w - 20, y, c, size, True, "right", new_line=False)
    y += 34
    page.rule(50, y - 8, w - 50)
    cells: dict[tuple[str, str], tuple[str, list[Word]]] = {}
    for region in regions:
        page.text(x0, y, region, size)
        for j, c in enumerate(cols):
            value = f"{rng.randint(10, 999)}.{rng.randint(0, 9)}"
            cw = page.text(
                x0 + first_w + (j + 1) * col_w - 20, y, value, size, align="right", new_line=False
            )
            cells[(region, c)] = (value, cw)
        y += 34
    page.rule(50, y - 8, w - 50, 2)
    page.text(x0, y + 10, f"Source: internal sales ledger, {year}.", size - 3)
    out = []
    picks = rng.sample(sorted(cells), min(6, len(cells)))
    for region, c in picks:
        value, cw = cells[(region, c)]
        j = cols.index(c)
        neighbour = cells[(region, cols[j - 1 if j else 1])][0]
        out.append(
            _q(f"What is the value for {region} in the {c} column?", value, cw, "table", neighbour)
        )
    return out


def _statement(page: _Page, rng: random.Random) -> list[RenderedQuestion]:
    w = page.width
    size = 17
    bank = f"{rng.choice(_COMPANY_A)} Savings Bank"
    bw = page.text(50, 40, bank, 26, True)
    page.text(w - 50, 46, "ACCOUNT STATEMENT", 20, True, "right", new_line=False)
    holder = _person(rng)
    street, city = _address(rng)
    y = 110.0
    page.text(50, y, holder, size)
    y += 24
    aw1 = page.text(50, y, street, size)
    y += 24
    aw2 = page.text(50, y, city, size)
    style = rng.randint(0, 3)
    start, ymd = _date(rng, style)
    end = _later(rng, ymd, style)
    acct = f"{rng.randint(100, 999)}-{rng.randint(100000, 999999)}"
    page.text(w - 340, 110, "Account No:", size)
    acw = page.text(w - 50, 110, acct, size, align="right", new_line=False)
    page.text(w - 340, 136, "Period from:", size)
    sw = page.text(w - 50, 136, start, size, align="right", new_line=False)
    page.text(w - 340, 162, "Period to:", size)
    ew = page.text(w - 50, 162, end, size, align="right", new_line=False)
    y = 230.0
    opening = round(rng.uniform(100, 9000), 2)
    page.text(50, y, "Opening Balance:", size, True)
    ow = page.text(330, y, _money(opening), size, new_line=False)
    y += 40
    page.rule(40, y - 6, w - 40)
    page.text(50, y, "Date", size, True)
    page.text(200, y, "Description", size, True, new_line=False)
    page.text(w - 50, y, "Amount", size, True, "right", new_line=False)
    y += 30
    balance = opening
    for _ in range(rng.randint(4, 7)):
        amount = round(rng.uniform(-400, 600), 2)
        balance += amount
        d, _ = _date(rng, style)
        page.text(50, y, d, size - 1)
        page.text(
            200,
            y,
            rng.choice(
                [
                    "Card purchase",
                    "Transfer in",
                    "Salary",
                    "Utility bill",
                    "ATM withdrawal",
                    "Interest",
                ]
            ),
            size - 1,
            new_line=False,
        )
        page.text(w - 50, y, _money(amount), size - 1, align="right", new_line=False)
        y += 26
    page.rule(40, y, w - 40)
    y += 16
    balance = round(balance, 2)
    page.text(50, y, "Closing Balance:", size, True)
    cw = page.text(330, y, _money(balance), size, new_line=False)
    return [
        _q("What is the closing balance?", _money(balance), cw, "closing_balance", _money(opening)),
        _q("What is the opening balance?", _money(opening), ow, "opening_balance", _money(balance)),
        _q("What is the account number?", acct, acw, "account_number"),
        _q("When does the statement period end?", end, ew, "period_end", start),
        _q("When does the statement period start?", start, sw, "period_start", end),
        _q("What is the account holder's address?", f"{street} {city}", aw1 + aw2, "address"),
        _q("What is the name of the bank?", bank, bw, "company"),
    ]


LAYOUTS: dict[str, tuple[tuple[int, int], Any]] = {
    "receipt_basic": ((560, 820), lambda p, r: _receipt(p, r, mono=False)),
    "receipt_mono": ((520, 820), lambda p, r: _receipt(p, r, mono=True)),
    "invoice_classic": ((1000, 1000), lambda p, r: _invoice(p, r, modern=False)),
    "invoice_modern": ((1000, 1000), lambda p, r: _invoice(p, r, modern=True)),
    "form_application": ((900, 620), lambda p, r: _form(p, r, boxed=False)),
    "form_boxed": ((900, 520), lambda p, r: _form(p, r, boxed=True)),
    "table_report": ((900, 420), _table),
    "statement": ((1000, 620), _statement),
}


# --------------------------------------------------------------------------- degradation


def _rotate_box(box: Box, angle_deg: float, center: tuple[float, float]) -> Box:
    """The enclosing box of ``box`` rotated like ``Image.rotate(angle_deg)`` (counter-clockwise
    on screen) about ``center``."""
    cx, cy = center
    t = math.radians(angle_deg)
    c, s = math.cos(t), math.sin(t)
    pts = []
    for x, y in ((box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3])):
        dx, dy = x - cx, y - cy
        pts.append((cx + dx * c + dy * s, cy - dx * s + dy * c))
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return (min(xs), min(ys), max(xs), max(ys))


def degrade(
    image: Any, words: list[Word], level: Degradation, rng: random.Random
) -> tuple[Any, list[Word], float]:
    """Apply ``level``'s blur, noise, rotation, low resolution and JPEG; returns the image, the
    words with boxes moved by the rotation (clipped to the page) and the angle used."""
    import numpy as np
    from PIL import Image, ImageFilter

    p = _LEVELS[level]
    if level == "none":
        return image, words, 0.0
    w, h = image.size
    angle = p["rotate"] * rng.choice([-1.0, 1.0]) * rng.uniform(0.6, 1.0)
    image = image.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor="white")
    moved = []
    for word in words:
        x1, y1, x2, y2 = _rotate_box(word.box, angle, (w / 2, h / 2))
        moved.append(
            Word(
                word.text,
                (max(0.0, x1), max(0.0, y1), min(float(w), x2), min(float(h), y2)),
                word.conf,
                word.line,
            )
        )
    if p["scale"] < 1.0:
        small = image.resize(
            (max(1, int(w * p["scale"])), max(1, int(h * p["scale"]))), Image.Resampling.BILINEAR
        )
        image = small.resize((w, h), Image.Resampling.BILINEAR)
    if p["blur"] > 0:
        image = image.filter(ImageFilter.GaussianBlur(p["blur"]))
    if p["noise"] > 0:
        nrng = np.random.default_rng(rng.randint(0, 2**31))
        arr = np.asarray(image, dtype=np.float32)
        arr = arr + nrng.normal(0.0, p["noise"], size=arr.shape[:2])[..., None]
        image = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    if p["jpeg"]:
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=int(p["jpeg"]))
        buffer.seek(0)
        image = Image.open(buffer).convert("RGB")
    return image, moved, angle


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
