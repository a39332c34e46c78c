"""The task on `sandbox=docker` (the project's `docker_api` provider, one container per sample)
with the scripted agent: faults contained, well-behaved samples completed, the task's limits in
the containers, and every container and tagged process gone afterwards — counted, not assumed."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from inspect_ai import eval

from tasks.agent_stress import agent_stress
from tasks.agent_stress.leaks import tagged_processes


def _explain(log: Any) -> str:
    return "\n".join(f"{s.id}: {next(iter(s.scores.values())).explanation}" for s in log.samples)


def test_docker_sandbox_uses_docker_api_with_the_task_limits() -> None:
    from sandboxes.docker import PROVIDER, DockerConfig

    spec = agent_stress(sandbox="docker", memory_mb=192, max_processes=48, disk_mb=64,
                        fault_timeout=3, samples=10).sandbox  # fmt: skip
    assert spec is not None and spec.type == PROVIDER == "docker_api"
    assert isinstance(spec.config, DockerConfig)
    assert (spec.config.memory_mb, spec.config.max_processes, spec.config.disk_mb) == (192, 48, 64)


def test_faults_contained_containers_counted_on_docker(docker_ok: None, tmp_path: Path) -> None:
    workloads = "file_io,background_jobs,fork_bomb,memory_hog,ignore_sigterm,killed_mid_command"
    [log] = eval(agent_stress(sandbox="docker", concurrency=6, workloads=workloads),
                 model="scripted/agent-stress-docker", model_args={"reply": "unused"},
                 log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success", log.error
    assert log.results is not None
    m = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
    assert m["samples"] == 6 and m["ok_rate"] == 1.0, _explain(log)
    assert m["completed"] == 2 and m["contained"] == 4
    # measured on the engine, not nan: each sample's container was looked up by its name
    assert not math.isnan(m["leaked_containers"]) and m["leaked_containers"] == 0, m
    assert m["leaked_total"] == 0, m
    assert tagged_processes(log.eval.metadata["run_tag"]) == []
    assert log.eval.metadata["sandbox"] == "docker"


def test_container_counted_while_present(docker_ok: None) -> None:
    """The container lookup can see a leak: a live container counts 1, a removed one 0."""
    from sandboxes.docker import DockerConfig, DockerSandboxEnvironment
    from tasks.agent_stress.leaks import count_leaks, footprint_of

    environment = DockerSandboxEnvironment.create(DockerConfig(memory_mb=64), "agent_stress-test")
    try:
        footprint = footprint_of(environment, "docker", "as-test-container-count")
        assert footprint.containers == [environment.container_name]
        assert count_leaks([footprint])["containers"] == 1
    finally:
        environment.destroy()
    assert count_leaks([footprint])["containers"] == 0


def test_cli_sandbox_docker_keeps_the_task_limits(docker_ok: None, tmp_path: Path) -> None:
    """`harness eval sandbox=docker` gives other tasks the docker_api provider with the compose
    file's limits; a task that already chose docker_api keeps its own (here memory_mb=192)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    from harness.cli import main

    code = main(["eval", "task=agent_stress", "sandbox=docker", "model=scripted/cli",
                 "model_arg.reply=unused", "workloads=file_io", "samples=1", "concurrency=1",
                 "memory_mb=192", "max_processes=48", f"log_dir={tmp_path}",
                 "display=none"])  # fmt: skip
    assert code == 0
    [info] = list_eval_logs(str(tmp_path))
    spec = read_eval_log(info, header_only=True).eval.sandbox
    assert spec is not None and spec.type == "docker_api"
    assert spec.config.memory_mb == 192 and spec.config.max_processes == 48  # type: ignore[union-attr]
