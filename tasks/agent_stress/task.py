"""`agent_stress`: many sandboxed agent workloads at once, some with planted faults; each fault
must be contained as a failure of its own sample, and the run must leave nothing on the host.

    harness eval task=agent_stress                                  # 16 at once, bwrap, scripted agent
    harness eval task=agent_stress concurrency=64                   # the full run (README)
    harness eval task=agent_stress sandbox=bwrap mode=per_exec concurrency=16
    harness eval task=agent_stress agent=model role.agent=<spec>    # a real model as the agent

No paper stands behind this task (it measures the harness's sandboxes), so it has no
`reference.yaml`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.util import SandboxEnvironmentSpec

from harness.data import text_hash
from harness.records import task_metadata
from tasks.agent_stress.dataset import FAULTS, KINDS, WELL_BEHAVED, Limits, stress_dataset
from tasks.agent_stress.scorer import host_leaks, stress_scorer, stress_summary
from tasks.agent_stress.solver import stress_agent

TASK_VERSION = "1.0.0"

SandboxKind = Literal["bwrap", "docker", "local"]
BwrapMode = Literal["persistent", "per_exec"]
AgentKind = Literal["scripted", "model"]


def _kinds(workloads: str) -> tuple[str, ...]:
    if workloads == "all":
        return KINDS
    if workloads == "well_behaved":
        return WELL_BEHAVED
    if workloads == "faults":
        return FAULTS
    kinds = tuple(k.strip() for k in workloads.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ValueError(
            f"agent_stress: workloads={workloads!r}: unknown kind(s) {unknown or '(none)'}; "
            f"give all, well_behaved, faults or a comma list of {', '.join(KINDS)}"
        )
    return kinds


def _sandbox_spec(kind: SandboxKind, mode: BwrapMode, limits: Limits, disk_mb: int) -> Any:
    if kind == "bwrap":
        from sandboxes.bwrap import BwrapConfig

        config = BwrapConfig(
            mode=mode, memory_mb=limits.memory_mb, max_processes=limits.max_processes,
            disk_mb=disk_mb, timeout_s=limits.op_timeout_s,
        )  # fmt: skip
        return SandboxEnvironmentSpec("bwrap", config)
    if kind == "docker":  # the project's engine-API provider (inspect's own needs Compose v2)
        from sandboxes.docker import PROVIDER, DockerConfig

        docker_config = DockerConfig(
            memory_mb=limits.memory_mb, max_processes=limits.max_processes,
            disk_mb=disk_mb, timeout_s=limits.op_timeout_s,
        )  # fmt: skip
        return SandboxEnvironmentSpec(PROVIDER, docker_config)
    return "local"


@task
def agent_stress(
    sandbox: SandboxKind = "bwrap",
    mode: BwrapMode = "persistent",
    concurrency: int = 16,
    samples: int | None = None,
    workloads: str = "all",
    agent: AgentKind = "scripted",
    memory_mb: int = 256,
    max_processes: int = 64,
    disk_mb: int = 256,
    fault_timeout: int = 4,
    sample_time_limit: int = 600,
    max_tokens: int = 512,
    subprocess_gate: bool = True,
    seed: int = 0,
) -> Task:
    """Sandboxed agent workloads run concurrently, with planted faults.

    Args:
        sandbox: bwrap | docker (the project's `docker_api` provider on the engine API) | local
            (local has no isolation: its faults are not contained).
        mode: the bwrap jail mode (persistent | per_exec).
        concurrency: samples running at once.
        samples: how many samples (default: concurrency, at least one per workload kind).
        workloads: all | well_behaved | faults | a comma list of kinds (dataset.KINDS).
        agent: scripted (the task's own scripted model makes the workload's calls:
            deterministic; the model under test is not called) | model (the model under test, or
            role.agent, is told to make the calls).
        memory_mb: the sandbox's memory limit (the memory hog asks for twice this).
        max_processes: the sandbox's process limit (the fork bomb asks for 511).
        disk_mb: the sandbox's disk quota (bwrap as root; docker: the size of its tmpfs
            /workspace and /tmp, which count against memory_mb).
        fault_timeout: seconds before a runaway or SIGTERM-ignoring command is killed.
        sample_time_limit: seconds for a whole sample.
        max_tokens: generation cap per agent turn (agent=model).
        subprocess_gate: commands wait for inspect's subprocess gate (max_subprocesses, default
            the CPU count) as inspect's own tools do; false runs them all at once.
        seed: seed of the generated file contents.
    """
    if concurrency <= 0:
        raise ValueError(f"agent_stress: concurrency must be positive, got {concurrency}")
    kinds = _kinds(workloads)
    limits = Limits(memory_mb=memory_mb, max_processes=max_processes,
                    fault_timeout_s=fault_timeout)  # fmt: skip
    count = samples if samples is not None else max(concurrency, len(kinds))
    dataset = stress_dataset(count, kinds, limits, seed)
    digest = text_hash(json.dumps([[s.id, s.metadata] for s in dataset], sort_keys=True))
    # Deterministic, so a re-run of the same command resumes (eval-set hashes the solver's
    # arguments); each sample's tag adds a random part, and footprints are kept per process.
    run_tag = f"as{digest.removeprefix('sha256:')[:10]}"
    # the scripted agent is the task's own model: the log names what drove the agent, never a
    # model under test that was not called
    model = (
        get_model("scripted/agent_stress", responder="tasks.agent_stress.solver:scripted_agent")
        if agent == "scripted"
        else None
    )
    max_turns = max(len(s.metadata["ops"]) for s in dataset if s.metadata) + 2
    return Task(
        dataset=dataset,
        model=model,
        solver=stress_agent(
            sandbox_kind=sandbox,
            run_tag=run_tag,
            max_turns=max_turns,
            subprocess_gate=subprocess_gate,
        ),  # fmt: skip
        scorer=stress_scorer(),
        metrics=[stress_summary(), host_leaks(run_tag)],
        sandbox=_sandbox_spec(sandbox, mode, limits, disk_mb),
        config=GenerateConfig(max_connections=concurrency, max_tokens=max_tokens),
        time_limit=sample_time_limit,
        version=TASK_VERSION,
        metadata=task_metadata(
            dataset_source="generated: tasks/agent_stress/dataset.py workloads",
            dataset_hash=digest,
            generated=True,
            deviations=[],
            sandbox=sandbox,
            bwrap_mode=mode if sandbox == "bwrap" else None,
            concurrency=concurrency,
            agent=agent,
            workloads=list(kinds),
            subprocess_gate=subprocess_gate,
            limits={
                "memory_mb": memory_mb,
                "max_processes": max_processes,
                "disk_mb": disk_mb,
                "fault_timeout_s": fault_timeout,
            },  # fmt: skip
            run_tag=run_tag,
        ),
    )


# `make run`: one sample of each workload kind, four at a time, bwrap (persistent), scripted.
RUN_ALL_ARGS: dict[str, Any] = {"concurrency": 4, "samples": len(KINDS)}
