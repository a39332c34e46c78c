"""Escape suite: every test tries to break out of the bwrap sandbox through `exec` and checks on the
host that it could not. Each has a positive control, so it fails if isolation breaks."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment
from tests.sandboxes._procs import wait_gone

run = asyncio.run
PROJECT = Path(__file__).resolve().parents[2]
_CONNECT = """
import socket, sys, time
t = time.monotonic()
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5).close()
    print("CONNECTED")
except OSError as ex:
    print("FAILED", type(ex).__name__, ex)
print("SECONDS", round(time.monotonic() - t, 2))
"""


def _host_process_count() -> int:
    return sum(1 for e in os.scandir("/proc") if e.name.isdigit())


# ------------------------------------------------------------------------------------- network


def test_loopback_of_host_unreachable(sandbox: BwrapSandboxEnvironment) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        socket.create_connection(("127.0.0.1", port), timeout=2).close()  # control: host reaches it
        result = run(sandbox.exec(["python3", "-c", _CONNECT, "127.0.0.1", str(port)]))
    assert "CONNECTED" not in result.stdout, result
    assert "FAILED" in result.stdout, result


def test_outside_address_fails_fast(sandbox: BwrapSandboxEnvironment) -> None:
    start = time.monotonic()
    result = run(sandbox.exec(["python3", "-c", _CONNECT, "1.1.1.1", "53"]))
    assert "FAILED" in result.stdout and "CONNECTED" not in result.stdout, result
    assert time.monotonic() - start < 4, "an unreachable network must fail at once, not time out"


def test_only_loopback_interface(sandbox: BwrapSandboxEnvironment) -> None:
    host_ifaces = {
        ln.split(":")[0].strip() for ln in Path("/proc/net/dev").read_text().splitlines()[2:]
    }
    result = run(sandbox.exec(["cat", "/proc/net/dev"]))
    inside = {ln.split(":")[0].strip() for ln in result.stdout.splitlines()[2:]}
    assert inside == {"lo"}, (inside, host_ifaces)


# ------------------------------------------------------------------------------------- files


@pytest.mark.parametrize(
    "target",
    ["/escape.txt", "/usr/escape.txt", "/etc/escape.txt", "/usr/bin/escape", "/proc/escape"],
)
def test_writes_outside_work_dir_fail(sandbox: BwrapSandboxEnvironment, target: str) -> None:
    result = run(sandbox.exec(["sh", "-c", f"echo pwned > {target}"]))
    assert not result.success, result
    assert not Path(target).exists()
    with pytest.raises(PermissionError):
        run(sandbox.write_file(target, "pwned"))
    assert not Path(target).exists()


def test_project_dir_read_only_when_bound(
    make_sandbox: Callable[..., BwrapSandboxEnvironment],
) -> None:
    marker = PROJECT / "sandboxes" / "escape-marker.txt"
    hidden = make_sandbox()  # not bound: not even visible
    assert not run(hidden.exec(["ls", str(PROJECT)])).success
    bound = make_sandbox(BwrapConfig(ro_binds=[str(PROJECT)]))
    listed = run(bound.exec(["ls", str(PROJECT)]))
    assert listed.success and "pyproject.toml" in listed.stdout  # control: it is readable
    wrote = run(bound.exec(["sh", "-c", f"echo pwned > {marker}"]))
    assert not wrote.success and "Read-only" in wrote.stderr, wrote
    assert not marker.exists()
    assert not run(bound.exec(["rm", "-f", str(PROJECT / "pyproject.toml")])).success
    assert (PROJECT / "pyproject.toml").exists()


def test_home_and_root_invisible(sandbox: BwrapSandboxEnvironment) -> None:
    host_home = Path(os.path.expanduser("~"))
    assert host_home.is_dir() and any(host_home.iterdir())  # control: the host's home has files
    for path in ("/root", "/home", str(host_home)):
        result = run(sandbox.exec(["ls", "-A", path]))
        assert not result.success and "No such file" in result.stderr, (path, result)
    with pytest.raises(FileNotFoundError):
        run(sandbox.read_file(str(host_home / ".bashrc")))
    env = run(sandbox.exec(["env"])).stdout
    assert str(host_home) not in env.replace("HOME=/workspace", "")


@pytest.mark.skipif(os.geteuid() != 0, reason="only meaningful when the harness runs as root")
def test_root_only_host_files_unreadable(sandbox: BwrapSandboxEnvironment) -> None:
    assert Path("/etc/shadow").read_bytes()  # control: the host (root) can read it
    result = run(sandbox.exec(["cat", "/etc/shadow"]))
    assert not result.success and "Permission denied" in result.stderr, result


# ------------------------------------------------------------------------------------- processes


def test_own_pid_namespace(sandbox: BwrapSandboxEnvironment) -> None:
    result = run(sandbox.exec(["sh", "-c", "echo $$; ls /proc | grep -E '^[0-9]+$'"]))
    lines = result.stdout.split()
    shell_pid, pids = int(lines[0]), [int(p) for p in lines[1:]]
    assert shell_pid < 10, result
    assert len(pids) < 8 and max(pids) < 10, pids  # only the sandbox's own few processes
    assert _host_process_count() > len(pids)
    init = run(sandbox.exec(["cat", "/proc/1/cmdline"])).stdout
    assert "bwrap" in init, init


def test_runaway_loop_killed_at_time_limit(sandbox: BwrapSandboxEnvironment) -> None:
    marker = "31337.4242"
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        run(sandbox.exec(["sh", "-c", f"sleep {marker} & while :; do :; done"], timeout=2))
    assert time.monotonic() - start < 6
    assert wait_gone(marker) == [], "a background child outlived the timeout"
    if sandbox.uid is not None:
        assert not [p for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == sandbox.uid]
    assert run(sandbox.exec(["echo", "alive"])).stdout == "alive\n"  # the sandbox still works


def _uid_of(pid: str) -> int | None:
    try:
        for line in Path("/proc", pid, "status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def test_process_limit_enforced(sandbox: BwrapSandboxEnvironment) -> None:
    script = """
import os, time
n = 0
for _ in range(500):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30); os._exit(0)
    n += 1
print(n)
"""
    result = run(sandbox.exec(["python3", "-c", script], timeout=60))
    forked = int(result.stdout.strip())
    assert 0 < forked < 80, result  # max_processes=64 (+ a few for bwrap itself)


def test_fork_bomb_stopped_host_fine(sandbox: BwrapSandboxEnvironment) -> None:
    baseline = _host_process_count()
    script = "bomb_31415() { bomb_31415 | bomb_31415 & }; bomb_31415; sleep 60"
    with pytest.raises(TimeoutError):
        run(sandbox.exec(["bash", "-c", script], timeout=5))
    subprocess.run(["true"], check=True, timeout=10)  # the host can still spawn processes
    assert wait_gone("bomb_31415", 10) == [], "fork bomb processes outlived the sandbox call"
    # other work shares this host, so allow some drift in its own process count
    assert _host_process_count() <= baseline + 50
    assert run(sandbox.exec(["echo", "alive"])).stdout == "alive\n"


def test_memory_hog_stopped(sandbox: BwrapSandboxEnvironment) -> None:
    hog = "b = bytearray(4 * 1024**3); print('ALLOCATED', len(b))"
    result = run(sandbox.exec(["python3", "-c", hog], timeout=60))
    assert not result.success and "ALLOCATED" not in result.stdout, result
    touch = """
chunks = []
for i in range(40):  # 4 GB in touched 100 MB chunks
    chunks.append(bytearray(100 * 1024**2))
    for j in range(0, len(chunks[-1]), 4096):
        chunks[-1][j] = 1
print('SURVIVED')
"""
    result = run(sandbox.exec(["python3", "-c", touch], timeout=120))
    assert not result.success and "SURVIVED" not in result.stdout, result


def test_memory_split_across_processes_stopped(sandbox: BwrapSandboxEnvironment) -> None:
    if sandbox.cgroup is None:
        pytest.skip("without a memory cgroup the limit is per process (RLIMIT_AS); see README")
    script = """
import os, time
for _ in range(8):  # 8 x 200 MB > the sample's 512 MB
    if os.fork() == 0:
        b = bytearray(200 * 1024**2)
        for j in range(0, len(b), 4096): b[j] = 1
        time.sleep(5); os._exit(0)
ok = 0
for _ in range(8):
    ok += os.wait()[1] == 0
print('OK', ok)
"""
    result = run(sandbox.exec(["python3", "-c", script], timeout=60))
    assert "OK 8" not in result.stdout, result


# ------------------------------------------------------------------------------------- cleanup


def test_cleanup_removes_work_dir(make_sandbox: Callable[..., BwrapSandboxEnvironment]) -> None:
    sb = make_sandbox()
    run(sb.write_file("x/y.txt", "data"))
    run(sb.exec(["sh", "-c", "sleep 4242.77 & disown; echo started"], timeout=5))
    root, cgroup = sb.root, sb.cgroup
    assert (root / "workspace" / "x" / "y.txt").exists()
    run(BwrapSandboxEnvironment.sample_cleanup("test", None, {"default": sb}, False))
    assert not root.exists()
    assert wait_gone("4242.77") == []
    if cgroup is not None:
        assert not any(d.exists() for d in cgroup.dirs)
