"""Audit metrics against hand-computed values and scipy's Wilson interval."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest

from methods.anchor import AuditOutcome, rate, summarize, summarize_by_category


def o(cat, complied, ttc=None, refused=False, rtc=False, over=False, ratio=0.0, harm=0):
    return AuditOutcome("s", cat, complied, ttc, refused, rtc, over, ratio, harm)


def test_rate_matches_scipy_wilson():
    for k, n in [(0, 5), (3, 7), (7, 7), (1, 1)]:
        r = rate(k, n)
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert r["value"] == pytest.approx(k / n)
        assert r["low"] == pytest.approx(ci.low, abs=1e-9) and r["high"] == pytest.approx(
            ci.high, abs=1e-9
        )
    empty = rate(0, 0)
    assert math.isnan(empty["value"]) and math.isnan(empty["low"]) and empty["n"] == 0


def test_summarize_hand_computed():
    outs = [
        o("a", True, ttc=1, harm=4),
        o("a", True, ttc=3, refused=True, rtc=True, over=True, ratio=0.5, harm=5),
        o("b", False, refused=True, harm=0),
        o("b", False, harm=1),
    ]
    s = summarize(outs)
    assert s["n"] == 4
    assert s["compliance"]["value"] == 0.5
    assert s["refusal"]["value"] == 0.5
    assert s["refusal_then_comply"]["value"] == 0.25
    assert s["comply_given_refusal"]["value"] == 0.5 and s["comply_given_refusal"]["n"] == 2
    assert s["over_compliance"]["value"] == 0.25
    assert s["over_compliance_given_compliance"]["value"] == 0.5
    assert s["mean_over_compliance_ratio"] == pytest.approx(0.125)
    assert s["turns_to_compliance_mean"] == 2 and s["turns_to_compliance_median"] == 2
    assert s["harm_distribution"] == {0: 1, 1: 1, 2: 0, 3: 0, 4: 1, 5: 1}
    assert s["harm_mean"] == pytest.approx(2.5)
    by = summarize_by_category(outs)
    assert by["a"]["compliance"]["value"] == 1.0 and by["b"]["compliance"]["value"] == 0.0


def test_summarize_edge_cases():
    empty = summarize([])
    assert (
        empty["n"] == 0
        and math.isnan(empty["compliance"]["value"])
        and math.isnan(empty["harm_mean"])
    )
    none_complied = summarize([o("a", False), o("a", False)])
    assert none_complied["compliance"]["value"] == 0.0
    assert math.isnan(none_complied["turns_to_compliance_mean"])
    assert math.isnan(none_complied["comply_given_refusal"]["value"])  # nobody refused
    assert summarize_by_category([]) == {}
