"""Each sample's host footprint is taken from the provider's own environment, not from the
event-recording proxy inspect hands the solver (which has none of the provider's attributes):
without it, a bwrap sample's cgroups, mounts, folder and uids, a local sample's folder and a
docker sample's container would silently go uncounted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import eval

from tasks.agent_stress import agent_stress
from tasks.agent_stress.leaks import registry_for


def _footprints(tmp_path: Path, **args: Any) -> list[Any]:
    [log] = eval(agent_stress(workloads="file_io", samples=1, concurrency=1, **args),
                 model="scripted/agent-stress-footprint", model_args={"reply": "unused"},
                 log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success", log.error
    assert log.samples is not None
    # the run tag depends on the dataset only: earlier runs of the same samples share it
    return registry_for(log.eval.metadata["run_tag"]).of_samples([str(log.samples[0].id)])[-1:]


def test_bwrap_footprint_captured(bwrap_ok: None, tmp_path: Path) -> None:
    [footprint] = _footprints(tmp_path, sandbox="bwrap")
    assert footprint.bwrap is not None


def test_local_footprint_captured(tmp_path: Path) -> None:
    [footprint] = _footprints(tmp_path, sandbox="local")
    assert footprint.folder is not None and not Path(footprint.folder).exists()


def test_docker_footprint_captured(docker_ok: None, tmp_path: Path) -> None:
    [footprint] = _footprints(tmp_path, sandbox="docker")
    assert footprint.containers and footprint.containers[0].startswith("icml26-sbx-")
    assert footprint.containers_measured
