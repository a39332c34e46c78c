"""Cleanup of the docker_api sandbox's containers: after a normal end, and after SIGKILL of the
harness (the next run's reaper removes what the dead process left; live owners are left alone)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[3]
_HARNESS = """
import asyncio, sys, time
from sandboxes.docker import DockerConfig, DockerSandboxEnvironment
envs = asyncio.run(DockerSandboxEnvironment.sample_init("reaper-test", DockerConfig(), {}))
sb = envs["default"]
asyncio.run(sb.exec(["sh", "-c", "sleep 5151.5 >/dev/null 2>&1 &"], timeout=30))
print(sb.container_id, flush=True)
time.sleep(600)
"""


def _containers(container_id: str) -> list[dict]:
    from sandboxes.docker import docker_client

    return list(docker_client().api.containers(all=True, filters={"id": container_id}))


def test_sigkilled_harness_containers_reaped(docker_ok: None) -> None:
    from sandboxes.docker import LABEL_OWNER, owner_alive, reap_stale_containers

    child = subprocess.Popen(
        [sys.executable, "-c", _HARNESS], cwd=PROJECT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        container_id = child.stdout.readline().strip()
        assert container_id, "the child harness did not start a container"
        [found] = _containers(container_id)
        assert owner_alive(found["Labels"]) is True
        reap_stale_containers("sandbox")  # its owner lives: left alone
        assert _containers(container_id), "a live harness's container was reaped"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    [found] = _containers(container_id)  # SIGKILL: no atexit, the container is still there
    assert owner_alive(found["Labels"]) is False, found["Labels"][LABEL_OWNER]
    assert reap_stale_containers("sandbox") >= 1
    deadline = time.monotonic() + 30
    while _containers(container_id) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _containers(container_id) == []


def test_owner_labels_tell_live_from_dead() -> None:
    from sandboxes.docker import LABEL_OWNER, owner_alive, owner_labels

    mine = owner_labels("sandbox")
    assert owner_alive(mine) is True
    boot, pid, start = mine[LABEL_OWNER].split(":")
    assert owner_alive({**mine, LABEL_OWNER: f"{boot}:{pid}:{int(start) + 1}"}) is False  # reuse
    assert owner_alive({**mine, LABEL_OWNER: "garbage"}) is False
    other_host = {**mine, LABEL_OWNER: f"other-boot:{pid}:{start}", "org.icml26-harness.host": "x"}
    assert owner_alive(other_host) is None  # another machine's: not ours to judge


def test_sample_cleanup_removes_container(docker_ok: None) -> None:
    from sandboxes.docker import DockerConfig, DockerSandboxEnvironment, own_containers

    envs = asyncio.run(DockerSandboxEnvironment.sample_init("cleanup-test", DockerConfig(), {}))
    sb = envs["default"]
    assert sb.container_id in [c["Id"] for c in own_containers("sandbox")]
    asyncio.run(DockerSandboxEnvironment.sample_cleanup("cleanup-test", None, envs, False))
    assert sb.container_id not in [c["Id"] for c in own_containers("sandbox")]


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_seccomp_personality_rules_exact(machine: str) -> None:
    """Each personality value is refused unless Docker allows it: runc ORs several conditions
    on one argument, so each rule has one masked comparison (checked here against the kernel's
    32-bit reading of the argument)."""
    import json

    from sandboxes.bwrap import PERSONALITY_ALLOWED
    from sandboxes.docker import seccomp_profile

    profile = json.loads(seccomp_profile(machine))
    rules = [r for r in profile["syscalls"] if r["names"] == ["personality"]]
    assert all(len(r["args"]) == 1 for r in rules)

    def refused(value: int) -> bool:
        low = value & 0xFFFFFFFF
        return any(low & r["args"][0]["value"] == r["args"][0]["valueTwo"] for r in rules)

    for value in PERSONALITY_ALLOWED:
        assert not refused(value), hex(value)
    for value in (1, 7, 9, 0x1FFFF, 0x20001, 0x40000, 0x0400000, 0xFFFFFFFE, 0x80000000):
        assert refused(value), hex(value)
    assert not refused(0xFFFFFFFFFFFFFFFF)  # personality(-1): the query, as the kernel reads it
