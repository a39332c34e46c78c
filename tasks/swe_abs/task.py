"""`swe_abs`: SWE-ABS adversarial test-suite strengthening (ICML 2026) on SWE-bench-format
instances: slice the gold patch, generate coverage-driven and mutant-killing tests, keep those
that pass on gold and fail on a mutant, and re-evaluate every candidate patch — including the
model under test's own — under the original and the strengthened tests.

    harness eval task=swe_abs                                  # model solves + model-free strengthening
    harness eval task=swe_abs solver=none tests_from=model_free  # no model at all
    harness eval task=swe_abs tests_from=both mutants_from=both role.judge=<spec>
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.util import SandboxEnvironmentSpec

from harness.records import task_metadata
from harness.splits import SplitName, check_split, load_source_split, split_metadata
from methods.swe_abs import Instance, PipelineConfig
from tasks.swe_abs.dataset import (
    InstanceSelection,
    instance_to_sample,
    load_source,
    project_of,
    select_instances,
)
from tasks.swe_abs.fetch import require_site, sdist_archive
from tasks.swe_abs.outside import CandidateSets, with_outside_candidates
from tasks.swe_abs.scorer import swe_abs_scorer
from tasks.swe_abs.solver import swe_abs_solver

TASK_VERSION = "1.0.0"

TestsFrom = Literal["model_free", "model", "both", "none"]
MutantsFrom = Literal["operators", "model", "both"]


@dataclass(frozen=True)
class Deviation:
    """A recorded deviation from the paper: its text, when the run's configuration has it."""

    text: str
    applies: Callable[[SweAbsConfig], bool] = lambda _cfg: True

    def render(self, cfg: SweAbsConfig) -> str:
        return self.text.format(cfg=cfg)


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "offline_instances: 31 instances on pinned sdists (six, inflection, toolz, tabulate, "
        "python-slugify, boltons; flask's pallets__flask-5014 rebuilt on the Flask 2.3.0 sdist), "
        "not SWE-bench Verified's 500 Docker images; 30 of them have hand-written bugs whose fix "
        "is the sdist's own function",
        lambda cfg: cfg.dataset_file is None,  # SWE-bench records from a file are not ours
    ),
    Deviation(
        "python_ast_slice: the slice is computed on Python's ast (def/use per statement, "
        "flow-insensitive within its region) instead of tree-sitter"
    ),
    Deviation(
        "coverage_py: slice coverage from coverage.py with one context per test; import-time "
        "lines (def/class headers, module-level code) count as executed, as in the paper's trace "
        "run"
    ),
    Deviation(
        "warm_runner: tests run in one warm pytest process per sandbox command, each variant in a "
        "forked child with the changed functions' code swapped in (untrusted model patches run "
        "in a fresh tree and process instead)"
    ),
    Deviation(
        "candidates_hand_written: the leaderboard's 30 agents' patches are replaced by "
        "hand-written candidates per instance (>= 1 correct re-implementation, >= 2 wrong) and "
        "the model under test's own patch"
    ),
    Deviation(
        "model_free_tests: besides (or instead of) the model test writer, tests come from "
        "Hypothesis: characterisation tests of the gold patch (stage 1), the first "
        "disagreement with a surviving mutant (stage 3), the gold code on near inputs "
        "(near_tests: small edits of declared values) and the gold code's rejections of "
        "foreign inputs (foreign_tests), each input domain hand-written per instance",
        lambda cfg: cfg.tests_from in ("model_free", "both"),
    ),
    Deviation(
        "operator_mutants: mutants are mutmut-family operator mutants of the gold hunks, not "
        "LLM-written",
        lambda cfg: cfg.mutants_from == "operators",
    ),
    Deviation(
        "judge_repeats={cfg.judge_repeats} (paper: 3 per judge model)",
        lambda cfg: cfg.judge_repeats != 3 and cfg.mutants_from != "operators",
    ),
)
_TESTS_FROM = {
    "model_free": {"differential", "explore", "near", "foreign"},
    "model": {"model"},
    "none": set(),
    "both": {"differential", "explore", "near", "foreign", "model"},
}
_MUTANTS_FROM = {"operators": {"operators"}, "model": {"model"}, "both": {"operators", "model"}}


@dataclass(frozen=True)
class SweAbsConfig:
    """The task's parameters, built once from the ``@task`` arguments (same names).

    instances: comma-separated instance ids (default: all). projects: comma-separated projects
    (toolz, six, inflection, tabulate, python-slugify, boltons, flask). dataset_file: a
    SWE-bench-format JSON/JSONL/Parquet file or hub dataset (``hf://princeton-nlp/SWE-bench_Verified``
    = its pinned commit) instead of the bundled instances. candidates: which candidate sets are
    graded: ``own`` (the instances' own), ``outside`` (only the first outside set, written apart
    from this project's generator, on the instances it covers), ``outside2`` (only the second,
    written after the generator was tuned on the first and graded once), ``outside3`` (only the
    third, written while the generator was tuned on the first two), ``outside4`` (only the
    fourth, written while it was tuned on the first three), ``outside5`` (only the fifth, on the
    instances the fourth did not use), ``outside6`` (only the sixth, on all 31 instances),
    ``outside7`` (only the seventh, on all 31 instances), ``outside8`` (only the eighth, on all
    31 instances), ``outside9`` (only the ninth, on all 31 instances), ``outside10`` (only the
    tenth, on all 31 instances), ``outside11`` (only the eleventh, on all 31 instances), ``outside12`` (only the
    twelfth, on all 31 instances), ``outside13`` (only the thirteenth, on all 31 instances), ``outside14``
    (only the fourteenth, on all 31 instances), ``outside15`` (only the fifteenth, on all 31
    instances), ``outside16`` (only the sixteenth, on all 31 instances), ``outside17`` (only the
    seventeenth, written blind, on all 31 instances), ``outside18`` (only the eighteenth, written
    blind, on all 31 instances),
    ``all``
    (own and every outside set graded so far, on every instance), ``all_correct`` (the same with
    only the outside sets' correct patches: a check that no correct patch is rejected, at a
    fraction of the time). solver: model (the model under test writes a patch, graded
    before/after) or none. tests_from: new tests from the model-free generators (differential +
    explore), the model (tester role), both, or none. mutants_from: operator mutants of the
    patched hunks, model-written (judged), or both. mutate_scope: where operator mutants go: the
    gold hunks (paper), the changed lines, the slice. max_mutants: operator mutants per instance
    (a seeded sample beyond this). model_mutants: model-written mutants per instance (paper: 2).
    judge_repeats: equivalence-judge verdicts per model mutant (paper: 3). retries: tries per
    phase of the model test writer (paper: 3). solver_attempts: the solver's tries.
    flaky_reruns: gold runs of the new suite (a test whose status varies is flaky, excluded).
    differential_examples: Hypothesis examples per surviving mutant. explore_examples: examples
    of the characterisation search. explore_tests: characterisation tests kept per instance.
    near_examples: examples of the near-input search. near_tests: characterisation tests of the
    gold code on near inputs (declared values edited: case, digits, a constant of the code,
    ..., and what each argument's documented domain admits; 0: none; see the task README).
    foreign_tests: tests pinning the gold code's rejections of foreign inputs per instance (0:
    none; see the task README).
    max_tokens: generation cap of every model call. test_timeout: seconds for one test run of
    one variant (a mutant gets 10x its covering tests' clean time + 1 s, at most this).
    sandbox: bwrap (default), docker or local (no isolation; debugging only). repo_dir: where a
    SWE-bench image holds the repository at its base commit. memory_mb: the sandbox's memory
    limit. sample_time_limit: seconds per instance. seed: seeds the mutant sample. split:
    ``test`` (default), ``dev`` or ``all``: the instances of the projects on that side of the
    frozen split (``splits.yaml``, by project); instances named in ``instances`` run whatever
    their side, with a note, and the log records the side their data is on.
    """

    instances: str | None = None
    projects: str | None = None
    dataset_file: str | None = None
    candidates: CandidateSets = "own"
    solver: Literal["model", "none"] = "model"
    tests_from: TestsFrom = "model_free"
    mutants_from: MutantsFrom = "operators"
    mutate_scope: Literal["hunks", "changed", "slice"] = "hunks"
    max_mutants: int = 40
    model_mutants: int = 2
    judge_repeats: int = 1
    retries: int = 3
    solver_attempts: int = 1
    flaky_reruns: int = 3
    differential_examples: int = 200
    explore_examples: int = 300
    explore_tests: int = 100
    near_examples: int = 500
    near_tests: int = 100
    foreign_tests: int = 64
    max_tokens: int = 1024
    test_timeout: int = 60
    sandbox: Literal["bwrap", "docker", "local"] = "bwrap"
    repo_dir: str = "/testbed"
    memory_mb: int = 2048
    sample_time_limit: int = 3600
    seed: int = 0
    split: SplitName = "test"

    def __post_init__(self) -> None:
        check_split(self.split, task="swe_abs")

    def pipeline(self) -> PipelineConfig:
        return PipelineConfig(
            mutate_scope=self.mutate_scope,
            max_mutants=self.max_mutants,
            tests_from=frozenset(_TESTS_FROM[self.tests_from]),
            mutants_from=frozenset(_MUTANTS_FROM[self.mutants_from]),
            model_mutants=self.model_mutants,
            judge_repeats=self.judge_repeats,
            retries=self.retries,
            differential_examples=self.differential_examples,
            explore_examples=self.explore_examples,
            explore_tests=self.explore_tests,
            near_examples=self.near_examples,
            near_tests=self.near_tests,
            foreign_tests=self.foreign_tests,
            flaky_reruns=self.flaky_reruns,
            job_timeout=float(self.test_timeout),
            mutant_timeout=float(self.test_timeout),
            candidate_timeout=max(4 * self.test_timeout, 120),
            seed=self.seed,
        )

    def deviations(self) -> list[str]:
        return [d.render(self) for d in DEVIATIONS if d.applies(self)]

    def load(self) -> tuple[InstanceSelection, str, str]:
        """The chosen instances (checked, their sdists present, under the split), their source
        and its hash."""
        loaded, source, source_hash = load_source(self.dataset_file)
        loaded, source, source_hash = with_outside_candidates(
            loaded, source, source_hash, self.candidates
        )
        if self.instances:
            wanted = [i.strip() for i in self.instances.split(",") if i.strip()]
            unknown = sorted(set(wanted) - {i.instance_id for i in loaded})
            if unknown:
                raise ValueError(f"swe_abs: unknown instance ids {unknown} in {source}")
            loaded = [i for i in loaded if i.instance_id in wanted]
        if self.projects:
            names = {p.strip().lower() for p in self.projects.split(",") if p.strip()}
            loaded = [i for i in loaded if project_of(i) in names]
        chosen = select_instances(
            loaded, self.split, load_source_split("swe_abs"), named=bool(self.instances)
        )
        if not chosen.instances:
            raise ValueError(
                f"swe_abs: no instance of {source} (projects={self.projects or 'all'}) is on "
                f"split={self.split}; pass split=dev or split=all"
            )
        for req in sorted(
            {i.base_commit[6:] for i in chosen.instances if i.base_commit.startswith("sdist:")}
        ):
            sdist_archive(req)  # fails at once, naming the set-up step, when not fetched
        return chosen, source, source_hash

    def solver_for(self, loaded: list[Instance], site: Path) -> Any:
        return swe_abs_solver(
            {i.instance_id: i for i in loaded},
            self.pipeline(),
            solve=self.solver == "model",
            solver_attempts=self.solver_attempts,
            model_roles=self.tests_from in ("model", "both")
            or self.mutants_from in ("model", "both"),
            max_tokens=self.max_tokens,
            site=str(site),
            provision="bind" if self.sandbox == "bwrap" else "copy",
            site_tar=None if self.sandbox == "bwrap" else _site_tar(site),
            repo_dir=self.repo_dir,
        )

    def metadata(self, source: str, source_hash: str, chosen: InstanceSelection) -> dict[str, Any]:
        return task_metadata(
            dataset_source=source,
            dataset_hash=source_hash,
            deviations=self.deviations(),
            generated=False,
            instances=len(chosen.instances),
            solver=self.solver,
            tests_from=self.tests_from,
            mutants_from=self.mutants_from,
            sandbox=self.sandbox,
            candidates=self.candidates,
            **split_metadata(chosen.data_split, load_source_split("swe_abs")),
            data_split_asked=self.split,
            data_split_projects=chosen.projects,
            data_split_notes=chosen.notes,
        )


def _site_tar(site: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(site), arcname="swe_abs_site")
    return buf.getvalue()


def _sandbox_spec(kind: str, site: Path, memory_mb: int) -> Any:
    if kind == "bwrap":
        from sandboxes.bwrap import BwrapConfig

        return SandboxEnvironmentSpec(
            "bwrap",
            BwrapConfig(
                ro_binds=[str(site)], memory_mb=memory_mb, max_processes=256, timeout_s=1800
            ),
        )
    if kind == "docker":
        from sandboxes import compose_docker_spec

        return compose_docker_spec()
    return "local"


@task
def swe_abs(
    instances: str | None = None,
    projects: str | None = None,
    dataset_file: str | None = None,
    candidates: CandidateSets = "own",
    solver: Literal["model", "none"] = "model",
    tests_from: TestsFrom = "model_free",
    mutants_from: MutantsFrom = "operators",
    mutate_scope: Literal["hunks", "changed", "slice"] = "hunks",
    max_mutants: int = 40,
    model_mutants: int = 2,
    judge_repeats: int = 1,
    retries: int = 3,
    solver_attempts: int = 1,
    flaky_reruns: int = 3,
    differential_examples: int = 200,
    explore_examples: int = 300,
    explore_tests: int = 100,
    near_examples: int = 500,
    near_tests: int = 100,
    foreign_tests: int = 64,
    max_tokens: int = 1024,
    test_timeout: int = 60,
    sandbox: Literal["bwrap", "docker", "local"] = "bwrap",
    repo_dir: str = "/testbed",
    memory_mb: int = 2048,
    sample_time_limit: int = 3600,
    seed: int = 0,
    split: SplitName = "test",
) -> Task:
    """SWE-ABS strengthening and re-evaluation (parameters: see :class:`SweAbsConfig`)."""
    cfg = SweAbsConfig(**{k: v for k, v in locals().items() if k in _FIELDS})
    chosen, source, source_hash = cfg.load()
    site = require_site()
    return Task(
        dataset=[instance_to_sample(i) for i in chosen.instances],
        solver=cfg.solver_for(chosen.instances, site),
        scorer=swe_abs_scorer(),
        sandbox=_sandbox_spec(cfg.sandbox, site, cfg.memory_mb),
        time_limit=cfg.sample_time_limit,
        version=TASK_VERSION,
        metadata=cfg.metadata(source, source_hash, chosen),
    )


_FIELDS = frozenset(SweAbsConfig.__dataclass_fields__)


# `make run`: one instance, the embedded model solves it (one attempt, a short reply: the reply
# was most of the time), the strengthening is model-free (≤ 60 s on 2 cores).
RUN_ALL_ARGS: dict[str, Any] = {
    "instances": "mahmoud__boltons-clamp-bounds",
    "solver": "model",
    "tests_from": "model_free",
    "max_tokens": 160,
    "explore_examples": 80,
    "differential_examples": 80,
    "near_examples": 60,
    "flaky_reruns": 2,
    "split": "dev",  # the clamp instance is boltons's, a dev project (splits.yaml)
}
