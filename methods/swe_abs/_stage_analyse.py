"""Stages 2a and the analyse run: operator mutants of the gold hunks (bytecode-equivalent ones
filtered), then one sandbox run of gold (twice, with per-test coverage), base on FAIL_TO_PASS,
the trusted candidates, every mutant against the original tests (only the tests that execute its
line; import-time lines count for every test), the differential search on each survivor and the
characterisation search (stages 1 and 3 of the model-free generator)."""

from __future__ import annotations

import random
from typing import Any

from methods.swe_abs._diff import check_patch
from methods.swe_abs._grading import flaky_tests, swebench_grade
from methods.swe_abs._instance import Candidate
from methods.swe_abs._mutation import Mutant, bytecode_equivalent, generate_mutants
from methods.swe_abs._outcome import MutantRecord
from methods.swe_abs._slicing import MustCover
from methods.swe_abs._stage_common import (
    StageBase,
    failed_tests,
    generated_test_name,
    mutate_lines,
    static_executed,
)
from methods.swe_abs._workspace import RunnerError


class AnalyseStage(StageBase):
    def _operator_mutants(self, slices: dict[str, MustCover]) -> None:
        rng = random.Random(f"{self.cfg.seed}:{self.inst.instance_id}")
        pool: list[Mutant] = []
        for path, sl in slices.items():
            lines = mutate_lines(self.ws, path, self.cfg.mutate_scope, sl)
            gold = self.ws.gold_texts[path]
            for m in generate_mutants(path, gold, lines, skip_decorated=False):
                if bytecode_equivalent(gold, m.source, path):
                    self.out.mutants.append(
                        MutantRecord(
                            m.id,
                            "operator",
                            m.family,
                            m.description,
                            path,
                            m.line,
                            status="equivalent_bytecode",
                        )
                    )
                    continue
                pool.append(m)
        if len(pool) > self.cfg.max_mutants:
            pool = sorted(rng.sample(pool, self.cfg.max_mutants), key=lambda m: (m.path, m.line))
            self.out.notes.append(f"operator mutants sampled: {self.cfg.max_mutants} kept")
        for m in pool:
            self.mutants[m.id] = m
            self.mutant_sources[m.id] = m.variant()
            self.out.mutants.append(
                MutantRecord(m.id, "operator", m.family, m.description, m.path, m.line)
            )

    def _import_time(self, m: Mutant) -> list[int]:
        lines = static_executed(self.ws.gold_texts[m.path])
        if m.in_signature:  # a default value: evaluated when the def statement runs (import)
            lines.add(m.line)
        return sorted(lines)

    async def _analyse(self, trusted: list[Candidate]) -> dict[str, Any]:
        """Gold (twice, with coverage), base on F2P, trusted candidates, mutants against the
        original tests, then differential search and exploration for what survived."""
        cfg, ws = self.cfg, self.ws
        jobs: list[dict[str, Any]] = [
            {
                "id": "gold",
                "kind": "tests",
                "coverage": True,
                "details": True,
                "durations": True,
                "timeout": cfg.job_timeout,
            },
            {"id": "gold-rerun", "kind": "tests", "timeout": cfg.job_timeout},
            {
                "id": "base",
                "kind": "tests",
                "tests": list(self.inst.fail_to_pass),
                "variant": {"files": {p: ws.texts.get(p, "") for p in self.sources}},
                "timeout": cfg.job_timeout,
            },
        ]
        self.cand_changes: dict[int, dict[str, str | None] | None] = {}
        for i, cand in enumerate(trusted):
            changed, problem = check_patch(ws.texts, cand.patch)
            self.cand_changes[i] = changed if problem is None else None
            if problem is None:
                jobs.append(
                    {
                        "id": f"cand-{i}",
                        "kind": "tests",
                        "variant": self._variant_of(changed),
                        "timeout": cfg.job_timeout,
                        # as long as the gold run took, ten times over, on a loaded machine
                        "timeout_from": {
                            "job": "gold",
                            "whole_job": True,
                            "factor": 10,
                            "base": 5,
                            "at_least": True,
                        },
                    }
                )
        for mid, m in self.mutants.items():
            jobs.append(
                {
                    "id": f"mut:{mid}",
                    "kind": "tests",
                    "variant": self.mutant_sources[mid],
                    "select_from": {
                        "job": "gold",
                        "lines": {m.path: [m.line]},
                        # import-time lines run for every test, as coverage_of counts them
                        "import_time": {m.path: self._import_time(m)},
                    },
                    "timeout": cfg.mutant_timeout,
                }
            )
        spec = self.inst.differential.as_dict() if self.inst.differential else None
        if spec is not None and "differential" in cfg.tests_from:
            for mid in self.mutants:
                jobs.append(
                    {
                        "id": f"diff:{mid}",
                        "kind": "differential",
                        "variant": self.mutant_sources[mid],
                        "spec": spec,
                        "max_examples": cfg.differential_examples,
                        "skip_if_killed": f"mut:{mid}",
                        "test_name": generated_test_name("diff", mid),
                        "timeout": max(cfg.mutant_timeout * 3, 30),
                    }
                )
        if spec is not None and "explore" in cfg.tests_from:
            jobs.append(
                {
                    "id": "explore",
                    "kind": "explore",
                    "spec": spec,
                    "max_examples": cfg.explore_examples,
                    "test_name": "test_swe_abs_explore",
                    "max_tests": cfg.explore_tests,
                    "uncovered_from": {"job": "gold", "targets": self.targets},
                    "timeout": 120,
                }
            )
        if spec is not None and "near" in cfg.tests_from and cfg.near_tests > 0:
            jobs.append(
                {
                    "id": "near",
                    "kind": "explore",
                    "domain": "near",
                    "spec": spec,
                    "max_examples": cfg.near_examples,
                    "test_name": "test_swe_abs_near",
                    "max_tests": cfg.near_tests,
                    "uncovered_from": {"job": "gold", "targets": self.targets},
                    "timeout": 120,
                }
            )
        if spec is not None and "foreign" in cfg.tests_from and cfg.foreign_tests > 0:
            jobs.append(
                {
                    "id": "foreign",
                    "kind": "foreign",
                    "spec": spec,
                    "base_variant": {"files": {p: ws.texts.get(p, "") for p in self.sources}},
                    "targets": sorted(self.targets),
                    "max_examples": cfg.foreign_examples,
                    "max_tests": cfg.foreign_tests,
                    "test_name": "test_swe_abs_foreign",
                    "timeout": 120,
                }
            )
        res = await ws.run_plan(
            "repo", self.test_files, self.sources, jobs, timeout=cfg.plan_timeout
        )
        if res.get("collect_errors"):
            self.out.notes.append("collection errors: " + " | ".join(res["collect_errors"])[:1500])
        results = res["jobs"]
        gold, rerun = results["gold"], results["gold-rerun"]
        if gold.get("error") or gold.get("timed_out"):
            raise RunnerError(f"swe_abs: the gold run failed: {gold.get('error') or 'timeout'}")
        self.gold_status = gold["status"]
        # the time limit for one candidate's test run scales with how long gold took here
        self.run_timeout = max(cfg.job_timeout, 10 * float(gold.get("seconds") or 0.0) + 5)
        self.gold_coverage = gold.get("coverage")
        self.out.flaky_original = flaky_tests([gold["status"], rerun["status"]])
        self.flaky_excluded |= set(self.out.flaky_original)
        grade = swebench_grade(
            gold["status"],
            self.inst.fail_to_pass,
            self.inst.pass_to_pass,
            exclude=self.flaky_excluded,
        )
        self.out.gold_resolved = grade.resolved
        if not grade.resolved:
            self.out.notes.append(
                f"gold patch not resolved: F2P failed {list(grade.f2p_failed)[:5]}, "
                f"P2P failed {list(grade.p2p_failed)[:5]}"
            )
        base = results["base"]["status"]
        self.out.base_fails_f2p = bool(failed_tests(base, list(self.inst.fail_to_pass)))
        self.out.coverage_before = self.coverage_of(self.gold_coverage, None)
        # mutants vs original tests
        for mid in self.mutants:
            r, rec = results[f"mut:{mid}"], self._record(mid)
            if r.get("no_tests"):
                rec.status = "no_tests"
            elif r.get("timed_out"):
                rec.status, rec.note = "killed_original", "timeout"
            elif r.get("error"):
                rec.status, rec.note = "error", str(r["error"])[:300]
            else:
                rec.killed_by = sorted(failed_tests(r["status"], r.get("ran") or list(r["status"])))
                rec.status = "killed_original" if rec.killed_by else "survived"
        # differential search on the survivors
        self.diff_results = {k: v for k, v in results.items() if k.startswith("diff:")}
        for key, r in self.diff_results.items():
            mid = key[len("diff:") :]
            rec = self._record(mid)
            if rec.status not in ("survived", "no_tests"):
                continue
            if r.get("error"):
                rec.note = f"differential: {r['error']}"[:300]
                continue
            if r.get("disagreement") is None:
                rec.status = "equivalent_search"
                rec.note = f"no disagreement in {r.get('examples', 0)} Hypothesis examples"
                continue
            if r.get("test"):
                self._add_test("differential", r["test"], target=mid)
            else:
                rec.note = "disagreement found but not expressible as test code"
        foreign, near = results.get("foreign") or {}, results.get("near") or {}
        for r in [*self.diff_results.values(), results.get("explore") or {}, near, foreign]:
            for type_name, n in (r.get("unexpressible") or {}).items():
                self.out.unexpressible[type_name] = self.out.unexpressible.get(type_name, 0) + n
        explore = results.get("explore") or {}
        for job_id, r in (("explore", explore), ("near", near), ("foreign", foreign)):
            if r.get("timed_out"):  # its tests are lost, not silently: the note says so
                self.out.notes.append(f"{job_id}: timed out after {r.get('seconds', 0):.0f} s")
        if explore.get("error"):
            self.out.notes.append(f"explore: {explore['error']}")
        for item in explore.get("tests") or []:
            self._add_test(
                "explore", item["test"], target=item.get("target") or f"lines {item['lines']}"
            )
        if near.get("error"):
            self.out.notes.append(f"near: {near['error']}")
        for item in near.get("tests") or []:
            edit = f"; edit {item['edit']}" if item.get("edit") else ""
            self._add_test("near", item["test"], target=f"lines {item['lines']}{edit}")
        kinds = near.get("edits") or {}
        if kinds.get("drawn", 0) > kinds.get("kept", 0):  # the budget cut some kinds of edit
            self.out.notes.append(
                f"near: its {len(near.get('tests') or [])} tests keep {kinds['kept']} of the "
                f"{kinds['drawn']} kinds of edit drawn (near_tests is the budget)"
            )
        if foreign.get("error"):
            self.out.notes.append(f"foreign: {foreign['error']}")
        for item in foreign.get("tests") or []:
            target = f"{item['rule']}: {item['slot']} <- {item['kind']} {item['outcome']}"
            self._add_test("foreign", item["test"], target=target)
        self.cand_results = {k: v for k, v in results.items() if k.startswith("cand-")}
        return results
