"""What one instance's strengthening produces, and how it is configured: the pipeline's
configuration, the model roles, and the records of mutants, new tests, candidate verdicts and the
instance's outcome (``InstanceOutcome.as_dict()`` is what the task's scorer reads)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

TextGen = Callable[[str, str], Awaitable[str]]
"""A model role: (system prompt, user prompt) → reply text. Raising is an infra error."""


@dataclass(frozen=True)
class PipelineConfig:
    k_scope: int = 5
    k_file: int = 1
    mutate_scope: Literal["hunks", "changed", "slice"] = "hunks"
    max_mutants: int = 40
    tests_from: frozenset[str] = frozenset({"differential", "explore", "near", "foreign"})
    mutants_from: frozenset[str] = frozenset({"operators"})
    model_mutants: int = 2
    judge_repeats: int = 1
    retries: int = 3
    differential_examples: int = 200
    explore_examples: int = 300
    explore_tests: int = 100
    near_examples: int = 500
    near_tests: int = 100
    foreign_examples: int = 30
    foreign_tests: int = 64
    flaky_reruns: int = 3
    job_timeout: float = 60.0
    mutant_timeout: float = 10.0
    plan_timeout: int = 900
    candidate_timeout: int = 300
    seed: int = 0


@dataclass
class Roles:
    tester: TextGen | None = None
    mutator: TextGen | None = None
    judge: TextGen | None = None


@dataclass
class MutantRecord:
    id: str
    origin: Literal["operator", "model"]
    family: str
    description: str
    path: str
    line: int
    status: str = "pending"
    # killed_original | no_tests | survived | equivalent_bytecode | equivalent_search |
    # judge_rejected | does_not_apply | timeout | killed_new | survived_new
    killed_by: list[str] = field(default_factory=list)
    killed_by_new: list[str] = field(default_factory=list)
    killed_by_removed: list[str] = field(default_factory=list)
    note: str = ""


@dataclass
class NewTest:
    name: str
    origin: Literal["differential", "explore", "near", "foreign", "model_coverage", "model_mutant"]
    module: str  # test module path (relative to the repo)
    nodeid: str
    code: str
    target: str = ""  # mutant id or covered lines
    accepted: bool = False
    reason: str = ""
    kills: list[str] = field(default_factory=list)


@dataclass
class CandidateVerdict:
    system: str
    kind: str
    origin: str = "own"  # the candidate set it belongs to (own, outside, model)
    problem: str | None = None  # malformed / timeout / runner_error reason code
    detail: str = ""
    resolved_original: bool = False
    resolved_abs: bool = False
    f2p_failed: list[str] = field(default_factory=list)
    p2p_failed: list[str] = field(default_factory=list)
    new_failed: list[str] = field(default_factory=list)
    removed_failed: list[str] = field(default_factory=list)

    @property
    def rejected(self) -> bool:
        return self.resolved_original and not self.resolved_abs


@dataclass
class InstanceOutcome:
    instance_id: str
    gold_resolved: bool = False
    base_fails_f2p: bool = False
    flaky_original: list[str] = field(default_factory=list)
    flaky_new: list[str] = field(default_factory=list)
    slices: list[dict[str, Any]] = field(default_factory=list)
    coverage_before: float = 0.0
    coverage_after: float = 0.0
    mutants: list[MutantRecord] = field(default_factory=list)
    new_tests: list[NewTest] = field(default_factory=list)
    candidates: list[CandidateVerdict] = field(default_factory=list)
    model_events: list[dict[str, Any]] = field(default_factory=list)
    removed_overlap: dict[str, Any] | None = None
    duplicate_tests: int = 0  # generated tests dropped: the same body as an earlier one
    unexpressible: dict[str, int] = field(
        default_factory=dict
    )  # drawn values with no code, by type
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    sandbox_commands: int = 0

    @property
    def strengthened(self) -> bool:
        return any(c.rejected for c in self.candidates)

    def accepted_tests(self) -> list[NewTest]:
        return [t for t in self.new_tests if t.accepted]

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["strengthened"] = self.strengthened
        return out
