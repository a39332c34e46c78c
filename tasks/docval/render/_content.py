"""What the documents say: seeded company, person, street, city and item names, dates, money."""

from __future__ import annotations

import random

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
