"""The five layouts (receipt, invoice, form, table, statement; eight variants in ``LAYOUTS``),
each drawing its page and returning its questions with answer boxes and distractors."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from methods.docval import Word
from tasks.docval.render._content import (
    _COMPANY_A,
    _FIRST,
    _LAST,
    _REGIONS,
    _address,
    _company,
    _date,
    _items,
    _later,
    _money,
    _person,
    _phone,
)
from tasks.docval.render._page import RenderedQuestion, _box, _Page

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
    for row_label, amount in [
        ("Subtotal:", subtotal),
        (f"Tax ({int(rate * 100)}%):", tax),
        ("Shipping:", shipping),
        (total_label, total),
    ]:
        bold = row_label == total_label
        page.text(w - 330, y, row_label, size + (1 if bold else 0), bold)
        rows[row_label] = page.text(
            w - 50, y, _money(amount), size + (1 if bold else 0), bold, "right", new_line=False
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
