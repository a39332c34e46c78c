"""What differs between the jail modes, and what the persistent jail's exec server must withstand:
background processes, cancellation, concurrency, a command attacking the server, a dead server."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.util import SandboxUnavailableError

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment
from tests.sandboxes._procs import wait_gone

run = asyncio.run
Factory = Callable[..., BwrapSandboxEnvironment]


def test_background_processes_between_execs(sandbox: BwrapSandboxEnvironment, mode: str) -> None:
    started = run(sandbox.exec(["sh", "-c", "sleep 300.123 >/dev/null 2>&1 & echo $!"], timeout=10))
    pid = started.stdout.strip()
    assert started.success and pid.isdigit(), started
    alive = run(sandbox.exec(["sh", "-c", f"kill -0 {pid} && echo alive"]))
    if mode == "persistent":  # one jail per sample: the process is still there
        assert alive.stdout == "alive\n", alive
        with pytest.raises(TimeoutError):  # a later command's timeout kills only that command
            run(sandbox.exec(["sleep", "30"], timeout=1))
        assert run(sandbox.exec(["sh", "-c", f"kill -0 {pid} && echo alive"])).stdout == "alive\n"
    else:  # one jail per exec: it died with its jail
        assert not alive.success, alive
        assert wait_gone("300.123") == []


def test_background_output_does_not_block_exec(sandbox: BwrapSandboxEnvironment) -> None:
    start = time.monotonic()
    result = run(sandbox.exec(["sh", "-c", "(sleep 2.5; echo late) & echo now"], timeout=20))
    assert result.stdout.startswith("now\n"), result
    assert time.monotonic() - start < 15


def test_setsid_child_killed_at_timeout(sandbox: BwrapSandboxEnvironment) -> None:
    with pytest.raises(TimeoutError):
        run(sandbox.exec(["sh", "-c", "setsid sleep 5151.25 & while :; do :; done"], timeout=2))
    assert wait_gone("5151.25") == [], "a child in its own session outlived the timeout"


def test_cancelled_exec_kills_command(sandbox: BwrapSandboxEnvironment) -> None:
    async def cancel() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(sandbox.exec(["sleep", "4343.5"], timeout=60), 1.5)

    run(cancel())
    assert wait_gone("4343.5") == [], "a cancelled exec left its command running"
    assert run(sandbox.exec(["echo", "alive"])).stdout == "alive\n"


def test_concurrent_execs_run_in_parallel(sandbox: BwrapSandboxEnvironment) -> None:
    async def three() -> list[str]:
        results = await asyncio.gather(
            *(sandbox.exec(["sh", "-c", f"sleep 2; echo {i}"], timeout=30) for i in range(3))
        )
        return [r.stdout for r in results]

    start = time.monotonic()
    assert run(three()) == ["0\n", "1\n", "2\n"]
    assert time.monotonic() - start < 5.5  # serialized they would take 6 s


# ----------------------------------------------------------------- the persistent exec server

_ATTACK = r"""
import ctypes, os, signal, socket, sys
me = os.getpid()
targets = []
for p in os.listdir('/proc'):
    if p.isdigit() and int(p) != me:
        try:
            if b'bwrap-exec-server' in open('/proc/%s/cmdline' % p, 'rb').read():
                targets.append(int(p))
        except OSError:
            pass
print('SERVER', targets)
for pid in targets:
    try:
        os.listdir('/proc/%d/fd' % pid); print('FDS-READABLE')
    except OSError as ex:
        print('fds', type(ex).__name__)
    libc = ctypes.CDLL(None, use_errno=True)
    print('ptrace', libc.ptrace(16, pid, 0, 0))  # PTRACE_ATTACH
    for sig in (signal.SIGKILL, signal.SIGSTOP):
        try:
            os.kill(pid, sig); print('SIGNALLED')
        except OSError as ex:
            print('kill', type(ex).__name__)
try:
    s = socket.socket(socket.AF_UNIX); s.connect('/.bwrap-exec/exec.sock'); print('CONNECTED')
except OSError as ex:
    print('connect', type(ex).__name__)
"""


@pytest.mark.skipif(
    os.geteuid() != 0, reason="the server has its own uid only when the harness runs as root"
)
@pytest.mark.parametrize("mode", ["persistent"], indirect=True)  # only this mode has a server
def test_command_cannot_reach_the_server(make_sandbox: Factory, mode: str) -> None:
    sb = make_sandbox()
    result = run(sb.exec(["python3", "-c", _ATTACK], timeout=30))
    assert "SERVER [" in result.stdout and "SERVER []" not in result.stdout, result  # control
    for bad in ("FDS-READABLE", "SIGNALLED", "CONNECTED", "ptrace 0"):
        assert bad not in result.stdout, result
    assert "kill PermissionError" in result.stdout and "connect PermissionError" in result.stdout
    assert run(sb.exec(["echo", "alive"])).stdout == "alive\n"


def _server_pids(sb: BwrapSandboxEnvironment) -> list[int]:
    """Host pids of this sample's exec server: descendants of its jail process."""
    assert sb._jail is not None
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(stat[1])
            except (OSError, IndexError, ValueError):
                pass
    tree, grew = {sb._jail.proc.pid}, True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return [
        p for p in tree if Path(f"/proc/{p}/cmdline").read_bytes().startswith(b"/usr/bin/python3")
    ]


@pytest.mark.parametrize("mode", ["persistent"], indirect=True)  # only this mode has a server
def test_killed_server_gives_clear_error(make_sandbox: Factory, mode: str) -> None:
    victim, bystander = make_sandbox(), make_sandbox()
    assert run(victim.exec(["echo", "up"])).stdout == "up\n"
    servers = _server_pids(victim)
    assert len(servers) == 1, servers  # control: the server of this sample was found
    os.kill(servers[0], signal.SIGKILL)
    with pytest.raises(SandboxUnavailableError, match="persistent jail is gone"):
        run(victim.exec(["echo", "up"]))
    with pytest.raises(SandboxUnavailableError, match="persistent jail is gone"):
        run(victim.read_file("anything"))
    assert run(bystander.exec(["echo", "still"])).stdout == "still\n"  # only that sample broke


def test_persistent_is_one_jail(make_sandbox: Factory, mode: str) -> None:
    sb = make_sandbox(BwrapConfig(memory_mb=512))
    first = run(sb.exec(["readlink", "/proc/self/ns/pid"]))
    second = run(sb.exec(["readlink", "/proc/self/ns/pid"]))
    assert first.success and first.stdout.startswith("pid:["), first
    assert (first.stdout == second.stdout) == (mode == "persistent"), (first, second)


@pytest.mark.skipif(os.geteuid() != 0, reason="private uids and gids only when the harness is root")
def test_each_persistent_command_has_its_own_group(
    sandbox: BwrapSandboxEnvironment, mode: str
) -> None:
    """issue 26.2: a fresh gid per command keeps a background process of an earlier exec (same
    uid) out of a later command's /proc/<pid>/{environ,fd,mem}; files stay the sample's own."""
    first = run(sandbox.exec(["sh", "-c", "id -u; id -g; id -G; echo one > f; chmod 600 f"]))
    second = run(sandbox.exec(["sh", "-c", "id -u; id -g; cat f; echo two >> f; cat f"]))
    uid, gid1, groups = first.stdout.split("\n")[:3]
    assert uid == str(sandbox.uid) and groups == gid1, first  # no supplementary groups
    lines = second.stdout.split("\n")
    assert lines[0] == uid and lines[2:5] == ["one", "one", "two"], second
    assert int(gid1) >= 10**9 and int(lines[1]) >= 10**9  # never a system group
    assert (gid1 != lines[1]) == (mode == "persistent"), (first, second)
