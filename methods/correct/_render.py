"""Render a trajectory into prompt text that fits a token budget, keeping original step ids.

Truncation strategy ("waterfill_head_tail"), recorded in every log:
1. Every step keeps its label line `Step <original index> - <speaker>:`.
2. If all contents fit the budget, nothing is cut. Otherwise contents are capped at a common
   per-step cap (water-filling: short steps stay whole, long steps are cut to the cap), and a cut
   step keeps its head (2/3) and tail (1/3) around a `…[cut N chars]…` marker, since a mistake is
   often stated at the start of a turn and its conclusion at the end.
3. If the labels alone would take more than half of the budget (Hand-Crafted logs reach 130
   steps), whole steps are omitted from the middle outwards, replaced by one line
   `[steps i..j omitted]`; the first and last steps are kept longest.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from methods.correct._trajectory import Step

TokenCounter = Callable[[str], int]

STRATEGY = "waterfill_head_tail"
_MIN_CONTENT_TOKENS = 4


def approx_tokens(text: str) -> int:
    """Conservative token estimate (3 characters per token; BPE on English prose gives ~4)."""
    return math.ceil(len(text) / 3)


@dataclass(frozen=True)
class Rendered:
    text: str
    n_steps: int
    steps_cut: int  # steps whose content was shortened
    steps_omitted: int  # steps left out entirely (label included)
    chars_total: int
    chars_kept: int
    tokens: int  # by the counter used

    def as_dict(self) -> dict[str, object]:
        return {
            "strategy": STRATEGY,
            "n_steps": self.n_steps,
            "steps_cut": self.steps_cut,
            "steps_omitted": self.steps_omitted,
            "chars_total": self.chars_total,
            "chars_kept": self.chars_kept,
            "tokens": self.tokens,
        }


def _label(step: Step) -> str:
    return f"Step {step.index} - {step.label}: "


def _cut(content: str, keep_chars: int) -> str:
    if keep_chars >= len(content):
        return content
    keep_chars = max(keep_chars, 0)
    head = (2 * keep_chars) // 3
    tail = keep_chars - head
    removed = len(content) - head - tail
    return (
        f"{content[:head]} …[cut {removed} chars]… {content[len(content) - tail :] if tail else ''}"
    )


def _waterfill(costs: Sequence[int], budget: int) -> float:
    """The cap c so that sum(min(cost, c)) == budget (inf when everything fits)."""
    if sum(costs) <= budget:
        return math.inf
    ordered = sorted(costs)
    remaining, left = budget, len(ordered)
    for cost in ordered:
        if cost * left > remaining:
            return max(remaining / left, 0.0)
        remaining -= cost
        left -= 1
    return math.inf


def _middle_out_keep(n: int, keep: int) -> list[int]:
    """Indices (positions) to keep when only `keep` of `n` steps fit: first and last first."""
    head = (keep + 1) // 2
    return list(range(head)) + list(range(n - (keep - head), n))


def render_steps(
    steps: Sequence[Step],
    budget_tokens: int,
    count_tokens: TokenCounter = approx_tokens,
) -> Rendered:
    """The steps as `Step <index> - <speaker>: <content>` lines, fitted to `budget_tokens`."""
    steps = list(steps)
    total_chars = sum(len(s.content) for s in steps)
    if not steps:
        return Rendered("", 0, 0, 0, 0, 0, 0)
    budget_tokens = max(int(budget_tokens), 1)

    # 3. omit whole middle steps when labels alone take over half the budget.
    label_costs = [count_tokens(_label(s)) + 1 for s in steps]
    keep_positions = list(range(len(steps)))
    if sum(label_costs) > budget_tokens // 2:
        per_step = max(sum(label_costs) / len(steps), 1) + _MIN_CONTENT_TOKENS
        keep = max(2, min(len(steps), int((budget_tokens // 2) / per_step)))
        keep_positions = _middle_out_keep(len(steps), keep) if keep < len(steps) else keep_positions
    kept = [steps[p] for p in keep_positions]
    omitted = len(steps) - len(kept)
    marker = ""
    if omitted:
        first_gap = next(i for i, p in enumerate(keep_positions) if i != p)
        lo, hi = steps[first_gap].index, steps[first_gap + omitted - 1].index
        marker = f"[steps {lo}..{hi} omitted to fit the context]"

    overhead = sum(count_tokens(_label(s)) + 1 for s in kept) + (
        count_tokens(marker) + 1 if marker else 0
    )
    content_budget = max(budget_tokens - overhead, 0)
    contents = [s.content for s in kept]

    # 2. water-fill the contents; re-measure with the real counter and shrink until it fits.
    scale = 1.0
    for _ in range(8):
        costs = [count_tokens(c) for c in [s.content for s in kept]]
        cap = _waterfill(costs, int(content_budget * scale))
        contents = []
        for s, cost in zip(kept, costs, strict=False):
            if cost <= cap:
                contents.append(s.content)
            else:
                ratio = cap / max(cost, 1)
                contents.append(_cut(s.content, int(len(s.content) * ratio)))
        used = sum(count_tokens(c) for c in contents)
        if used <= content_budget or cap == math.inf:
            break
        scale *= 0.9 * content_budget / max(used, 1)

    lines = [f"{_label(s)}{c}" for s, c in zip(kept, contents, strict=False)]
    if marker:
        at = next(i for i, p in enumerate(keep_positions) if i != p)
        lines.insert(at, marker)
    text = "\n".join(lines)
    cut = sum(1 for s, c in zip(kept, contents, strict=False) if c != s.content)
    return Rendered(
        text=text,
        n_steps=len(steps),
        steps_cut=cut,
        steps_omitted=omitted,
        chars_total=total_chars,
        chars_kept=sum(len(c) for c in contents),
        tokens=count_tokens(text),
    )


def truncate_text(text: str, budget_tokens: int, count_tokens: TokenCounter = approx_tokens) -> str:
    """Head/tail cut of free text (a question, a schema) to `budget_tokens`."""
    cost = count_tokens(text)
    if cost <= budget_tokens:
        return text
    keep = int(len(text) * max(budget_tokens, 0) / max(cost, 1) * 0.95)
    out = _cut(text, keep)
    while count_tokens(out) > budget_tokens and keep > 0:
        keep = int(keep * 0.8)
        out = _cut(text, keep)
    return out
