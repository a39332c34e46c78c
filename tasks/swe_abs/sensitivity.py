"""Sensitivity analysis (simulated rejections) of a real leaderboard's order to test strengthening.

    .venv/bin/python -m tasks.swe_abs.sensitivity [--rate 0.1973] [--share 0.502] [--draws 2000]

Input: ``$HARNESS_DATA_DIR/swebench_verified/leaderboards_bashonly_top10_plus_verified.json`` —
the 10 best bash-only (mini-SWE-agent) runs on SWE-bench Verified with per-instance resolved
flags. Which of their patches a stronger suite would reject is **not** in that data: this is a
sensitivity analysis, not a measurement. Each draw marks a random share of instances as
strengthened (default: the paper's 251/500) and rejects each resolved patch on them with the
probability that makes the expected pooled rejection equal ``--rate`` (default: the paper's
2,177/11,034), then re-ranks the runs as SWE-ABS does. Printed: the runs' resolved counts, and
over the draws Spearman's ρ (mean, 2.5–97.5 % range), the mean number of rank changes and how
often the first place stays first.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.data import data_path
from methods.swe_abs import SensitivityResult, sensitivity

FILE = "swebench_verified/leaderboards_bashonly_top10_plus_verified.json"
HOW_TO_GET = (
    "copy data/leaderboards.json of github.com/SWE-bench/swe-bench.github.io (CC BY-NC 4.0; the "
    "bash-only entries carry per_instance_details) to $HARNESS_DATA_DIR/" + FILE
)
PAPER_REJECTION = 2177 / 11034
PAPER_STRENGTHENED = 251 / 500
LABEL = "sensitivity analysis (simulated rejections, not measured)"


class LeaderboardFormatError(ValueError):
    pass


def resolved_sets(path: Path, board_name: str = "bash-only") -> dict[str, set[str]]:
    """Run name → ids of the instances it resolved, for the entries of ``board_name`` ("all":
    every board) that carry per-instance details; a run listed on two boards counts once."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {}
    folders: set[str] = set()
    for board in doc.get("leaderboards", []):
        if board_name != "all" and board.get("name") != board_name:
            continue
        for i, entry in enumerate(board.get("results", [])):
            if entry.get("folder") in folders:
                continue
            folders.add(entry.get("folder"))
            details = entry.get("per_instance_details")
            if details is None:
                continue
            if not isinstance(details, dict):
                raise LeaderboardFormatError(
                    f"{path}: {board.get('name')} results[{i}].per_instance_details is not an object"
                )
            name = str(entry.get("name") or entry.get("folder") or f"{board.get('name')}[{i}]")
            try:
                out[name] = {iid for iid, d in details.items() if d["resolved"]}
            except (KeyError, TypeError) as exc:
                raise LeaderboardFormatError(
                    f"{path}: {name}: an instance lacks a boolean 'resolved' ({exc})"
                ) from None
    if not out:
        raise LeaderboardFormatError(
            f"{path}: no entry of board {board_name!r} carries per_instance_details"
        )
    return out


def analyse(
    rate: float = PAPER_REJECTION,
    share: float = PAPER_STRENGTHENED,
    draws: int = 2000,
    seed: int = 0,
    board: str = "bash-only",
) -> tuple[dict[str, set[str]], SensitivityResult]:
    path = data_path(FILE, how_to_get=HOW_TO_GET)
    runs = resolved_sets(path, board)
    return runs, sensitivity(
        runs, rejection_rate=rate, strengthened_share=share, draws=draws, seed=seed
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=PAPER_REJECTION)
    parser.add_argument("--share", type=float, default=PAPER_STRENGTHENED)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--board", default="bash-only", help='"bash-only", "Verified" or "all"')
    args = parser.parse_args(argv)
    runs, res = analyse(args.rate, args.share, args.draws, args.seed, args.board)
    print(f"{LABEL}: {len(runs)} SWE-bench Verified runs ({args.board}), {args.draws} draws")
    for name, ids in sorted(runs.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(ids):4d}/500  {name}")
    print(
        f"pooled rejection {res.rejection_rate:.2%} on {res.strengthened_share:.1%} of instances: "
        f"Spearman rho {res.spearman_mean:.3f} [{res.spearman_lo:.3f}, {res.spearman_hi:.3f}], "
        f"{res.rank_changed_mean:.1f} of {len(runs)} runs change rank on average, "
        f"first place kept in {res.top1_kept:.0%} of draws"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
