"""The inspect solver: the model under test resolves the instance (optional), then SWE-ABS
strengthens the instance's tests and re-evaluates every candidate patch, all in the sample's
sandbox. Model roles: the model under test solves; ``tester``, ``mutator`` and ``judge`` (each
defaulting to the model under test) write tests, write mutants and judge mutants."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from harness.constrained import check_formats, generate_args
from methods.common import AnswerFormat
from methods.swe_abs import (
    JUDGE_FORMAT,
    Candidate,
    Instance,
    PipelineConfig,
    Roles,
    RunnerEnv,
    Strengthener,
    TextGen,
    Workspace,
    check_patch,
    solve_instance,
)
from tasks.swe_abs.sdist_tree import base_tree

SITE_IN_SANDBOX = "/tmp/swe_abs_site"


# Checked when the task is loaded: a malformed format is an error here, not a server 400 mid-run.
check_formats([JUDGE_FORMAT])


def role_generator(role: str | None, max_tokens: int) -> TextGen:
    async def generate(system: str, prompt: str, answer_format: AnswerFormat | None = None) -> str:
        model = get_model(role=role, default=get_model()) if role else get_model()
        config = GenerateConfig(max_tokens=max_tokens)
        if answer_format is not None:  # with constrained=on, decoded under the reply's format
            config = config.merge(GenerateConfig(**generate_args(answer_format)))
        out = await model.generate(
            [ChatMessageSystem(content=system), ChatMessageUser(content=prompt)], config=config
        )
        return out.completion

    return generate


async def _provision(provision: Literal["bind", "copy"], site: str, site_tar: bytes | None) -> str:
    """Where the sandbox's Python finds pytest/coverage/Hypothesis: the bound host folder
    (bwrap) or a copy unpacked into the sandbox (docker, local)."""
    if provision == "bind":
        return site
    assert site_tar is not None
    box = sandbox()
    await box.write_file(f"{SITE_IN_SANDBOX}.tar", site_tar)
    res = await box.exec(["tar", "xf", f"{SITE_IN_SANDBOX}.tar", "-C", "/tmp"], timeout=300)
    if res.returncode != 0:
        raise RuntimeError(f"swe_abs: cannot unpack the test packages: {res.stderr[-500:]}")
    return SITE_IN_SANDBOX


@solver
def swe_abs_solver(
    instances: dict[str, Instance],
    config: PipelineConfig,
    *,
    solve: bool,
    solver_attempts: int,
    model_roles: bool,
    max_tokens: int,
    site: str,
    provision: Literal["bind", "copy"] = "bind",
    site_tar: bytes | None = None,
    repo_dir: str = "/testbed",
) -> Solver:
    async def run(state: TaskState, generate: Generate) -> TaskState:  # noqa: ARG001
        inst = instances[str(state.sample_id)]
        files = (
            base_tree(
                inst.base_commit,
                str(inst.extra.get("base_setup_patch", "")),
                where=inst.instance_id,
            )
            if inst.base_commit.startswith("sdist:")
            else None  # a SWE-bench image: the repository is at repo_dir in the sandbox
        )
        pythonpath = await _provision(provision, site, site_tar)
        env = RunnerEnv(pythonpath=(pythonpath,))
        box: Any = sandbox()
        solver_info: dict[str, Any] | None = None
        candidates = list(inst.candidates)
        if solve:
            ws0 = Workspace(box, inst, files, env, source_dir=None if files else repo_dir)

            async def feedback(patch: str) -> str | None:
                return await _existing_tests_report(ws0, inst, patch, config)

            await ws0.prepare()
            result = await solve_instance(
                role_generator(None, max_tokens),
                ws0.texts,
                inst.patch,
                inst.problem_statement,
                attempts=solver_attempts,
                test_feedback=feedback if solver_attempts > 1 else None,
            )
            last = result.attempts[-1] if result.attempts else None
            solver_info = {
                "format_failure": result.format_failure,
                "failure": (
                    f"{last.failure}: {last.detail}"[:300]
                    if result.patch is None and last is not None and last.failure
                    else None
                ),
                "attempts": [dataclasses.asdict(a) for a in result.attempts],
            }
            model_name = str(get_model())
            candidates.append(
                Candidate(
                    system=f"model:{model_name}",
                    patch=result.patch or "",
                    kind="model",
                    note="the model under test's patch",
                    trusted=False,
                    origin="model",
                )
            )
        roles = Roles()
        if model_roles:
            roles = Roles(
                tester=role_generator("tester", max_tokens),
                mutator=role_generator("mutator", max_tokens),
                judge=role_generator("judge", min(max_tokens, 128)),
            )
        work = dataclasses.replace(inst, candidates=tuple(candidates))
        ws = Workspace(box, work, files, env, source_dir=None if files else repo_dir)
        outcome = await Strengthener(ws, config, roles).run()
        state.metadata["swe_abs"] = {"outcome": outcome.as_dict(), "solver": solver_info}
        return state

    return run


async def _existing_tests_report(
    ws: Workspace, inst: Instance, patch: str, config: PipelineConfig
) -> str | None:
    """What the agent would see running the repository's existing tests on its patch (the
    PASS_TO_PASS tests; never the hidden FAIL_TO_PASS ones), in a fresh tree."""
    changed, problem = check_patch(ws.texts, patch)
    if problem is not None:
        return f"{problem.reason}: {problem.message}"
    tree = await ws.fresh_tree(changed)
    try:
        res = await ws.run_plan(
            tree,
            inst.test_files(),
            [],
            [
                {
                    "id": "p2p",
                    "kind": "tests",
                    "tests": list(inst.pass_to_pass),
                    "details": True,
                    "timeout": config.job_timeout,
                }
            ],
            timeout=config.candidate_timeout,
        )
    except TimeoutError:
        return "the test run did not finish in time"
    finally:
        await ws.run(["rm", "-rf", ws.path(tree)], timeout=120)
    run = res["jobs"]["p2p"]
    if run.get("timed_out"):
        return "the test run did not finish in time"
    bad = [t for t, s in run.get("status", {}).items() if s in ("FAILED", "ERROR")]
    if not bad:
        return None
    details = run.get("details") or {}
    return "\n".join(f"{t}: {details.get(t, '')[-400:]}" for t in bad[:3])
