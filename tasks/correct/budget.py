"""How many Who&When trajectories keep all k retrieved schemata at a prompt budget.

    python -m tasks.correct.budget [--budgets 512,1024,2048] [--model default]

CORRECT's prompt gives the schemata at most 30 % of `max_prompt_tokens` and never squeezes the
history below half of it; each schema needs at least 32 tokens, so below some budget fewer than
the paper's k fit (in the 512-token full run 96 of 184 trajectories kept none). How many fit
depends only on the prompt's fixed part (task statement, answer, instructions), not on the
schemata's text, so this needs no model call: it counts with the model's tokenizer.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import cast

from methods.correct import PAPER_K, LocaliserConfig, Trajectory, schema_capacity

DEFAULT_BUDGETS = (512, 768, 1024, 1536, 2048, 3072, 4096)


def paper_k(subset: str, pool_size: int) -> int:
    """The paper's k for a Who&When subset, capped by the other trajectories in the pool."""
    return min(PAPER_K[subset], pool_size - 1)


def keep_rates(
    pools: dict[str, list[Trajectory]],
    budgets: Sequence[int],
    count_tokens: Callable[[str], int],
) -> list[dict[str, object]]:
    """Per budget and subset: trajectories whose prompt holds all k schemata (and in total)."""
    rows = []
    for budget in budgets:
        config = LocaliserConfig(max_prompt_tokens=budget, count_tokens=count_tokens)
        row: dict[str, object] = {"budget": budget}
        kept_all = total = 0
        for subset, pool in pools.items():
            k = paper_k(subset, len(pool))
            caps = [schema_capacity(t, config) for t in pool]
            kept = sum(c >= k for c in caps)
            row[subset] = (kept, len(pool), k, sum(c == 0 for c in caps))
            kept_all, total = kept_all + kept, total + len(pool)
        row["all"] = (kept_all, total)
        rows.append(row)
    return rows


def smallest_budget(rows: list[dict[str, object]], share: float = 0.9) -> int | None:
    for row in rows:
        kept, total = cast(tuple[int, int], row["all"])
        if kept >= share * total:
            return int(row["budget"])  # type: ignore[call-overload]
    return None


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budgets", default=",".join(map(str, DEFAULT_BUDGETS)))
    parser.add_argument("--model", default="default", help="whose tokenizer counts (local weights)")
    args = parser.parse_args(argv)
    from transformers import AutoTokenizer

    from harness.data import data_path
    from harness.models import resolve_model_path
    from tasks.correct.dataset import HOW_TO_GET, WHO_AND_WHEN_DIR, load_who_and_when

    tok = AutoTokenizer.from_pretrained(str(resolve_model_path(args.model)))
    root = data_path(WHO_AND_WHEN_DIR, how_to_get=HOW_TO_GET)
    pools = {s: load_who_and_when(root, s) for s in ("algorithm_generated", "hand_crafted")}
    rows = keep_rates(
        pools,
        [int(b) for b in args.budgets.split(",")],
        lambda text: len(tok.encode(text, add_special_tokens=False)),
    )
    print("| max_prompt_tokens | AG keep k=1 | AG none | HC keep k=10 | HC none | all keep k |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        ag = cast(tuple[int, int, int, int], row["algorithm_generated"])
        hc = cast(tuple[int, int, int, int], row["hand_crafted"])
        kept, total = cast(tuple[int, int], row["all"])
        print(
            f"| {row['budget']} | {ag[0]}/{ag[1]} | {ag[3]} | {hc[0]}/{hc[1]} | {hc[3]} "
            f"| {kept}/{total} ({100 * kept / total:.1f} %) |"
        )
    best = smallest_budget(rows)
    print(f"\nsmallest budget with >= 90 % keeping all k: {best}")


if __name__ == "__main__":
    main()
