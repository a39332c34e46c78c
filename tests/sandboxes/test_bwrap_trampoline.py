"""The persistent jail's exec trampoline (sandboxes/bwrap/_trampoline.c, .py; _server.py's
_spawn_fast): the command it starts is the sample's uid with no capability in any set, a fresh
group, nothing of the server's descriptors, and the caller's environment untouched; a failed start
reads as it did through the fork path; and the binary never runs a command it could not drop
privileges for."""

from __future__ import annotations

import asyncio
import os
import subprocess

import pytest

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment
from sandboxes.bwrap import _sandbox as bwrap_sandbox
from sandboxes.bwrap._trampoline import trampoline_binary

run = asyncio.run
ZERO = "0000000000000000"

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="the trampoline changes uid: only a root harness uses it"
)
needs_cc = pytest.mark.skipif(
    trampoline_binary() is None, reason="no C compiler here: the server keeps the fork path"
)


def _persistent() -> BwrapSandboxEnvironment:
    envs = run(BwrapSandboxEnvironment.sample_init("test", BwrapConfig(mode="persistent"), {}))
    return envs["default"].as_type(BwrapSandboxEnvironment)


def _cleanup(box: BwrapSandboxEnvironment) -> None:
    run(BwrapSandboxEnvironment.sample_cleanup("test", box.config, {"default": box}, False))


@pytest.fixture
def jail(bwrap_ok):
    box = _persistent()
    yield box
    _cleanup(box)


def _status(box: BwrapSandboxEnvironment) -> dict[str, str]:
    out = run(box.exec(["cat", "/proc/self/status"])).stdout
    return dict(line.split(":\t", 1) for line in out.splitlines() if ":\t" in line)


@needs_root
@needs_cc
def test_commands_start_through_the_trampoline_as_the_sample_with_nothing_kept(jail):
    assert jail._jail is not None and jail._jail.spawn == "trampoline"
    first, second = _status(jail), _status(jail)
    uid = str(jail.uid)
    assert first["Uid"].split() == [uid] * 4
    for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert first[key].strip() == ZERO, (key, first[key])
    assert first["NoNewPrivs"].strip() == "1"
    assert first["Groups"].strip() == ""
    gid_1, gid_2 = first["Gid"].split()[0], second["Gid"].split()[0]
    assert gid_1 != gid_2 and len(set(first["Gid"].split())) == 1  # a fresh group per command
    # only the command's own descriptors: the trampoline's error pipe closed with the exec
    fds = run(jail.exec(["sh", "-c", "ls /proc/$$/fd"])).stdout.split()
    assert sorted(fds) == ["0", "1", "2"], fds


@needs_root
@needs_cc
def test_the_callers_environment_reaches_the_command_untouched(jail):
    env = {"LD_PRELOAD": "", "GLIBC_TUNABLES": "glibc.malloc.check=0", "TMPDIR": "/tmp/x"}
    out = run(jail.exec(["env"], env=env)).stdout.splitlines()
    for key, value in env.items():
        assert f"{key}={value}" in out


@needs_root
@needs_cc
def test_a_failed_start_reads_as_on_the_fork_path(jail):
    missing = run(jail.exec(["no-such-command-here"]))
    assert missing.returncode == 127
    assert "no-such-command-here: No such file or directory" in missing.stderr
    run(jail.write_file("plain.txt", "not a program"))
    denied = run(jail.exec(["./plain.txt"]))
    assert denied.returncode == 126 and "Permission denied" in denied.stderr
    run(jail.exec(["chmod", "+x", "plain.txt"]))
    no_format = run(jail.exec(["./plain.txt"]))
    assert no_format.returncode == 126 and "Exec format error" in no_format.stderr
    # the first directory of PATH that has it
    run(jail.exec(["sh", "-c", "mkdir -p a b && printf '#!/bin/sh\\necho b\\n' > b/t"]))
    run(jail.exec(["chmod", "+x", "b/t"]))
    found = run(jail.exec(["t"], env={"PATH": "/workspace/a:/workspace/b:/usr/bin:/bin"}))
    assert found.stdout == "b\n", found


@needs_root
@needs_cc
def test_without_the_trampoline_the_server_forks_and_keeps_no_bounding_set(bwrap_ok, monkeypatch):
    monkeypatch.setattr(bwrap_sandbox, "install_trampoline", lambda folder: False)
    box = _persistent()
    try:
        assert box._jail is not None and box._jail.spawn == "fork"
        status = _status(box)
        assert status["CapBnd"].strip() == ZERO and status["CapEff"].strip() == ZERO
    finally:
        _cleanup(box)


@needs_cc
def test_the_trampoline_never_runs_a_command_it_could_not_drop_privileges_for(tmp_path):
    binary = trampoline_binary()
    assert binary is not None
    marker = tmp_path / "ran"
    read_end, write_end = os.pipe()
    argv = [str(binary), "6000", "1000000007", str(write_end), "--"]
    argv += ["sh", "-c", f"touch {marker}"]
    # unprivileged (nobody, no capabilities): setgroups is refused, so nothing is executed
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]
    done = subprocess.run(
        prefix + argv if os.geteuid() == 0 else argv, pass_fds=(write_end,), timeout=30
    )
    os.close(write_end)
    report = os.read(read_end, 8)
    os.close(read_end)
    assert done.returncode == 127 and not marker.exists()
    step, code = int.from_bytes(report[:4], "little"), int.from_bytes(report[4:], "little")
    assert (step, code) == (3, 1)  # STEP_SETGROUPS, EPERM


@needs_cc
def test_the_trampoline_refuses_malformed_arguments(tmp_path):
    binary = trampoline_binary()
    assert binary is not None
    for argv in (
        [],
        ["0", "5", "3", "--", "true"],  # uid 0
        ["6000", "5", "3", "true"],  # no "--"
        ["6000", "5", "x", "--", "true"],  # descriptor not a number
        ["6000", "5", "3", "--"],  # no command
    ):
        assert subprocess.run([str(binary), *argv], timeout=30).returncode == 127, argv
