"""omniverifier's dev/test split: a rule over scene seed ranges (tasks/omniverifier/splits.yaml).

Generated scenes are a pure function of ``(seed, pair index, level, error type)``; a seed is the
unit that repeats (every scene of a run shares it), and the seeds are unbounded, so the split is a
rule, not a list: dev = seeds 0-999 (seed 0, where everything the project chose by looking at
scenes was chosen, is in it), test = seeds from 1000 on. ``split=all`` accepts any seed. The
rule is data in the task folder, frozen like every task's split, and the log records the split
and the scene seed a run drew.

Data the project never looked at while choosing (ViVerBench, the quokka photograph) is test as
a whole: ``split=dev`` on it is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from harness.splits import SourceSplit, SplitName, check_split, load_source_split

__all__ = ["SPLITS_FILE", "SeedRanges", "check_dataset_split", "load_seed_ranges", "load_split"]

SPLITS_FILE = Path(__file__).with_name("splits.yaml")


@dataclass(frozen=True)
class SeedRanges:
    """dev = seeds `dev_first`..`dev_last`; test = seeds from `test_first` on (no end)."""

    dev_first: int
    dev_last: int
    test_first: int

    def __post_init__(self) -> None:
        if not 0 <= self.dev_first <= self.dev_last < self.test_first:
            raise ValueError(
                f"omniverifier split: seed ranges overlap or are out of order (dev "
                f"{self.dev_first}-{self.dev_last}, test from {self.test_first})"
            )

    def side(self, seed: int) -> str:
        """dev, test, or "none" for a seed between or below the ranges."""
        if self.dev_first <= seed <= self.dev_last:
            return "dev"
        return "test" if seed >= self.test_first else "none"

    def default_seed(self, split: SplitName) -> int:
        return self.test_first if split == "test" else self.dev_first

    def scene_seed(self, seed: int | None, split: SplitName) -> int:
        """The seed a run draws its scenes from: `seed`, checked to lie on `split`'s range, or
        the split's first seed when `seed` is None. A seed off the range is a `ValueError`."""
        if seed is None:
            return self.default_seed(split)
        if split != "all" and self.side(seed) != split:
            raise ValueError(
                f"omniverifier: seed={seed} is not on split={split} (dev: seeds "
                f"{self.dev_first}-{self.dev_last}, test: seeds {self.test_first} and above; "
                "tasks/omniverifier/splits.yaml); leave seed unset for the split's first seed, "
                "or use split=all"
            )
        return seed


@cache
def load_split(path: Path = SPLITS_FILE) -> SourceSplit:
    """The split's common part (unit; empty lists), read as every task's split."""
    return load_source_split("omniverifier", path)


@cache
def load_seed_ranges(path: Path = SPLITS_FILE) -> SeedRanges:
    """The frozen seed ranges; a missing or malformed `seed_ranges` is an error naming the file."""
    raw = yaml.safe_load(path.read_text())
    ranges = raw.get("seed_ranges") if isinstance(raw, dict) else None
    try:
        dev_first, dev_last = (int(x) for x in ranges["dev"])  # type: ignore[index]
        test_first, test_last = ranges["test"]  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        raise ValueError(
            f"omniverifier: {path} needs seed_ranges: {{dev: [first, last], test: [first, null]}}"
        ) from None
    if test_last is not None:
        raise ValueError(f"omniverifier: {path}: the test range has no end (test: [first, null])")
    return SeedRanges(dev_first, dev_last, int(test_first))


def check_dataset_split(dataset: str, split: str) -> SplitName:
    """`split`, checked; dev on data nothing was chosen on (not generated) is an error."""
    chosen = check_split(split, task="omniverifier")
    if dataset != "generated" and chosen == "dev":
        raise ValueError(
            f"omniverifier: dataset={dataset} has no dev split: nothing was chosen on it (all of "
            "it is test); choices are made on generated scenes with split=dev"
        )
    return chosen
