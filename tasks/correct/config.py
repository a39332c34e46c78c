"""correct's frozen config (one field per `@task` parameter), where its data comes from, and
its deviations from the paper, as data."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.data import DatasetNotFoundError, content_hash, data_path
from harness.paths import cache_dir
from harness.splits import SourceSplit, SplitName, check_split, load_source_split
from methods.correct import PAPER_K, TRUNCATION_STRATEGY, LocaliserConfig, Trajectory
from tasks._config import Deviation, TaskConfig
from tasks.correct.dataset import HOW_TO_GET, WHO_AND_WHEN_DIR, trajectory_to_record
from tasks.correct.solver import Method

__all__ = [
    "COUNTER_NAME",
    "CorrectConfig",
    "DEVIATIONS",
    "DataSource",
    "Subset",
    "load_split",
    "question_of",
]

Subset = Literal["algorithm_generated", "hand_crafted", "both", "injected"]
SchemaSource = Literal["distil", "template"]
EmbedderName = Literal["auto", "minilm", "tfidf"]

#: How prompts are counted (the log's `token_counter`).
COUNTER_NAME = "the model's tokenizer when its weights are local, else ~3 chars/token"
_FOLDERS = {
    "algorithm_generated": "Algorithm-Generated",
    "hand_crafted": "Hand-Crafted",
    "injected": "Injected",
}


@dataclass(frozen=True)
class DataSource:
    """Where the trajectories come from: a folder (`root`), or a hub id when `root` is None."""

    root: Path | None
    hub_id: str | None
    description: str

    def location(self) -> Path | str:
        return self.root if self.root is not None else str(self.hub_id)


@dataclass(frozen=True)
class CorrectConfig(TaskConfig):
    """The `correct` task's parameters (see its docstring)."""

    method: Method
    subset: Subset
    split: str
    k: int | None
    with_ground_truth: bool
    max_prompt_tokens: int
    max_new_tokens: int
    schema_source: SchemaSource
    schema_max_tokens: int
    embedder: EmbedderName
    cache_capacity: int | None
    merge_threshold: float | None
    tolerance: int
    step_max_calls: int | None
    limit_trajectories: int | None
    injected_dir: str | None
    who_and_when: str | None
    strict_data: bool
    seed: int

    def __post_init__(self) -> None:
        check_split(self.split, task="correct")

    @property
    def split_name(self) -> SplitName:
        return check_split(self.split, task="correct")

    @property
    def subsets(self) -> list[str]:
        return ["algorithm_generated", "hand_crafted"] if self.subset == "both" else [self.subset]

    def evaluated(
        self, pools: dict[str, list[Trajectory]], source_split: SourceSplit
    ) -> list[Trajectory]:
        """The trajectories evaluated: each subset's trajectories whose question is on `split`
        (tasks/correct/splits.yaml), the first `limit_trajectories` of them (file order)."""
        limit = self.limit_trajectories
        out = []
        for name in self.subsets:
            kept = source_split.select(pools[name], question_of, self.split)
            out.extend(kept[:limit] if limit else kept)
        if not out:
            raise ValueError(
                f"correct: no trajectory of subset={self.subset} has its question on "
                f"split={self.split} (tasks/correct/splits.yaml); use split=all or another subset"
            )
        return out

    def localiser_config(self, count_tokens: Callable[[str], int]) -> LocaliserConfig:
        return LocaliserConfig(
            max_prompt_tokens=self.max_prompt_tokens,
            count_tokens=count_tokens,
            with_ground_truth=self.with_ground_truth,
            seed=self.seed,
            max_new_tokens=self.max_new_tokens,
        )

    def k_for(self, subset: str) -> int:
        """Schemata retrieved per trajectory of `subset`: `k`, else the paper's."""
        if self.k is not None:
            return self.k
        return PAPER_K["correct_error" if subset == "injected" else subset]

    def source(self) -> DataSource:
        """Where the trajectories are read from; a missing folder is an error naming it."""
        if self.subset == "injected":
            root = (
                Path(self.injected_dir)
                if self.injected_dir
                else cache_dir() / "correct" / "injected"
            )
            if not (root / "Injected").is_dir():
                raise DatasetNotFoundError(
                    f"no injected trajectories in {root / 'Injected'}; generate them with "
                    f"`python -m tasks.correct.inject --model <model> --n 20 --out {root}`"
                )
            return DataSource(root, None, f"generated: tasks.correct.inject ({root})")
        if self.who_and_when is not None and self.who_and_when.startswith("hf://"):
            return DataSource(
                None, self.who_and_when, f"Who&When from {self.who_and_when} via datasets"
            )
        if self.who_and_when is not None:
            root = Path(self.who_and_when)
            if not root.is_dir():
                raise DatasetNotFoundError(
                    f"who_and_when={self.who_and_when}: no such folder (expected "
                    "Algorithm-Generated/ and Hand-Crafted/ inside, or a hub id "
                    "hf://Kevin355/Who_and_When)"
                )
            return DataSource(root, None, f"Who&When from the folder {root.name}")
        root = data_path(WHO_AND_WHEN_DIR, how_to_get=HOW_TO_GET)
        return DataSource(
            root, None, "Who&When (ag2ai/Agents_Failure_Attribution f4d2b6d) via HARNESS_DATA_DIR"
        )

    def data_hash(self, source: DataSource, pools: dict[str, list[Trajectory]]) -> str:
        """The folders' content hash, or a hash of the records read from the hub."""
        if source.root is None:
            return _records_hash([t for name in self.subsets for t in pools[name]])
        return content_hash(*[source.root / _FOLDERS[n] for n in self.subsets])


def question_of(t: Trajectory) -> str:
    """The split's unit of a trajectory: its Who&When `question_ID` (a GAIA or AssistantBench
    question; 45 questions have a trajectory in both subsets), else its own id (an injected
    trajectory written without one)."""
    return str(t.metadata.get("question_ID") or t.id)


def load_split() -> SourceSplit:
    """correct's frozen split by question (tasks/correct/splits.yaml)."""
    return load_source_split("correct")


def _records_hash(trajectories: list[Trajectory]) -> str:
    """sha256 over the trajectories as records (a hub dataset has no folder to hash)."""
    digest = hashlib.sha256()
    for t in trajectories:
        digest.update(json.dumps(trajectory_to_record(t), sort_keys=True, default=str).encode())
    return f"sha256:{digest.hexdigest()}"


def _correct(c: CorrectConfig) -> bool:
    return c.method == "correct"


#: Every way a run departs from CORRECT / Who&When, in the order the log lists them.
#: `embedder_used` in the context is the embedder the CORRECT localiser actually uses.
DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "explicit_step_ids: turns shown as 'Step <original index> - <speaker>:' (Who&When's "
        "all-at-once counts turns)"
    ),
    Deviation(
        f"truncation={TRUNCATION_STRATEGY}: prompts fitted to "
        f"max_prompt_tokens={{max_prompt_tokens}} ({COUNTER_NAME})"
    ),
    Deviation("step accuracy is exact integer match (CORRECT), not Who&When's substring test"),
    Deviation(
        "embedder={embedder_used}: all-MiniLM-L6-v2 / TF-IDF instead of BGE-M3 (weights not "
        "reachable)",
        when=_correct,
    ),
    Deviation(
        "schema_source=template: schemata built from the gold annotation without a model",
        when=lambda c: _correct(c) and c.schema_source == "template",
    ),
    Deviation(
        "schema_max_tokens={schema_max_tokens} (paper's local path: 1,024)",
        when=lambda c: (
            _correct(c) and c.schema_source != "template" and c.schema_max_tokens != 1024
        ),
    ),
    Deviation(
        "schema distillation greedy (paper's local path: temperature 0.7, top-p 0.95)",
        when=_correct,
    ),
    Deviation(
        "dynamic cache management on: capacity={cache_capacity}, merge_threshold={merge_threshold}",
        when=lambda c: (
            _correct(c) and (c.cache_capacity is not None or c.merge_threshold is not None)
        ),
    ),
    Deviation(
        "with_ground_truth=False: the task's answer is not shown (Who&When's second setting)",
        when=lambda c: not c.with_ground_truth,
    ),
    Deviation(
        "step_max_calls={step_max_calls}: step-by-step stops early (last step predicted)",
        when=lambda c: c.step_max_calls is not None and c.method == "step_by_step",
    ),
    Deviation(
        "split={split}: only the trajectories whose question is on the {split} side of "
        "tasks/correct/splits.yaml ({n_evaluated} of {n_pool}); the paper evaluates all of them "
        "(split=all)",
        when=lambda c: c.split != "all",
    ),
    Deviation(
        "limit_trajectories={limit_trajectories} per subset (pool stays whole)",
        when=lambda c: bool(c.limit_trajectories),
    ),
)
