"""The model stages: stage 1 with the model under test as test writer (write → gold validation
→ coverage fix, each phase with its own retry budget), stage 2 with the model as mutant writer
and equivalence judge (relevance, validity), stage 3 with the model writing a test per surviving
mutant."""

from __future__ import annotations

from typing import Any

import methods.swe_abs._prompts as prompts
from methods.common import AnswerFormat, takes_answer_format
from methods.swe_abs._diff import make_patch, parse_patch
from methods.swe_abs._mutation import Mutant, bytecode_equivalent
from methods.swe_abs._outcome import MutantRecord, NewTest, TextGen
from methods.swe_abs._stage_common import (
    StageBase,
    covered_lines,
    enclosing_function,
    failed_tests,
    imports_of,
    static_executed,
)


class ModelStages(StageBase):
    async def _ask(
        self,
        role: str,
        gen: TextGen,
        system: str,
        prompt: str,
        phase: str,
        answer_format: AnswerFormat | None = None,
    ) -> str:
        # A generator that takes the format decodes under it when the run is constrained.
        if answer_format is not None and takes_answer_format(gen):
            reply = await gen(system, prompt, answer_format=answer_format)  # type: ignore[call-arg]
        else:
            reply = await gen(system, prompt)
        self.budget.event(self.out, role, phase, True, reply[:120])
        return reply

    def _model_module(self, code: str, n: int) -> tuple[str, str]:
        module = f"{self.new_dir}/test_swe_abs_model_{n}.py".lstrip("/")
        return module, code

    async def _check_model_tests(
        self, code: str, n: int, mutant: str | None
    ) -> tuple[list[str], dict[str, Any]]:
        """Run a model-written test module on gold (coverage) and, when given, a mutant."""
        module, text = self._model_module(code, n)
        await self.ws.write_tree_files("repo", {module: text})
        jobs: list[dict[str, Any]] = [
            {
                "id": "gold",
                "kind": "tests",
                "coverage": True,
                "details": True,
                "timeout": self.cfg.job_timeout,
            }
        ]
        if mutant is not None:
            jobs.append(
                {
                    "id": "mutant",
                    "kind": "tests",
                    "variant": self.mutant_sources[mutant],
                    "details": True,
                    "timeout": self.cfg.mutant_timeout,
                }
            )
        res = await self.ws.run_plan(
            "repo", [module], self.sources, jobs, timeout=self.cfg.plan_timeout
        )
        await self.ws.write_tree_files("repo", {module: None})
        ids = [t for t in res["collected"] if t.startswith(module + "::")]
        res["module"] = module
        return ids, res

    async def _try_tests(
        self,
        gen: TextGen,
        prompt: str,
        phase: str,
        tries: dict[str, int],
        n: int,
        mutant: str | None = None,
    ) -> tuple[str, str, list[str] | None, dict[str, Any]]:
        """One try of the model test writer through the paper's first two phases: a usable
        reply (write) whose tests pass on gold (gold validation); run on ``mutant`` too when
        given. Returns (prompt, code, test ids, run result); on a failed phase its try is
        counted, the retry feedback appended to the prompt, and the ids are None."""
        reply = await self._ask("tester", gen, prompts.TESTER_SYSTEM, prompt, phase)
        code = prompts.extract_python(reply)
        if code is None:
            tries["format"] += 1
            self.out.model_events[-1].update(ok=False, failure="format")
            feedback = prompts.retry_feedback("format", "no code block that parses")
            return prompt + "\n\n" + feedback, "", None, {}
        ids, res = await self._check_model_tests(code, n, mutant)
        gold = res["jobs"]["gold"]
        bad = failed_tests(gold.get("status", {}), ids) if ids else ["(no test collected)"]
        if bad:
            tries["gold"] += 1
            detail = "\n".join((gold.get("details") or {}).get(t, t) for t in bad)[:1500]
            self.out.model_events[-1].update(ok=False, failure="gold")
            feedback = prompts.retry_feedback("gold", detail or "\n".join(bad))
            return prompt + "\n\n" + feedback, code, None, res
        return prompt, code, ids, res

    async def _model_coverage_tests(self) -> None:
        """Stage 1 with the model under test: write → gold validation → coverage fix."""
        gen = self.roles.tester
        assert gen is not None
        executed = covered_lines(self.gold_coverage, None)
        for path in self.targets:  # import-time lines count as executed (as in coverage_of)
            executed.setdefault(path, set()).update(static_executed(self.ws.gold_texts[path]))
        uncovered = {
            p: [ln for ln in t if ln not in executed.get(p, set())] for p, t in self.targets.items()
        }
        uncovered = {p: v for p, v in uncovered.items() if v}
        if not uncovered:
            return
        path, lines = next(iter(uncovered.items()))
        src = self.ws.gold_texts[path].splitlines()
        shown = [(ln, src[ln - 1].strip()) for ln in lines]
        prompt = prompts.coverage_prompt(
            self.inst.problem_statement,
            self.inst.patch,
            path,
            shown,
            imports_of(self.ws.gold_texts[self.test_files[0]]),
        )
        # the paper's phases, each with its own retry budget: write (a usable reply), gold
        # validation (the tests pass with the fix), coverage fix (the slice lines are executed)
        tries = {"format": 0, "gold": 0, "coverage": 0}
        attempt = -1
        while all(n < self.cfg.retries for n in tries.values()):
            attempt += 1
            prompt, code, ids, res = await self._try_tests(gen, prompt, "coverage", tries, attempt)
            if ids is None:
                continue
            gold = res["jobs"]["gold"]
            cov = covered_lines(gold.get("coverage"), set(ids))
            still = [ln for ln in lines if ln not in cov.get(path, set())]
            module = res["module"]
            for t in ids:
                name = t.split("::", 1)[1]
                nt = NewTest(name, "model_coverage", module, t, "", target=f"lines {lines}")
                nt.code = code
                self.out.new_tests.append(nt)
            if not still:
                break
            tries["coverage"] += 1
            self.out.model_events[-1].update(ok=False, failure="coverage")
            prompt += "\n\n" + prompts.retry_feedback(
                "coverage", "\n".join(f"{ln}: {src[ln - 1].strip()}" for ln in still)
            )
            lines = still

    async def _model_mutants(self) -> None:
        """Stage 2 with the model: N mutants per instance, each judged (relevance, validity)."""
        gen, judge = self.roles.mutator, self.roles.judge
        assert gen is not None
        path = self.sources[0]
        gold = self.ws.gold_texts[path]
        changed = [fp for fp in parse_patch(self.inst.patch) if fp.path == path][0].changed_lines()
        func = enclosing_function(gold, changed[0] if changed else 1)
        for n in range(self.cfg.model_mutants):
            prompt = prompts.mutator_prompt(
                self.inst.problem_statement, self.inst.patch, path, func
            )
            reply = await self._ask("mutator", gen, prompts.MUTATOR_SYSTEM, prompt, "mutant")
            mid = f"model-{n}"
            rec = MutantRecord(mid, "model", "model", "model-written mutant", path, 0)
            self.out.mutants.append(rec)
            code = prompts.extract_python(reply)
            new_source, note = (
                prompts.replace_functions(gold, code, changed[0] if changed else None)
                if code
                else (None, "no code")
            )
            if new_source is None:
                rec.status, rec.note = "does_not_apply", note
                self.out.model_events[-1].update(ok=False, failure="format")
                continue
            try:
                compile(new_source, path, "exec", dont_inherit=True)
            except SyntaxError as exc:
                rec.status, rec.note = "does_not_apply", f"syntax error: {exc.msg}"
                continue
            if new_source == gold or bytecode_equivalent(gold, new_source, path):
                rec.status = "equivalent_bytecode"
                continue
            patch = make_patch(path, gold, new_source)
            lines = [ln for fp in parse_patch(patch) for ln in fp.changed_lines()]
            rec.line = lines[0] if lines else 0
            if judge is not None:
                verdicts = []
                for _ in range(self.cfg.judge_repeats):
                    jr = await self._ask(
                        "judge",
                        judge,
                        prompts.JUDGE_SYSTEM,
                        prompts.judge_prompt(self.inst.problem_statement, self.inst.patch, patch),
                        "equivalence",
                        prompts.JUDGE_FORMAT,
                    )
                    v = prompts.parse_judge(jr)
                    if not v.parsed:
                        self.out.model_events[-1].update(ok=False, failure="judge_format")
                    verdicts.append(v)
                ok = [v for v in verdicts if v.parsed]
                if not ok or not all(v.relevant and v.valid for v in ok):
                    rec.status = "judge_rejected"
                    rec.note = (
                        "unparseable verdict" if not ok else "judged irrelevant or equivalent"
                    )
                    continue
            m = Mutant(mid, path, rec.line, "model", "model-written", "", new_source)
            self.mutants[mid] = m
            self.mutant_sources[mid] = {"files": {path: new_source}}
            # must still pass the current tests (original + accepted model tests so far)
            res = await self.ws.run_plan(
                "repo",
                self.test_files,
                self.sources,
                [
                    {
                        "id": "m",
                        "kind": "tests",
                        "variant": self.mutant_sources[mid],
                        "timeout": self.cfg.job_timeout,
                    }
                ],
                timeout=self.cfg.plan_timeout,
            )
            r = res["jobs"]["m"]
            killed = r.get("timed_out") or failed_tests(r.get("status", {}), list(self.gold_status))
            rec.status = "killed_original" if killed else "survived"
            if killed and not r.get("timed_out"):
                rec.killed_by = sorted(failed_tests(r["status"], list(self.gold_status)))

    async def _model_mutant_tests(self) -> None:
        """Stage 3 with the model: for each surviving mutant, a test that kills it."""
        gen = self.roles.tester
        assert gen is not None
        survivors = [r.id for r in self.out.mutants if r.status == "survived"]
        for k, mid in enumerate(survivors):
            m = self.mutants[mid]
            gold = self.ws.gold_texts[m.path]
            prompt = prompts.mutant_test_prompt(
                self.inst.problem_statement,
                self.inst.patch,
                make_patch(m.path, gold, m.source),
                imports_of(self.ws.gold_texts[self.test_files[0]]),
            )
            tries = {"format": 0, "gold": 0, "mutant": 0}  # a retry budget per phase
            attempt = -1
            while all(n < self.cfg.retries for n in tries.values()):
                attempt += 1
                prompt, code, ids, res = await self._try_tests(
                    gen, prompt, "mutant", tries, 100 + k * 10 + attempt, mid
                )
                if ids is None:
                    continue
                mut_r = res["jobs"]["mutant"]
                kills = mut_r.get("timed_out") or failed_tests(mut_r.get("status", {}), ids)
                if not kills:
                    tries["mutant"] += 1
                    self.out.model_events[-1].update(ok=False, failure="mutant")
                    prompt += "\n\n" + prompts.retry_feedback("mutant", "")
                    continue
                for t in ids:
                    self.out.new_tests.append(
                        NewTest(
                            t.split("::", 1)[1], "model_mutant", res["module"], t, code, target=mid
                        )
                    )
                break
