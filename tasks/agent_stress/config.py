"""agent_stress's frozen config (one field per `@task` parameter); no paper, so no deviations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from inspect_ai.util import SandboxEnvironmentSpec

from harness.splits import SourceSplit, SplitName, check_split, load_source_split
from tasks._config import TaskConfig
from tasks.agent_stress.dataset import FAULTS, KINDS, WELL_BEHAVED, Limits

__all__ = [
    "AgentKind",
    "BwrapMode",
    "SandboxKind",
    "StressConfig",
    "load_split",
    "split_kinds",
    "workload_kinds",
]

SandboxKind = Literal["bwrap", "docker", "local"]
BwrapMode = Literal["persistent", "per_exec"]
AgentKind = Literal["scripted", "model"]


@dataclass(frozen=True)
class StressConfig(TaskConfig):
    """The `agent_stress` task's parameters (see its docstring), checked on construction."""

    sandbox: SandboxKind
    mode: BwrapMode
    concurrency: int
    samples: int | None
    workloads: str
    split: str
    agent: AgentKind
    memory_mb: int
    max_processes: int
    disk_mb: int
    fault_timeout: int
    sample_time_limit: int
    max_tokens: int
    subprocess_gate: bool
    seed: int

    def __post_init__(self) -> None:
        if self.concurrency <= 0:
            raise ValueError(f"agent_stress: concurrency must be positive, got {self.concurrency}")
        self.kinds  # noqa: B018 - an unknown workload kind is an error at task load

    @property
    def split_name(self) -> SplitName:
        return check_split(self.split, task="agent_stress")

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds `workloads=` names that are on `split` (every kind is on test)."""
        return split_kinds(workload_kinds(self.workloads), self.split_name, load_split())

    @property
    def limits(self) -> Limits:
        return Limits(memory_mb=self.memory_mb, max_processes=self.max_processes,
                      fault_timeout_s=self.fault_timeout)  # fmt: skip

    @property
    def sample_count(self) -> int:
        return self.samples if self.samples is not None else max(self.concurrency, len(self.kinds))

    @property
    def limits_record(self) -> dict[str, int]:
        """The limits as the log records them."""
        return {"memory_mb": self.memory_mb, "max_processes": self.max_processes,
                "disk_mb": self.disk_mb, "fault_timeout_s": self.fault_timeout}  # fmt: skip

    def sandbox_spec(self) -> Any:
        limits = self.limits
        if self.sandbox == "bwrap":
            from sandboxes.bwrap import BwrapConfig

            config = BwrapConfig(
                mode=self.mode, memory_mb=limits.memory_mb, max_processes=limits.max_processes,
                disk_mb=self.disk_mb, timeout_s=limits.op_timeout_s,
            )  # fmt: skip
            return SandboxEnvironmentSpec("bwrap", config)
        if (
            self.sandbox == "docker"
        ):  # the project's engine-API provider (inspect's needs Compose v2)
            from sandboxes.docker import PROVIDER, DockerConfig

            docker_config = DockerConfig(
                memory_mb=limits.memory_mb, max_processes=limits.max_processes,
                disk_mb=self.disk_mb, timeout_s=limits.op_timeout_s,
            )  # fmt: skip
            return SandboxEnvironmentSpec(PROVIDER, docker_config)
        return "local"


def load_split() -> SourceSplit:
    """agent_stress's frozen split (tasks/agent_stress/splits.yaml: every kind on test)."""
    return load_source_split("agent_stress")


def split_kinds(
    kinds: tuple[str, ...], split: SplitName, source_split: SourceSplit
) -> tuple[str, ...]:
    """`kinds` on `split`; none left is an error that says why (no kind is on dev)."""
    kept = tuple(source_split.select(kinds, lambda k: k, split))
    if not kept:
        raise ValueError(
            f"agent_stress: no workload kind of {', '.join(kinds)} is on split={split}: "
            "nothing here is chosen on data, every kind is test (tasks/agent_stress/splits.yaml, "
            "README 'Chosen on data'); use split=test or all"
        )
    return kept


def workload_kinds(workloads: str) -> tuple[str, ...]:
    """The workload kinds `workloads=` names: all, well_behaved, faults or a comma list."""
    named = {"all": KINDS, "well_behaved": WELL_BEHAVED, "faults": FAULTS}
    if workloads in named:
        return named[workloads]
    kinds = tuple(k.strip() for k in workloads.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ValueError(
            f"agent_stress: workloads={workloads!r}: unknown kind(s) {unknown or '(none)'}; "
            f"give all, well_behaved, faults or a comma list of {', '.join(KINDS)}"
        )
    return kinds
