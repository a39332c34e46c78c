"""Validation and re-evaluation: the generated tests are written once (deduplicated), run on
gold ``flaky_reruns`` times and on every surviving mutant; a test is kept only if it passes on
gold in every run and fails on a mutant (characterisation tests: passes on gold, covers the
slice). Then every candidate is graded with SWE-bench's rule on FAIL_TO_PASS/PASS_TO_PASS and
SWE-ABS's rule on the strengthened suite (trusted ones in the warm runner, untrusted ones in a
fresh tree and process); for weakened suites, how much of what the removed tests catch the new
tests catch too."""

from __future__ import annotations

from typing import Any

from methods.swe_abs._diff import check_patch
from methods.swe_abs._grading import abs_failures, flaky_tests, swebench_grade
from methods.swe_abs._instance import Candidate
from methods.swe_abs._jail.values import NORMALISE_SOURCE
from methods.swe_abs._outcome import CandidateVerdict
from methods.swe_abs._stage_common import StageBase
from methods.swe_abs._workspace import RunnerError

NEW_TESTS_HEADER = "import pytest\n" + NORMALISE_SOURCE


class ValidateStage(StageBase):
    def _new_modules(self) -> dict[str, str]:
        modules: dict[str, list[str]] = {}
        for t in self.out.new_tests:
            modules.setdefault(t.module, [])
            if t.origin in ("differential", "explore", "near", "foreign"):
                modules[t.module].append(t.code)
        out = {}
        for module, parts in modules.items():
            if parts:
                out[module] = NEW_TESTS_HEADER + "\n\n" + "\n\n".join(parts)
            else:  # a model module: the model's own file (first one wins per module name)
                code = next(t.code for t in self.out.new_tests if t.module == module)
                out[module] = code
        return out

    def _removed_module(self) -> tuple[str, str] | None:
        if not self.inst.removed_tests_patch.strip():
            return None
        restored = check_patch(self.ws.gold_texts, self.inst.removed_tests_patch)[0]
        for path, text in restored.items():
            if text is None:
                continue
            stem = path[:-3] if path.endswith(".py") else path
            return f"{stem}_swe_abs_removed.py", text
        return None

    def _removed_ids(self, module: str) -> list[str]:
        base = {t.split("::", 1)[0] for t in self.inst.removed_tests}
        out = []
        for t in self.inst.removed_tests:
            file, _, rest = t.partition("::")
            if file in base:
                out.append(f"{module}::{rest}")
        return out

    async def _validate(self, trusted: list[Candidate]) -> None:
        cfg, ws = self.cfg, self.ws
        modules = self._new_modules()
        removed = self._removed_module()
        files = dict(modules)
        if removed is not None:
            files[removed[0]] = removed[1]
        await ws.write_tree_files("repo", files)
        new_ids = [t.nodeid for t in self.out.new_tests]
        removed_ids = self._removed_ids(removed[0]) if removed else []
        original = list(self.gold_status)
        jobs: list[dict[str, Any]] = []
        for r in range(max(cfg.flaky_reruns, 1)):
            jobs.append(
                {
                    "id": f"gold-{r}",
                    "kind": "tests",
                    "coverage": r == 0,
                    "durations": r == 0,
                    # the original tests were run twice on gold already (analyse); here only
                    # the new (and removed) tests are re-run for flakiness
                    "tests": new_ids + removed_ids,
                    "timeout": cfg.job_timeout,
                }
            )
        # killed mutants are re-run only to measure what removed tests would have caught
        wanted = (
            ("survived", "no_tests", "killed_original") if removed_ids else ("survived", "no_tests")
        )
        for mid in self.mutants:
            rec = self._record(mid)
            tests = new_ids + removed_ids
            if rec.status in wanted and tests:
                jobs.append(
                    {
                        "id": f"val:{mid}",
                        "kind": "tests",
                        "tests": tests,
                        "variant": self.mutant_sources[mid],
                        "timeout": cfg.mutant_timeout,
                        "timeout_from": {"job": "gold-0"},
                    }
                )
        for i in range(len(trusted)):
            if self.cand_changes.get(i) is not None and (new_ids or removed_ids):
                jobs.append(
                    {
                        "id": f"cand-{i}",
                        "kind": "tests",
                        "tests": new_ids + removed_ids,
                        "variant": self._variant_of(self.cand_changes[i] or {}),
                        "timeout": self.run_timeout,
                    }
                )
        # only the new modules (and the removed tests) are collected: the original suite's
        # results on gold and on every variant are known from the analyse run
        if new_ids or removed_ids:
            res = await ws.run_plan(
                "repo", list(files), self.sources, jobs, timeout=cfg.plan_timeout
            )
        else:
            res = {"jobs": {f"gold-{k}": {"status": {}} for k in range(max(cfg.flaky_reruns, 1))},
                   "collected": []}  # fmt: skip
        results = res["jobs"]
        collected = set(res.get("collected", []))
        gold_runs = [results[f"gold-{k}"]["status"] for k in range(max(cfg.flaky_reruns, 1))]
        self.out.flaky_new = [t for t in flaky_tests(gold_runs) if t in set(new_ids)]
        for t in self.out.new_tests:
            if t.nodeid not in collected:
                t.reason = "not collected (import or syntax error)"
                continue
            if t.nodeid in self.out.flaky_new:
                t.reason = "flaky on the gold patch"
                continue
            if any(run.get(t.nodeid) != "PASSED" for run in gold_runs):
                t.reason = f"fails on the gold patch ({gold_runs[0].get(t.nodeid)})"
                continue
            for mid in self.mutants:
                val = results.get(f"val:{mid}")
                if val and (
                    val.get("timed_out")
                    or val.get("status", {}).get(t.nodeid) in ("FAILED", "ERROR")
                ):
                    t.kills.append(mid)
            if t.origin in ("explore", "model_coverage"):
                t.accepted, t.reason = True, "passes gold; covers slice lines"
            elif t.origin == "near":
                t.accepted, t.reason = True, "passes gold; pins gold on a near input"
            elif t.origin == "foreign":
                t.accepted, t.reason = True, "passes gold; pins a rejection a fix must keep"
            elif t.kills:
                t.accepted, t.reason = True, "passes gold; fails a mutant"
            else:
                t.reason = "passes gold but fails no mutant"
        accepted = {t.nodeid for t in self.out.accepted_tests()}
        for mid in self.mutants:
            rec = self._record(mid)
            vr: dict[str, Any] = results.get(f"val:{mid}") or {}
            rec.killed_by_new = sorted(
                t
                for t in accepted
                if vr.get("timed_out") or vr.get("status", {}).get(t) in ("FAILED", "ERROR")
            )
            rec.killed_by_removed = sorted(
                t for t in removed_ids if vr.get("status", {}).get(t) in ("FAILED", "ERROR")
            )
            if rec.status in ("survived", "no_tests"):
                rec.status = "killed_new" if rec.killed_by_new else rec.status
        gold0 = results["gold-0"]
        merged: dict[str, dict[str, list[int]]] = dict(self.gold_coverage or {})
        merged.update({k: v for k, v in (gold0.get("coverage") or {}).items() if k in accepted})
        self.out.coverage_after = self.coverage_of(merged, set(original) | accepted)
        # re-evaluation of the trusted candidates
        for i, cand in enumerate(trusted):
            verdict = CandidateVerdict(cand.system, cand.kind, origin=cand.origin)
            if self.cand_changes.get(i) is None:
                problem = check_patch(ws.texts, cand.patch)[1]
                assert problem is not None
                verdict.problem, verdict.detail = problem.reason, problem.message
                self.out.candidates.append(verdict)
                continue
            first = self.cand_results.get(f"cand-{i}") or {}
            second = results.get(f"cand-{i}") or {}
            self._grade(verdict, first, second, accepted, removed_ids)
            self.out.candidates.append(verdict)
        self.removed_ids = removed_ids

    def _grade(
        self,
        verdict: CandidateVerdict,
        original_run: dict[str, Any],
        new_run: dict[str, Any],
        accepted: set[str],
        removed_ids: list[str],
    ) -> None:
        for run in (original_run, new_run):
            if run.get("timed_out"):
                verdict.problem, verdict.detail = (
                    "timeout",
                    "the candidate's tests overran the limit",
                )
                return
            if run.get("error"):
                verdict.problem, verdict.detail = "runner_error", str(run["error"])[:500]
                return
        status = {**original_run.get("status", {}), **new_run.get("status", {})}
        grade = swebench_grade(
            status, self.inst.fail_to_pass, self.inst.pass_to_pass, exclude=self.flaky_excluded
        )
        verdict.resolved_original = grade.resolved
        verdict.f2p_failed = list(grade.f2p_failed)
        verdict.p2p_failed = list(grade.p2p_failed)
        suite = [*self.inst.fail_to_pass, *self.inst.pass_to_pass, *sorted(accepted)]
        verdict.new_failed = [
            t for t in abs_failures(status, suite, exclude=self.flaky_excluded) if t in accepted
        ]
        verdict.removed_failed = [t for t in removed_ids if status.get(t) in ("FAILED", "ERROR")]
        verdict.resolved_abs = grade.resolved and not abs_failures(
            status, suite, exclude=self.flaky_excluded
        )

    async def _fresh_candidate(self, cand: Candidate) -> CandidateVerdict:
        """An untrusted candidate: its own tree from base, tests run in a fresh process; a hang
        or a fork bomb is stopped by the runner's and the sandbox's limits and scored."""
        verdict = CandidateVerdict(cand.system, cand.kind, origin=cand.origin)
        changed, problem = check_patch(self.ws.texts, cand.patch)
        if problem is not None:
            verdict.problem, verdict.detail = problem.reason, problem.message
            return verdict
        tests_overlay = {**self.ws.test_changes, **self._new_modules()}
        removed = self._removed_module()
        if removed is not None:
            tests_overlay[removed[0]] = removed[1]
        files = {p: t for p, t in changed.items() if p not in tests_overlay}
        tree = await self.ws.fresh_tree({**files, **tests_overlay})
        job = {"id": "all", "kind": "tests", "timeout": self.run_timeout}
        try:
            res = await self.ws.run_plan(
                tree,
                [*self.test_files, *self._new_modules(), *([removed[0]] if removed else [])],
                self.sources,
                [job],
                # the runner's own limit stops a hang first; this one stops the whole command
                # (start-up, collection) on top of it
                timeout=max(self.cfg.candidate_timeout, int(2 * self.run_timeout) + 60),
            )
        except TimeoutError:
            verdict.problem, verdict.detail = (
                "timeout",
                "the sandbox stopped the test run (time limit)",
            )
            return verdict
        except RunnerError as exc:
            verdict.problem, verdict.detail = "runner_error", str(exc)[:500]
            return verdict
        finally:
            await self.ws.run(["rm", "-rf", self.ws.path(tree)], timeout=120)
        run = res["jobs"]["all"]
        accepted = {t.nodeid for t in self.out.accepted_tests()}
        self._grade(verdict, run, {}, accepted, getattr(self, "removed_ids", []))
        return verdict

    def _removed_overlap(self) -> None:
        """For instances that weakened the project's suite: how much of what the removed tests
        would catch (mutants and wrong candidates) the new tests catch too."""
        if not self.inst.removed_tests:
            return
        by_removed = {r.id for r in self.out.mutants if r.killed_by_removed}
        by_new = {r.id for r in self.out.mutants if r.killed_by_new}
        wrong_removed = {c.system for c in self.out.candidates if c.removed_failed}
        wrong_new = {c.system for c in self.out.candidates if c.new_failed}
        caught = by_removed | {f"candidate:{s}" for s in wrong_removed}
        also = (by_removed & by_new) | {f"candidate:{s}" for s in wrong_removed & wrong_new}
        self.out.removed_overlap = {
            "removed_tests": list(self.inst.removed_tests),
            "caught_by_removed": len(caught),
            "also_caught_by_new": len(also),
            "recall": (len(also) / len(caught)) if caught else None,
            "new_tests_accepted": len(self.out.accepted_tests()),
        }
