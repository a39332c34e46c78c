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
from typing import Any

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig, Model, get_model

from harness.data import text_hash
from harness.records import task_metadata
from harness.splits import split_metadata
from tasks.agent_stress.config import (
    AgentKind,
    BwrapMode,
    SandboxKind,
    StressConfig,
    load_split,
)
from tasks.agent_stress.dataset import KINDS, stress_dataset
from tasks.agent_stress.scorer import host_leaks, stress_scorer, stress_summary
from tasks.agent_stress.solver import stress_agent

TASK_VERSION = "1.0.0"


@task
def agent_stress(
    sandbox: SandboxKind = "bwrap",
    mode: BwrapMode = "persistent",
    concurrency: int = 16,
    samples: int | None = None,
    workloads: str = "all",
    split: str = "test",
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
        split: test (default) or all: every kind (none is chosen on data:
            tasks/agent_stress/splits.yaml); dev has no kind and is an error.
        agent: scripted (the task's own scripted model makes the workload's calls:
            deterministic; the model under test is not called) | model (the model under test, or
            role.agent, is told to make the calls).
        memory_mb: the sandbox's memory limit (the memory hog asks for twice this).
        max_processes: the sandbox's process limit (the fork bomb asks for 511).
        disk_mb: the sandbox's disk quota (bwrap as root; docker: /workspace, /tmp and /dev/shm
            together, tmpfs mounts that count against memory_mb).
        fault_timeout: seconds before a runaway or SIGTERM-ignoring command is killed.
        sample_time_limit: seconds for a whole sample.
        max_tokens: generation cap per agent turn (agent=model).
        subprocess_gate: commands wait for inspect's subprocess gate (max_subprocesses, default
            the CPU count) as inspect's own tools do; false runs them all at once.
        seed: seed of the generated file contents.
    """
    cfg = StressConfig.from_params(locals())
    dataset = stress_dataset(cfg.sample_count, cfg.kinds, cfg.limits, cfg.seed)
    digest = text_hash(json.dumps([[s.id, s.metadata] for s in dataset], sort_keys=True))
    # Deterministic, so a re-run of the same command resumes (eval-set hashes the solver's
    # arguments); each sample's tag adds a random part, and footprints are kept per process.
    run_tag = f"as{digest.removeprefix('sha256:')[:10]}"
    max_turns = max(len(s.metadata["ops"]) for s in dataset if s.metadata) + 2
    return Task(
        dataset=dataset,
        model=_agent_model(cfg),
        solver=stress_agent(
            sandbox_kind=cfg.sandbox,
            run_tag=run_tag,
            max_turns=max_turns,
            subprocess_gate=cfg.subprocess_gate,
        ),  # fmt: skip
        scorer=stress_scorer(),
        metrics=[stress_summary(), host_leaks(run_tag)],
        sandbox=cfg.sandbox_spec(),
        config=GenerateConfig(max_connections=cfg.concurrency, max_tokens=cfg.max_tokens),
        time_limit=cfg.sample_time_limit,
        version=TASK_VERSION,
        metadata=task_metadata(
            dataset_source="generated: tasks/agent_stress/dataset.py workloads",
            dataset_hash=digest,
            generated=True,
            deviations=[],
            **split_metadata(cfg.split_name, load_split()),
            sandbox=cfg.sandbox,
            bwrap_mode=cfg.mode if cfg.sandbox == "bwrap" else None,
            concurrency=cfg.concurrency,
            agent=cfg.agent,
            workloads=list(cfg.kinds),
            subprocess_gate=cfg.subprocess_gate,
            limits=cfg.limits_record,
            run_tag=run_tag,
        ),
    )


def _agent_model(cfg: StressConfig) -> Model | None:
    """The scripted agent is the task's own model: the log names what drove the agent, never a
    model under test that was not called (agent=model: None, the model under test)."""
    if cfg.agent != "scripted":
        return None
    return get_model("scripted/agent_stress", responder="tasks.agent_stress.solver:scripted_agent")


# `make run`: one sample of each workload kind, four at a time, bwrap (persistent), scripted.
RUN_ALL_ARGS: dict[str, Any] = {"concurrency": 4, "samples": len(KINDS)}
