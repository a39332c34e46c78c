"""Re-ranking: ordinal ranks as the paper's script, Spearman, and the paper's own leaderboard
(30 agents, counts before/after SWE-ABS) reproduced as a fixed test."""

from __future__ import annotations

import json
import math
from itertools import permutations
from pathlib import Path

import pytest
from scipy.stats import spearmanr

from methods.swe_abs._rerank import ordinal_ranks, rerank, sensitivity, spearman

PAPER = json.loads((Path(__file__).parent / "swe_abs_leaderboard_30.json").read_text())["data"]


def test_ordinal_ranks_keep_input_order_for_ties():
    assert ordinal_ranks({"a": 3, "b": 5, "c": 3}) == {"b": 1, "a": 2, "c": 3}


def test_spearman_matches_scipy_with_ties():
    a, b = [1, 2, 2, 4, 5], [5, 3, 3, 1, 2]
    assert spearman(a, b) == pytest.approx(spearmanr(a, b).statistic)
    assert math.isnan(spearman([1, 1], [1, 2]))  # no variance
    with pytest.raises(ValueError):
        spearman([1], [1, 2])


def test_rerank_hand_computed():
    r = rerank({"x": 10, "y": 8, "z": 6}, {"x": 5, "y": 8, "z": 6})
    assert r.rank_before == {"x": 1, "y": 2, "z": 3}
    assert r.rank_after == {"y": 1, "z": 2, "x": 3}
    assert r.rank_changed == 3 and r.mean_abs_move == pytest.approx(4 / 3)
    assert r.pooled_rejected == pytest.approx(5 / 24)
    assert r.mean_relative_drop == pytest.approx(0.5 / 3)
    assert r.spearman == pytest.approx(-0.5)


def test_paper_leaderboard_counts_and_means():
    assert len(PAPER) == 30
    old = {row["modelKey"]: row["oldCount"] for row in PAPER}
    new = {row["modelKey"]: row["newCount"] for row in PAPER}
    r = rerank(old, new)
    # note §1(c): 2,177 of 11,034 previously passing patches killed (19.73 %); mean per-agent
    # relative drop 19.76 %; means 73.6 → 59.0 %; drops 10.6 … 18.4 points (mean 14.5)
    assert sum(old.values()) == 11034 and sum(old.values()) - sum(new.values()) == 2177
    assert r.pooled_rejected == pytest.approx(0.19730, abs=5e-5)
    assert r.mean_relative_drop == pytest.approx(0.19756, abs=5e-5)
    assert sum(row["orig"] for row in PAPER) / 30 == pytest.approx(73.56)
    assert sum(row["sweAbs"] for row in PAPER) / 30 == pytest.approx(59.05, abs=5e-3)
    drops = [row["orig"] - row["sweAbs"] for row in PAPER]
    assert (min(drops), max(drops)) == (pytest.approx(10.6), pytest.approx(18.4))
    # counts are the percentages over 500 instances
    assert all(row["oldCount"] == round(row["orig"] * 5) for row in PAPER)


def test_paper_rank_moves_reproduced_from_counts():
    old = {row["modelKey"]: row["oldCount"] for row in PAPER}  # listed in original rank order
    new = {row["modelKey"]: row["newCount"] for row in PAPER}
    r = rerank(old, new)
    listed_old = {row["modelKey"]: row["oldRank"] for row in PAPER}
    listed_new = {row["modelKey"]: row["newRank"] for row in PAPER}
    assert r.rank_before == listed_old
    # Every new rank matches, except that agents tied on the new count may be listed in another
    # order (the paper's script breaks ties by its dict order): ranks agree as sets per tie.
    for count in set(new.values()):
        tied = [k for k in new if new[k] == count]
        assert {r.rank_after[k] for k in tied} == {listed_new[k] for k in tied}
    untied = [k for k in new if list(new.values()).count(new[k]) == 1]
    assert all(r.rank_after[k] == listed_new[k] for k in untied)
    # the note's headline moves
    by_name = {row["model"]: row for row in PAPER}
    for name, before, after in [
        ("TRAE + Doubao-Seed-Code", 1, 5),
        ("live-SWE-agent + Gemini 3 Pro Preview (2025-11-18)", 2, 1),
        ("Atlassian Rovo Dev (2025-09-02)", 3, 8),
        ("EPAM AI/Run Developer Agent v20250719 + Claude 4 Sonnet", 4, 3),
        ("Sonar Foundation Agent + Claude 4.5 Sonnet", 8, 2),
        ("OpenHands + GPT-5", 20, 11),
    ]:
        key = by_name[name]["modelKey"]
        assert (r.rank_before[key], r.rank_after[key]) == (before, after)
    # Spearman's rho of the listed ranks (the paper's script: scipy on the two rank lists)
    keys = sorted(listed_old)
    rho_listed = spearman([listed_old[k] for k in keys], [listed_new[k] for k in keys])
    assert rho_listed == pytest.approx(0.8398, abs=1e-4)
    assert rho_listed == pytest.approx(
        spearmanr([listed_old[k] for k in keys], [listed_new[k] for k in keys]).statistic
    )
    # From counts, the only tie that matters (three agents at 292) can be ordered 3! ways; the
    # listed order is one of them, so the listed rho is among the reachable values.
    tied = [k for k in keys if new[k] == 292]
    reachable = set()
    for order in permutations(tied):
        ranks = dict(r.rank_after)
        for k, rank in zip(order, sorted(r.rank_after[t] for t in tied), strict=True):
            ranks[k] = rank
        reachable.add(round(spearman([listed_old[k] for k in keys], [ranks[k] for k in keys]), 4))
    assert round(rho_listed, 4) in reachable
    assert r.spearman == pytest.approx(0.8438, abs=1e-4)  # stable tie order
    assert r.spearman_counts == pytest.approx(0.8208, abs=1e-4)  # ties averaged
    assert sum(listed_old[k] != listed_new[k] for k in keys) == 30  # every agent moved


def test_sensitivity_is_seeded_and_labelled():
    resolved = {"a": {f"i{k}" for k in range(40)}, "b": {f"i{k}" for k in range(30)},
                "c": {f"i{k}" for k in range(20)}}  # fmt: skip
    s1 = sensitivity(resolved, rejection_rate=0.2, strengthened_share=0.5, draws=200, seed=1)
    s2 = sensitivity(resolved, rejection_rate=0.2, strengthened_share=0.5, draws=200, seed=1)
    assert s1 == s2 and s1.label.startswith("sensitivity analysis")
    assert -1 <= s1.spearman_lo <= s1.spearman_mean <= s1.spearman_hi <= 1
    none = sensitivity(resolved, rejection_rate=0.0, draws=20)
    assert none.spearman_mean == pytest.approx(1.0) and none.rank_changed_mean == 0
    with pytest.raises(ValueError):
        sensitivity(resolved, rejection_rate=1.5)
