"""A real two-node Ray cluster on this machine for the tests: a head and one worker node.

Each node is its own `ray start --block` process group with private ports and a private temp
dir, so a test can kill one node (SIGKILL to its group) and the teardown stops exactly what the
test started. (Ray advertises the host's own address, not 127.0.0.1: it refuses multi-node
clusters on loopback. Nothing leaves the machine.)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psutil

RAY = Path(sys.executable).with_name("ray")
# Settings for a shared, loaded test machine. `ray start` gives a raylet a fixed 30 s
# to register, which a starved machine can miss: `start_two_node_cluster` then starts over.
TEST_NODE_ENV = {
    # A killed node is noticed in ~5 s (each check of a dead node fails at once); a live but
    # starved node has 5 s per answer and 5 misses in a row before it is declared dead.
    "RAY_health_check_period_ms": "1000",
    "RAY_health_check_timeout_ms": "5000",
    "RAY_health_check_failure_threshold": "5",
    # Ray's memory monitor kills workers when the *machine* is above 95 % memory, which other
    # jobs on a shared machine cause; the test's cells need little memory.
    "RAY_memory_monitor_refresh_ms": "0",
}


def free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


#: Set in each node's environment (inherited by its workers) to find them when it is killed.
_NODE_TAG = "GRID_TEST_NODE_TAG"


@dataclass
class RayNode:
    name: str
    process: subprocess.Popen
    log: Path
    tag: str = ""

    def kill(self) -> None:
        """SIGKILL the node as a lost machine: its process group (raylet, agents) and every
        process started for it (tagged by `GRID_TEST_NODE` and this node's start process), so
        no worker of the node lives on to finish a cell beside Ray's retry of it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for proc in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                env = proc.environ()
                if env.get("GRID_TEST_NODE") == self.name and env.get(_NODE_TAG) == self.tag:
                    proc.kill()
        self.process.wait(timeout=30)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=3)
        # Ray's daemons stay in the group after `ray start` exits; end every one of them.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)


@dataclass
class RayCluster:
    address: str
    temp_dir: Path
    env: dict[str, str]
    nodes: dict[str, RayNode] = field(default_factory=dict)

    def stop(self) -> None:
        for node in reversed(list(self.nodes.values())):
            node.stop()
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _node_ports(head: bool) -> list[str]:
    names = [
        "--node-manager-port",
        "--object-manager-port",
        "--dashboard-agent-listen-port",
        "--dashboard-agent-grpc-port",
        "--metrics-export-port",
        "--runtime-env-agent-port",
    ]
    if head:
        names += ["--ray-client-server-port", "--dashboard-port"]
    ports = free_ports(len(names) + 8)
    args = [f"{name}={port}" for name, port in zip(names, ports, strict=False)]
    return [*args, "--worker-port-list=" + ",".join(map(str, ports[len(names) :]))]


def _start(name: str, args: list[str], env: dict[str, str], temp_dir: Path) -> RayNode:
    log = temp_dir / f"{name}.log"
    tag = uuid.uuid4().hex
    with open(log, "w") as handle:
        process = subprocess.Popen(
            [str(RAY), "start", *args, "--block", "--disable-usage-stats"],
            env={**env, "GRID_TEST_NODE": name, _NODE_TAG: tag},
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return RayNode(name, process, log, tag)


def start_cluster(env: dict[str, str], *, cpus_per_node: int = 1) -> RayCluster:
    """Start the head and one worker node (both returning at once; `wait_ready` waits)."""
    # Short: Ray's unix socket paths live under it (limit ~107 characters).
    temp_dir = Path(tempfile.mkdtemp(prefix="rayt", dir="/tmp"))
    env = {**env, **TEST_NODE_ENV, "RAY_USAGE_STATS_ENABLED": "0"}
    port = free_ports(1)[0]
    cluster = RayCluster(address=f"127.0.0.1:{port}", temp_dir=temp_dir, env=env)
    common = [
        f"--num-cpus={cpus_per_node}",
        "--num-gpus=0",
        f"--object-store-memory={80 * 1024 * 1024}",
        "--include-dashboard=false",
    ]
    head_args = ["--head", f"--port={port}", f"--temp-dir={temp_dir}", *common, *_node_ports(True)]
    cluster.nodes["head"] = _start("head", head_args, env, temp_dir)
    return cluster


def add_worker_node(cluster: RayCluster, *, cpus: int = 1) -> RayNode:
    args = [
        f"--address={cluster.address}",
        f"--num-cpus={cpus}",
        "--num-gpus=0",
        f"--object-store-memory={80 * 1024 * 1024}",
        f"--temp-dir={cluster.temp_dir}",
        *_node_ports(False),
    ]
    node = _start("worker", args, cluster.env, cluster.temp_dir)
    cluster.nodes["worker"] = node
    return node


def wait_started(node: RayNode, timeout_s: float = 300) -> None:
    """Until `ray start` says the node runs (it has then registered with the head)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if node.process.poll() is not None:
            raise RuntimeError(f"ray node {node.name} exited: {node.log.read_text()[-2000:]}")
        if "Ray runtime started" in node.log.read_text(errors="replace"):
            return
        time.sleep(0.25)
    raise TimeoutError(f"ray node {node.name} did not start in {timeout_s} s")


def start_two_node_cluster(env: dict[str, str], *, attempts: int = 3) -> RayCluster:
    """Head and worker node, both started; a node that timed out at start-up means a fresh try."""
    for attempt in range(1, attempts + 1):
        cluster = start_cluster(env)
        add_worker_node(cluster)  # it waits for the head's GCS
        try:
            for node in cluster.nodes.values():
                wait_started(node)
            return cluster
        except (RuntimeError, TimeoutError):
            cluster.stop()
            if attempt == attempts:
                raise
    raise AssertionError("unreachable")
