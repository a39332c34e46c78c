"""SWE-ABS on one instance: slice → coverage-driven tests → mutants → mutant-killing tests →
validation → re-evaluation of the candidate patches.

Stages as in the paper (notes on ``OpenAgentEval/SWE-ABS``):

0. must-cover lines of the gold patch (:mod:`methods.swe_abs._slicing`);
1. coverage-driven test generation — the model under test as test writer, shown the slice lines
   no test executes (phases: write → gold validation → coverage fix, up to ``retries`` tries
   each), and/or the model-free explorer (Hypothesis inputs that reach uncovered slice lines,
   recorded with the gold patch's output as characterisation tests);
2. mutants — operator mutants of the patched hunks (mutmut's families) and/or model-written
   mutants kept when an equivalence judge calls them relevant and valid; equivalent mutants are
   filtered by bytecode identity, then by a Hypothesis search for a disagreement; only mutants
   that survive the current tests go on;
3. mutant-killing tests — the differential generator (first disagreement → regression test)
   and/or the model as test writer shown the mutant; **a new test is kept only if it passes on
   the gold patch (in every one of ``flaky_reruns`` runs) and fails on a mutant**;
4. re-evaluation — every candidate patch is graded with SWE-bench's rule on FAIL_TO_PASS and
   PASS_TO_PASS; a previously resolved patch is rejected when any test of the strengthened suite
   is not OK/PASSED/SKIPPED.

Everything that executes code does so in the sandbox through :class:`Workspace`.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from methods.swe_abs._diff import parse_patch
from methods.swe_abs._mutation import Mutant
from methods.swe_abs._outcome import (
    CandidateVerdict,
    InstanceOutcome,
    MutantRecord,
    NewTest,
    PipelineConfig,
    Roles,
    TextGen,
)
from methods.swe_abs._slicing import MustCover, must_cover
from methods.swe_abs._stage_analyse import AnalyseStage
from methods.swe_abs._stage_common import Budget, source_files
from methods.swe_abs._stage_model import ModelStages
from methods.swe_abs._stage_validate import NEW_TESTS_HEADER, ValidateStage
from methods.swe_abs._workspace import Workspace

__all__ = [
    "NEW_TESTS_HEADER",
    "CandidateVerdict",
    "InstanceOutcome",
    "MutantRecord",
    "NewTest",
    "PipelineConfig",
    "Roles",
    "Strengthener",
    "TextGen",
]


class Strengthener(AnalyseStage, ModelStages, ValidateStage):
    """Runs the stages on one instance in one workspace (one module per stage:
    :mod:`.stage_analyse`, :mod:`.stage_model`, :mod:`.stage_validate`)."""

    def __init__(self, ws: Workspace, config: PipelineConfig, roles: Roles | None = None) -> None:
        self.ws = ws
        self.inst = ws.instance
        self.cfg = config
        self.roles = roles or Roles()
        self.out = InstanceOutcome(ws.instance.instance_id)
        self.test_files = ws.instance.test_files()
        self.sources = source_files(ws.instance.patch)
        self.mutants: dict[str, Mutant] = {}
        self.mutant_sources: dict[str, dict[str, Any]] = {}  # id -> variant
        self.budget = Budget()
        self.flaky_excluded: set[str] = set()
        self.new_dir = self.test_files[0].rsplit("/", 1)[0] if "/" in self.test_files[0] else ""
        self.gold_status: dict[str, str] = {}
        self.gold_coverage: dict[str, dict[str, list[int]]] | None = None
        self.run_timeout = config.job_timeout

    # -- stage 0 ------------------------------------------------------------------------
    def slice(self) -> dict[str, MustCover]:
        slices = {}
        for fp in parse_patch(self.inst.patch):
            if fp.path not in self.sources:
                continue
            slices[fp.path] = must_cover(
                fp.path,
                self.ws.gold_texts[fp.path],
                fp.changed_lines(),
                k_scope=self.cfg.k_scope,
                k_file=self.cfg.k_file,
            )
        self.out.slices = [asdict(s) for s in slices.values()]
        return slices

    # -- the run ---------------------------------------------------------------------------
    async def run(self) -> InstanceOutcome:
        started = time.monotonic()
        ws, cfg = self.ws, self.cfg
        await ws.prepare()
        slices = self.slice()
        self.targets = {p: list(s.target) for p, s in slices.items()}
        # stage 2a: operator mutants of the patched hunks (generated before the analyse run)
        if "operators" in cfg.mutants_from:
            self._operator_mutants(slices)
        trusted = [c for c in self.inst.candidates if c.trusted]
        await self._analyse(trusted)
        # stage 1 (model) and stage 2b (model mutants) need their own validation rounds
        if self.roles.tester is not None and "model" in cfg.tests_from:
            await self._model_coverage_tests()
        if self.roles.mutator is not None and "model" in cfg.mutants_from:
            await self._model_mutants()
        if self.roles.tester is not None and "model" in cfg.tests_from:
            await self._model_mutant_tests()
        await self._validate(trusted)
        untrusted = [c for c in self.inst.candidates if not c.trusted]
        for cand in untrusted:
            self.out.candidates.append(await self._fresh_candidate(cand))
        self._removed_overlap()
        self.out.seconds = round(time.monotonic() - started, 3)
        self.out.sandbox_commands = ws.commands
        return self.out
