"""Dev/test splits by source: what the project tuned on never scores a headline (issue 29).

Every task whose rules, prompts, thresholds or hyper-parameters were chosen by looking at data
splits that data by *source* (docval by vendor, swe_abs by project, dispat by dataset, ...), so
that nothing of a test source was ever seen while choosing. The split is data, frozen in the task
folder before any tuning (`tasks/<name>/splits.yaml`):

    unit: "vendor (SROIE `company`)"   # what one source is
    dev_fraction: 0.34                 # the hash rule's share of dev, for sources listed nowhere
    dev: [ ... ]                       # the frozen lists: every source of the shipped data
    test: [ ... ]

A source the lists do not name (data the project never saw) goes to a side by a stable hash of
``"<task>:<source>"`` (`hash_side`), so a new source never moves an old one and a re-run never
moves anything. `freeze` builds the lists by that same rule (`python -m harness.splits freeze`),
and each task's tests check that its file covers every source of the shipped data.

`split=test` is every task's default for a headline; `split=dev` is where a choice is made;
`split=all` is both (a smoke run, or a comparison with a paper that reports on everything) and is
labelled as such. The run records its split in the log's metadata (`data_split`, from
`split_metadata`) and the report labels every row with it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

import yaml

__all__ = [
    "SPLITS",
    "SourceSplit",
    "SplitName",
    "check_split",
    "freeze",
    "hash_side",
    "load_source_split",
    "split_metadata",
]

SplitName = Literal["dev", "test", "all"]
Side = Literal["dev", "test"]
SPLITS: tuple[str, ...] = get_args(SplitName)

T = TypeVar("T")

_TASKS_DIR = Path(__file__).resolve().parent.parent / "tasks"


def check_split(split: str, *, task: str) -> SplitName:
    """`split` when it is one of dev, test, all; else a `ValueError` naming the task."""
    if split not in SPLITS:
        raise ValueError(f"{task}: split={split!r}; choose one of {', '.join(SPLITS)}")
    return split  # type: ignore[return-value]


def hash_side(task: str, source: str, dev_fraction: float) -> Side:
    """The side of a source no frozen list names: dev when the first 8 bytes of
    sha256("<task>:<source>"), read as a fraction of 2**64, fall below `dev_fraction`."""
    digest = hashlib.sha256(f"{task}:{source}".encode()).digest()
    return "dev" if int.from_bytes(digest[:8], "big") / 2**64 < dev_fraction else "test"


@dataclass(frozen=True)
class SourceSplit:
    """A task's frozen split of its sources into dev and test."""

    task: str
    unit: str
    dev_fraction: float
    dev: frozenset[str]
    test: frozenset[str]

    def __post_init__(self) -> None:
        both = sorted(self.dev & self.test)
        if both:
            raise ValueError(f"{self.task} split: sources on both sides: {both[:5]}")
        if not 0.0 < self.dev_fraction < 1.0:
            raise ValueError(f"{self.task} split: dev_fraction must be in (0, 1)")

    def side(self, source: str) -> Side:
        """dev or test: the frozen lists first, the hash rule for a source they do not name."""
        if source in self.dev:
            return "dev"
        if source in self.test:
            return "test"
        return hash_side(self.task, source, self.dev_fraction)

    def keeps(self, source: str, split: SplitName) -> bool:
        return split == "all" or self.side(source) == split

    def select(self, items: Iterable[T], source_of: Callable[[T], str], split: str) -> list[T]:
        """The items whose source is on `split` (all of them for ``all``), in order."""
        chosen = check_split(split, task=self.task)
        return [item for item in items if self.keeps(source_of(item), chosen)]

    def recorded_split(self, sources: Iterable[str], split: str) -> SplitName:
        """The split a run over `sources` is labelled with when it was asked for `split`: the
        side its data is on (``all`` for a mix) whenever some source lies off `split`'s side
        (a dataset or instance named on its own), so dev data is never labelled test."""
        chosen = check_split(split, task=self.task)
        sides = {self.side(s) for s in sources}
        if chosen == "all" or not sides or sides == {chosen}:
            return chosen
        return "all" if len(sides) > 1 else sides.pop()

    def off_side_note(self, source: str, split: str, named: str, *, verb: str = "is") -> str | None:
        """The run's note when `source`, reached through something named on its own (`named`:
        "dataset=wbc", "instances of django/django"), is off `split`'s side; else None."""
        side = self.side(source)
        if split == "all" or side == split:
            return None
        return (
            f"{named} {verb} on the {side} side of the frozen split "
            f"(tasks/{self.task}/splits.yaml), not split={split}: the run is labelled by the "
            "split its data is on"
        )

    def unseen(self, sources: Iterable[str]) -> list[str]:
        """The sources neither frozen list names (placed by the hash rule)."""
        return sorted({s for s in sources if s not in self.dev and s not in self.test})


def load_source_split(task: str, path: Path | None = None) -> SourceSplit:
    """`tasks/<task>/splits.yaml` (or `path`), checked; a missing or malformed file is an error
    naming it."""
    file = path or _TASKS_DIR / task / "splits.yaml"
    try:
        raw = yaml.safe_load(file.read_text())
    except OSError as ex:
        raise FileNotFoundError(f"{task}: no frozen split at {file} ({ex.strerror})") from None
    except yaml.YAMLError as ex:
        raise ValueError(f"{task}: {file} is not valid YAML: {ex}") from None
    if not isinstance(raw, dict) or not {"unit", "dev_fraction", "dev", "test"} <= set(raw):
        raise ValueError(f"{task}: {file} needs unit, dev_fraction, dev and test")
    for side in ("dev", "test"):
        if not isinstance(raw[side], list) or not all(isinstance(s, str) for s in raw[side]):
            raise ValueError(f"{task}: {file}: {side} must be a list of source names")
    return SourceSplit(
        task=task,
        unit=str(raw["unit"]),
        dev_fraction=float(raw["dev_fraction"]),
        dev=frozenset(raw["dev"]),
        test=frozenset(raw["test"]),
    )


def freeze(task: str, sources: Sequence[str], *, unit: str, dev_fraction: float) -> str:
    """The text of a `splits.yaml` for `sources`, each placed by the hash rule (the rule a
    source no list names follows later, so freezing changes nothing but makes it explicit)."""
    unique = sorted(set(sources))
    sides = {s: hash_side(task, s, dev_fraction) for s in unique}
    body: dict[str, Any] = {
        "unit": unit,
        "dev_fraction": dev_fraction,
        "dev": [s for s in unique if sides[s] == "dev"],
        "test": [s for s in unique if sides[s] == "test"],
    }
    header = (
        f"# {task}'s frozen dev/test split by source (harness/splits.py). Choices made by\n"
        "# looking at data are made on dev only; headlines are computed on test. Frozen before\n"
        "# tuning: never move a source between the lists.\n"
    )
    return header + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=100)


def split_metadata(split: SplitName, source_split: SourceSplit | None) -> dict[str, Any]:
    """What a task records in its log's metadata about its split (`task_metadata(**...)`)."""
    return {
        "data_split": split,
        "data_split_unit": source_split.unit if source_split is not None else "",
    }


def _main(argv: Sequence[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m harness.splits",
        description="Write a task's frozen split of the given sources (one per line on stdin).",
    )
    parser.add_argument("command", choices=["freeze"])
    parser.add_argument("task")
    parser.add_argument("--unit", required=True)
    parser.add_argument("--dev-fraction", type=float, default=0.34)
    args = parser.parse_args(argv)
    import sys

    sources = [line.strip() for line in sys.stdin if line.strip()]
    sys.stdout.write(freeze(args.task, sources, unit=args.unit, dev_fraction=args.dev_fraction))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(_main(sys.argv[1:]))
