"""The report's shared data types: a leaderboard, its rows and cells, paired comparisons and the
reference numbers beside them. Builders and writers import these; this module imports none of
them (the package has no import circle)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._runs import Run
from ._samples import SampleRow
from ._schema import LeaderboardSchema, MetricSpec, headline_of

#: What reference numbers are when a task's reference.yaml does not say (``report.numbers``).
PAPER = "paper"


@dataclass
class Cell:
    value: float = math.nan
    low: float = math.nan
    high: float = math.nan
    n: int = 0
    interval: str = ""  # method of the interval ("bootstrap", "Wilson", ...), "" when none
    note: str = ""
    # why the value is undefined where the metric cannot be computed (e.g. one class only)
    undefined: str = ""

    @property
    def present(self) -> bool:
        return math.isfinite(self.value)


@dataclass
class Comparison:
    metric_id: str
    baseline: str  # label of the row compared against
    delta: float
    low: float
    high: float
    p_value: float
    test: str
    n_paired: int
    p_holm: float = math.nan
    note: str = ""


@dataclass
class Row:
    run: Run
    model: str
    method: str
    settings: dict[str, str]
    scorer: str | None  # methods_from_scorers: the scorer this row reads
    method_key: str | None = None  # {method} templates: the method substituted into keys
    # split_rows_by: the part this row shows (POOLED_PART for the whole run); None: no split
    part: str | None = None
    run_parts: tuple[str, ...] = ()  # every part of this row's run (empty: no split)
    is_slice: bool = False  # True: cells come from a part's samples only, never the log header
    cells: dict[str, Cell] = field(default_factory=dict)
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    samples: int = 0
    scored: int = 0
    model_failures: int = 0
    infra_errors: int = 0
    # scored samples whose reply did not parse (a subset of model_failures; see _count_outcomes)
    format_failures: int = 0
    truncated: int = 0  # scored samples whose reply was cut by the token limit
    # fewer scored samples than the task's declared minimum: never set against a paper number
    smoke: bool = False
    # not run under the paper's protocol (preset=paper, protocol_met): reference numbers are
    # shown beside it as context, never as a comparison
    off_protocol: bool = False
    # metric id -> (fpr, tpr) for ROC plots
    roc: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    # metric id -> per-sample values by sample key (for paired tests and plots)
    per_sample: dict[str, Any] = field(default_factory=dict)
    sample_rows: list[SampleRow] = field(default_factory=list, repr=False)
    notes: list[str] = field(default_factory=list)

    @property
    def comparable(self) -> bool:
        """Whether this row may be set against the task's reference numbers: not a smoke run,
        under the paper's protocol, and not on the dev split (where choices were made)."""
        return not self.smoke and not self.off_protocol and self.run.data_split != "dev"

    @property
    def label(self) -> str:
        parts = [self.model]
        if self.method:
            parts.append(self.method)
        parts.extend(f"{k}={v}" for k, v in self.settings.items())
        if self.part is not None:
            parts.append(self.part)
        return " · ".join(parts)


@dataclass(frozen=True)
class ReferenceRow:
    model: str
    metric: str
    value: float
    method: str | None = None
    dataset: str | None = None
    note: str = ""
    scaled: bool = False  # the file gave an explicit 'scale' (so no percent guessing)


@dataclass
class ReferenceTable:
    task: str
    paper: str
    source: str
    path: str
    rows: list[ReferenceRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # `report:` in reference.yaml: what the numbers are ("paper", "PyOD run", ...) and the
    # fewest scored samples a run needs to be set against them (fewer: a smoke run)
    numbers: str = PAPER
    min_samples: int | None = None


@dataclass
class ReferenceMatch:
    ref: ReferenceRow
    metric_id: str | None
    value: float  # in our units
    ours: list[tuple[str, Cell]]  # (row label, cell)
    note: str = ""


@dataclass
class Leaderboard:
    task: str
    schema: LeaderboardSchema
    metrics: list[MetricSpec]
    rows: list[Row]
    baseline: str | None = None
    reference: ReferenceTable | None = None
    reference_matches: list[ReferenceMatch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def headline(self) -> MetricSpec | None:
        return headline_of(self.metrics)
