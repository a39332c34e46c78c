"""SWE-ABS on one instance: slice → coverage-driven tests → mutants → mutant-killing tests →
validation → re-evaluation of the candidate patches.

Stages as in the paper (notes on ``OpenAgentEval/SWE-ABS``):

0. must-cover lines of the gold patch (:mod:`methods.swe_abs.slicing`);
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

import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from methods.common import AnswerFormat, takes_answer_format
from methods.swe_abs import prompts
from methods.swe_abs.diff import check_patch, make_patch, parse_patch
from methods.swe_abs.grading import abs_failures, flaky_tests, swebench_grade
from methods.swe_abs.instance import Candidate
from methods.swe_abs.mutation import Mutant, bytecode_equivalent, generate_mutants
from methods.swe_abs.slicing import MustCover, analyse_source, coverage_rate, must_cover
from methods.swe_abs.workspace import RunnerError, Workspace

TextGen = Callable[[str, str], Awaitable[str]]
"""A model role: (system prompt, user prompt) → reply text. Raising is an infra error."""

NEW_TESTS_HEADER = (
    "import pytest\n"
    + __import__("methods.swe_abs.jail_runner", fromlist=["NORMALISE_SOURCE"]).NORMALISE_SOURCE
)


@dataclass(frozen=True)
class PipelineConfig:
    k_scope: int = 5
    k_file: int = 1
    mutate_scope: Literal["hunks", "changed", "slice"] = "hunks"
    max_mutants: int = 40
    tests_from: frozenset[str] = frozenset({"differential", "explore"})
    mutants_from: frozenset[str] = frozenset({"operators"})
    model_mutants: int = 2
    judge_repeats: int = 1
    retries: int = 3
    differential_examples: int = 200
    explore_examples: int = 150
    explore_tests: int = 10
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
    origin: Literal["differential", "explore", "model_coverage", "model_mutant"]
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


# ------------------------------------------------------------------------------------ helpers
def _source_files(patch: str) -> list[str]:
    return [
        fp.path
        for fp in parse_patch(patch)
        if fp.path.endswith(".py") and not fp.is_deleted and "test" not in fp.path.split("/")[-1]
    ]


def _mutate_lines(ws: Workspace, path: str, scope: str, slice_: MustCover) -> set[int]:
    fps = [fp for fp in parse_patch(ws.instance.patch) if fp.path == path]
    if scope == "slice":
        return set(slice_.slice_scope)
    lines: set[int] = set()
    facts = analyse_source(ws.gold_texts[path], path)
    for fp in fps:
        for h in fp.hunks:
            if scope == "hunks":
                span = range(h.target_start, h.target_start + h.target_length)
            else:
                span = range(0)
            lines.update(span)
            for ln in (*h.added_lines(), *h.deletion_anchors()):
                lines.add(ln)
    # a node is mutated when it starts on an allowed line: allow every line of the statements
    # the hunk touches (a multi-line statement starts before the hunk's first changed line)
    stmts = {facts.statement(ln) for ln in lines} - {None}
    for ln, st in facts.statement_of.items():
        if st in stmts:
            lines.add(ln)
    return lines


def _static_executed(source: str) -> set[int]:
    """Lines executed when the module is imported (def/class headers, module-level code): the
    paper's trace run counts them; per-test coverage contexts do not see them."""
    facts = analyse_source(source)
    return {
        ln
        for ln in facts.executable
        if facts.scope[ln] == "<module>" or facts.scope[ln].endswith(f"@{ln}")
    }


def _covered_lines(
    coverage: dict[str, dict[str, list[int]]] | None, tests: set[str] | None
) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for ctx, files in (coverage or {}).items():
        if tests is not None and ctx not in tests:
            continue
        for path, lines in files.items():
            out.setdefault(path, set()).update(lines)
    return out


def _failed(status: dict[str, str], tests: list[str]) -> list[str]:
    return [t for t in tests if status.get(t) in ("FAILED", "ERROR") or t not in status]


def _imports_of(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if line.startswith(("import ", "from ")))[
        :2000
    ]


class _Budget:
    def __init__(self) -> None:
        self.calls = 0

    def event(self, out: InstanceOutcome, role: str, phase: str, ok: bool, note: str) -> None:
        self.calls += 1
        out.model_events.append({"role": role, "phase": phase, "ok": ok, "note": note[:300]})


# -------------------------------------------------------------------------------- the pipeline
class Strengthener:
    """Runs the stages on one instance in one workspace."""

    def __init__(self, ws: Workspace, config: PipelineConfig, roles: Roles | None = None) -> None:
        self.ws = ws
        self.inst = ws.instance
        self.cfg = config
        self.roles = roles or Roles()
        self.out = InstanceOutcome(ws.instance.instance_id)
        self.test_files = ws.instance.test_files()
        self.sources = _source_files(ws.instance.patch)
        self.mutants: dict[str, Mutant] = {}
        self.mutant_sources: dict[str, dict[str, Any]] = {}  # id -> variant
        self.budget = _Budget()
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

    def coverage_of(
        self, coverage: dict[str, dict[str, list[int]]] | None, tests: set[str] | None
    ) -> float:
        executed = _covered_lines(coverage, tests)
        for path in self.targets:
            executed.setdefault(path, set()).update(_static_executed(self.ws.gold_texts[path]))
        return coverage_rate(self.targets, executed)

    # -- variants -------------------------------------------------------------------------
    def _variant_of(self, changed: dict[str, str | None]) -> dict[str, Any]:
        files = {p: t for p, t in changed.items() if p.endswith(".py") and t is not None}
        files = {p: t for p, t in files.items() if p not in self.test_files}
        # Files the candidate leaves unchanged relative to gold still have to be reset to base.
        for path in self.ws.gold_changes:
            if path not in files and path.endswith(".py"):
                files[path] = self.ws.texts.get(path, "")
        return {"files": files}

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

    def _operator_mutants(self, slices: dict[str, MustCover]) -> None:
        rng = random.Random(f"{self.cfg.seed}:{self.inst.instance_id}")
        pool: list[Mutant] = []
        for path, sl in slices.items():
            lines = _mutate_lines(self.ws, path, self.cfg.mutate_scope, sl)
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

    def _record(self, mid: str) -> MutantRecord:
        return next(r for r in self.out.mutants if r.id == mid)

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
                    "select_from": {"job": "gold", "lines": {m.path: [m.line]}},
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
                        "test_name": _test_name("diff", mid),
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
        self.out.base_fails_f2p = bool(_failed(base, list(self.inst.fail_to_pass)))
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
                rec.killed_by = sorted(_failed(r["status"], r.get("ran") or list(r["status"])))
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
                rec.note = "disagreement found but not expressible as a literal test"
        explore = results.get("explore") or {}
        if explore.get("error"):
            self.out.notes.append(f"explore: {explore['error']}")
        for item in explore.get("tests") or []:
            self._add_test("explore", item["test"], target=f"lines {item['lines']}")
        self.cand_results = {k: v for k, v in results.items() if k.startswith("cand-")}
        return results

    def _add_test(self, origin: str, code: str, target: str) -> NewTest:
        module = f"{self.new_dir}/test_swe_abs_{'model' if origin.startswith('model') else 'generated'}.py".lstrip(
            "/"
        )
        name = code.split("def ", 1)[1].split("(", 1)[0] if "def " in code else "?"
        test = NewTest(
            name=name,
            origin=origin,  # type: ignore[arg-type]
            module=module,
            nodeid=f"{module}::{name}",
            code=code,
            target=target,
        )
        self.out.new_tests.append(test)
        return test

    # -- model stages ------------------------------------------------------------------
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
        bad = _failed(gold.get("status", {}), ids) if ids else ["(no test collected)"]
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
        executed = _covered_lines(self.gold_coverage, None)
        for path in self.targets:  # import-time lines count as executed (as in coverage_of)
            executed.setdefault(path, set()).update(_static_executed(self.ws.gold_texts[path]))
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
            _imports_of(self.ws.gold_texts[self.test_files[0]]),
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
            cov = _covered_lines(gold.get("coverage"), set(ids))
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
        func = _enclosing_function(gold, changed[0] if changed else 1)
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
            killed = r.get("timed_out") or _failed(r.get("status", {}), list(self.gold_status))
            rec.status = "killed_original" if killed else "survived"
            if killed and not r.get("timed_out"):
                rec.killed_by = sorted(_failed(r["status"], list(self.gold_status)))

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
                _imports_of(self.ws.gold_texts[self.test_files[0]]),
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
                kills = mut_r.get("timed_out") or _failed(mut_r.get("status", {}), ids)
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

    # -- validation and re-evaluation -------------------------------------------------
    def _new_modules(self) -> dict[str, str]:
        modules: dict[str, list[str]] = {}
        for t in self.out.new_tests:
            modules.setdefault(t.module, [])
            if t.origin in ("differential", "explore"):
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
            verdict = CandidateVerdict(cand.system, cand.kind)
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
        verdict = CandidateVerdict(cand.system, cand.kind)
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


def _test_name(prefix: str, mid: str) -> str:
    safe = "".join(ch if ch.isalnum() else "_" for ch in mid)
    return f"test_swe_abs_{prefix}_{safe}"


def _enclosing_function(source: str, line: int) -> str:
    import ast

    tree = ast.parse(source)
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                if best is None or node.lineno > best.lineno:
                    best = node
    if best is None:
        return ""
    lines = source.splitlines()
    return "\n".join(lines[best.lineno - 1 : best.end_lineno])
