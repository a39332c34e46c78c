"""tasks/docval/compare.py split-gap: dev side vs test side, clustered by vendor."""

from __future__ import annotations

import pytest

import tasks.docval.compare as compare


def _rows(spec):
    rows = {}
    for i, (vendor, split, doc, anls) in enumerate(spec):
        rows[f"q{i}"] = {
            "anls": anls,
            "field": "total",
            "split": split,
            "vendor": vendor,
            "doc_id": doc,
        }
    return {"path": "x"}, rows


def test_split_gap_means_and_vendor_clusters(monkeypatch) -> None:
    spec = [
        ("A", "dev", "1", 1.0),
        ("A", "dev", "2", 1.0),
        ("B", "dev", "3", 0.0),
        ("C", "test", "4", 0.5),
        ("D", "test", "5", 0.5),
        ("D", "test", "6", 0.5),
    ]
    monkeypatch.setattr(compare, "load_values", lambda path: _rows(spec))
    text = compare.split_gap("log")
    lines = text.splitlines()
    assert lines[0].startswith("anls, dev (vendors the rule was derived on): 66.7 [")
    assert "(n = 3 questions, 3 documents, 2 sources)" in lines[0]
    assert lines[1].startswith("anls, test (unseen vendors): 50.0 [50.0, 50.0]")
    assert lines[2].startswith("test − dev = -16.7 [")
    # a vendor resampled as one draw: dev's interval spans A alone (100) to B alone (0)
    low, high = (float(x) for x in lines[0].split("[")[1].split("]")[0].split(","))
    assert low == 0.0 and high == 100.0


def test_split_gap_needs_both_sides_and_one_side_per_vendor(monkeypatch) -> None:
    monkeypatch.setattr(compare, "load_values", lambda path: _rows([("A", "dev", "1", 1.0)]))
    with pytest.raises(SystemExit, match="both dev and test"):
        compare.split_gap("log")
    both = [("A", "dev", "1", 1.0), ("A", "test", "2", 1.0)]
    monkeypatch.setattr(compare, "load_values", lambda path: _rows(both))
    with pytest.raises(SystemExit, match="on both sides"):
        compare.split_gap("log")
