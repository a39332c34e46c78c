"""Leaderboard re-ranking as SWE-ABS measures it (``tool_script/analyze_leaderboard.py``).

Ranks are ordinal: systems sorted by resolved count, highest first, ties kept in the input order
(Python's stable sort, as the paper's script). Spearman's ρ is computed on those two rank
vectors (scipy's ``spearmanr`` on the rank lists, i.e. Pearson on ranks). Also reported: the
number of systems whose rank changed, the mean |rank move|, the pooled rejection rate
(killed / previously resolved, over all systems) and the mean per-system relative drop.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


def ordinal_ranks(counts: Mapping[str, float]) -> dict[str, int]:
    """1 = most resolved; ties keep the mapping's order (stable sort, as the paper's script)."""
    order = sorted(counts, key=lambda k: counts[k], reverse=True)
    return {k: i + 1 for i, k in enumerate(order)}


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's ρ with average ranks for ties (equals scipy.stats.spearmanr)."""
    if len(a) != len(b):
        raise ValueError(f"spearman: lengths differ ({len(a)} vs {len(b)})")
    if len(a) < 2:
        return float("nan")
    ra, rb = _average_ranks(a), _average_ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    if va == 0 or vb == 0:
        return float("nan")
    return cov / math.sqrt(va * vb)


def _average_ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@dataclass(frozen=True)
class Reranking:
    systems: tuple[str, ...]
    before: dict[str, int]  # resolved counts under the original tests
    after: dict[str, int]  # ... under the strengthened tests
    rank_before: dict[str, int]
    rank_after: dict[str, int]
    spearman: float  # on the ordinal ranks (the paper's script)
    spearman_counts: float  # on the counts, ties averaged
    rank_changed: int
    mean_abs_move: float
    pooled_rejected: float  # Σ(before - after) / Σ before
    mean_relative_drop: float  # mean over systems of (before - after) / before

    def as_dict(self) -> dict[str, object]:
        return {
            "systems": list(self.systems),
            "before": self.before,
            "after": self.after,
            "rank_before": self.rank_before,
            "rank_after": self.rank_after,
            "spearman": self.spearman,
            "spearman_counts": self.spearman_counts,
            "rank_changed": self.rank_changed,
            "mean_abs_move": self.mean_abs_move,
            "pooled_rejected": self.pooled_rejected,
            "mean_relative_drop": self.mean_relative_drop,
        }


def rerank(
    before: Mapping[str, int],
    after: Mapping[str, int],
    *,
    rank_before: Mapping[str, int] | None = None,
) -> Reranking:
    """Re-ranking of systems from resolved counts before and after strengthening.

    ``rank_before``: given original ranks (e.g. a leaderboard's listed order) instead of ranking
    the counts; the new ranks break count ties in the order of the original ranks.
    """
    systems = tuple(before)
    missing = [s for s in systems if s not in after]
    if missing:
        raise ValueError(f"rerank: no 'after' count for {missing}")
    rb = dict(rank_before) if rank_before is not None else ordinal_ranks(before)
    in_old_order = sorted(systems, key=lambda s: rb[s])
    ra = ordinal_ranks({s: after[s] for s in in_old_order})
    xs = [rb[s] for s in systems]
    ys = [ra[s] for s in systems]
    total = sum(before[s] for s in systems)
    drops = [(before[s] - after[s]) / before[s] for s in systems if before[s] > 0]
    return Reranking(
        systems=systems,
        before=dict(before),
        after={s: after[s] for s in systems},
        rank_before=rb,
        rank_after=ra,
        spearman=spearman(xs, ys),
        spearman_counts=spearman([before[s] for s in systems], [after[s] for s in systems]),
        rank_changed=sum(rb[s] != ra[s] for s in systems),
        mean_abs_move=sum(abs(rb[s] - ra[s]) for s in systems) / len(systems) if systems else 0.0,
        pooled_rejected=(total - sum(after[s] for s in systems)) / total if total else 0.0,
        mean_relative_drop=sum(drops) / len(drops) if drops else 0.0,
    )


@dataclass(frozen=True)
class SensitivityResult:
    """Re-ranking under *simulated* rejections (not measured: which patches a stronger suite
    would reject is unknown for these runs)."""

    rejection_rate: float
    strengthened_share: float
    draws: int
    spearman_mean: float
    spearman_lo: float
    spearman_hi: float
    rank_changed_mean: float
    top1_kept: float  # share of draws where the original first place stays first
    label: str = "sensitivity analysis (simulated rejections)"


def sensitivity(
    resolved: Mapping[str, set[str]],
    *,
    rejection_rate: float,
    strengthened_share: float = 1.0,
    draws: int = 1000,
    seed: int = 0,
) -> SensitivityResult:
    """How stable a leaderboard's order is if a stronger suite rejected some resolved patches.

    ``resolved``: system → ids of the instances it resolved. Each draw marks a random
    ``strengthened_share`` of the instances as strengthened and, on those, rejects each resolved
    patch independently with probability ``rejection_rate / strengthened_share`` (so the expected
    pooled rejection equals ``rejection_rate``); then re-ranks. Returns the mean and 2.5/97.5
    percentiles of Spearman's ρ over the draws.
    """
    if not 0 <= rejection_rate <= 1 or not 0 < strengthened_share <= 1:
        raise ValueError("sensitivity: rates must lie in [0, 1] (strengthened share > 0)")
    p = min(rejection_rate / strengthened_share, 1.0)
    rng = random.Random(seed)
    instances = sorted(set().union(*resolved.values())) if resolved else []
    before = {s: len(ids) for s, ids in resolved.items()}
    rhos, changed, top1 = [], [], 0
    first = min(ordinal_ranks(before).items(), key=lambda kv: kv[1])[0] if before else None
    for _ in range(draws):
        strong = {i for i in instances if rng.random() < strengthened_share}
        after = {
            s: sum(1 for i in sorted(ids) if not (i in strong and rng.random() < p))
            for s, ids in resolved.items()
        }
        r = rerank(before, after)
        rhos.append(r.spearman)
        changed.append(r.rank_changed)
        if first is not None and r.rank_after[first] == 1:
            top1 += 1
    rhos_sorted = sorted(x for x in rhos if not math.isnan(x))
    n = len(rhos_sorted)

    def pct(q: float) -> float:
        return rhos_sorted[min(n - 1, max(0, round(q * (n - 1))))] if n else float("nan")

    return SensitivityResult(
        rejection_rate=rejection_rate,
        strengthened_share=strengthened_share,
        draws=draws,
        spearman_mean=sum(rhos_sorted) / n if n else float("nan"),
        spearman_lo=pct(0.025),
        spearman_hi=pct(0.975),
        rank_changed_mean=sum(changed) / len(changed) if changed else 0.0,
        top1_kept=top1 / draws if draws else 0.0,
    )
