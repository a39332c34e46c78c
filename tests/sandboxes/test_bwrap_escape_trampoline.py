"""Escape suite, the persistent jail's exec trampoline (issue 26.5; _server.py's _spawn_fast,
_trampoline.c): attacks on the path by which the server starts a command as the sample, each run
on both start paths ("trampoline": a vfork of the server and the static trampoline's exec;
"fork": CPython's fork of the server, what a jail without a C compiler uses), so that any
behaviour that differs between them shows.

Each test passes while the sandbox holds. A test of a hole that is still open is marked
`xfail(strict=True)` with the hole in its reason (it starts to pass, and so fails the suite, once
the hole is closed).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment
from sandboxes.bwrap import _jail as bwrap_jail
from sandboxes.bwrap import _sandbox as bwrap_sandbox
from sandboxes.bwrap._trampoline import trampoline_binary

run = asyncio.run
PATHS = ("trampoline", "fork")
ZERO = "0000000000000000"
CAPS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
SERVER_UID_OFFSET = 500_000_000  # the server's uid is the sample's + this (sandboxes/README.md)

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="only a root harness gives samples private uids"),
    pytest.mark.skipif(trampoline_binary() is None, reason="no C compiler: no trampoline here"),
]

Factory = Callable[..., BwrapSandboxEnvironment]


@pytest.fixture(params=PATHS)
def spawn_path(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_jail(bwrap_ok, spawn_path: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Factory]:
    """Persistent jails that start commands on `spawn_path`; all cleaned up after the test."""
    if spawn_path == "fork":
        monkeypatch.setattr(bwrap_sandbox, "install_trampoline", lambda folder: False)
    made: list[BwrapSandboxEnvironment] = []

    def make(**limits: object) -> BwrapSandboxEnvironment:
        config = BwrapConfig(mode="persistent", **limits)  # type: ignore[arg-type]
        envs = run(BwrapSandboxEnvironment.sample_init("test", config, {}))
        box = envs["default"].as_type(BwrapSandboxEnvironment)
        made.append(box)
        assert box._jail is not None and box._jail.spawn == spawn_path
        return box

    yield make
    for box in made:
        run(BwrapSandboxEnvironment.sample_cleanup("test", box.config, {"default": box}, False))


def _long_path(entries: int) -> str:
    """A PATH whose first `entries` folders do not exist: both start paths try an execve per
    folder after the uid change, so the window between the uid change and the command's exec
    grows to tens of milliseconds (what a process watching /proc needs to see it). One variable
    stays below the kernel's 128 KiB per string (MAX_ARG_STRLEN)."""
    assert entries * 8 < 120_000
    return ":".join([f"/x/{i:x}" for i in range(entries)] + ["/usr/bin", "/bin"])


# A background process of the sample (started by one exec, `nohup setsid`, running through the
# later ones), logging JSON lines to LOG for SECONDS. MODE:
#  - "scan": it reads every /proc/<pid>/status in a loop and logs "caps" for a process whose
#    real uid is the sample's that holds any capability (any set, bounding included) or another
#    uid, and "signal" for a process of another uid that it may signal (kill(pid, 0) succeeds and
#    the process still has that uid afterwards);
#  - "snipe", "stop", "kill": it sends SIGSTOP in a tight loop to the next free pids of the PID
#    namespace (the next processes the server starts): the kill succeeds the instant such a
#    process takes the sample's uid (before, it has the server's), so the process is frozen right
#    after its uid change, on its way to the command. "snipe" logs its status ("stopped": a
#    capability or another id there is a hole) and lets it go on; "stop" leaves the first one
#    stopped; "kill" SIGKILLs the first one. Each then watches the next pids.
# Last it logs ["scans", n] (the positive control: how many rounds it made).
WATCHER = r"""
import json, os, signal, sys, time
log_path, mode, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
me, uid = os.getpid(), os.getuid()
log = open(log_path, "a", buffering=1)
def status(pid):
    with open("/proc/%s/status" % pid) as f:
        return dict(l.split(":\t", 1) for l in f.read().splitlines() if ":\t" in l)
def held(st):
    caps = [k for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
            if int(st.get(k, "0").strip(), 16)]
    return caps + ["id"] * any(u != str(uid) for u in st.get("Uid", "").split())
time.sleep(0.3)  # the exec that started us has returned
flagged, rounds, end = set(), 0, time.time() + seconds
pids = lambda: [int(p) for p in os.listdir("/proc") if p.isdigit()]
last_pid = lambda: int(open("/proc/loadavg").read().split()[-1])  # of this PID namespace
done_upto, pending = last_pid(), set()
log.write(json.dumps(["ready", done_upto]) + "\n")
while time.time() < end:
    rounds += 1
    if mode == "scan":
        for pid in pids():
            if pid == me:
                continue
            try:
                st = status(pid)
                if st["Uid"].split()[0] != str(uid):
                    os.kill(pid, 0)
                    st = status(pid)  # it may have become the sample's in between
                    kind = "signal" if st["Uid"].split()[0] != str(uid) else None
                else:
                    kind = "caps" if held(st) else None
            except (OSError, ValueError, KeyError):
                continue
            if kind and (kind, pid) not in flagged:
                flagged.add((kind, pid))
                log.write(json.dumps([kind, pid, st]) + "\n")
        continue
    if mode == "done":
        time.sleep(0.05)
        continue
    last = last_pid()
    if last > done_upto:
        pending.update(range(done_upto + 1, last + 1))
        done_upto = last
    for pid in sorted(pending):
        try:
            os.kill(pid, signal.SIGKILL if mode == "kill" else signal.SIGSTOP)
        except PermissionError:  # still the server's: try again next round
            continue
        except OSError:  # gone
            pending.discard(pid)
            continue
        pending.discard(pid)
        try:
            st = status(pid)
        except (OSError, ValueError):
            st = {}
        log.write(json.dumps([mode, pid, st]) + "\n")
        if mode == "snipe":
            os.kill(pid, signal.SIGCONT)
        else:
            mode = "done"
            break
log.write(json.dumps(["scans", rounds]) + "\n")
"""


def _start_watcher(box: BwrapSandboxEnvironment, action: str, seconds: float) -> Path:
    """Start WATCHER in the jail; return its log's host path (read from the host: a read_file or
    exec would start a process the watcher would act on) once it is ready."""
    run(box.write_file("/tmp/watcher.py", WATCHER))
    log = Path(box.layout.tmp_dir) / "watcher.log"
    started = run(
        box.exec(
            ["sh", "-c", f"nohup setsid python3 /tmp/watcher.py /tmp/watcher.log {action} "
             f"{seconds} >/dev/null 2>&1 &"]
        )
    )  # fmt: skip
    assert started.returncode == 0, started
    deadline = time.monotonic() + 10.0
    while not (log.exists() and '["ready"' in log.read_text()):
        assert time.monotonic() < deadline, "the watcher did not start"
        time.sleep(0.02)
    return log


def _watcher_log(log: Path, wait_s: float = 0.0) -> list[list]:
    """The watcher's log lines (waiting up to `wait_s` for its last line)."""
    deadline = time.monotonic() + wait_s
    while True:
        text = log.read_text() if log.exists() else ""
        lines = [json.loads(line) for line in text.splitlines() if line.endswith("]")]
        if any(line[0] == "scans" for line in lines) or time.monotonic() >= deadline:
            return [line for line in lines if line[0] != "ready"]
        time.sleep(0.1)


def _exists(box: BwrapSandboxEnvironment, path: str) -> bool:
    return run(box.exec(["test", "-e", path])).returncode == 0


def _held(st: dict[str, str], uid: int) -> list[str]:
    """The capability sets that are not empty in `st` (a /proc status), and "id" when it shows
    an id other than `uid` (its uids) or a group the server uses (its gids)."""
    caps = [key for key in CAPS if int(st.get(key, "0").strip() or "0", 16)]
    uids = st.get("Uid", "").split()
    gids = st.get("Gid", "").split()
    foreign = any(u != str(uid) for u in uids) or str(uid + SERVER_UID_OFFSET) in gids
    return caps + ["id"] * foreign


def test_a_watcher_of_the_sample_can_signal_no_process_of_another_uid(
    make_jail: Factory, spawn_path: str
):
    """A watcher of the sample's scans /proc while the harness runs commands (a long PATH makes
    each start slow) and reads and writes files: no process of another uid (the server, a fork of
    it before its uid change, the trampoline before its setresuid, a file helper) may be
    signalable, and a background process a command left behind holds nothing."""
    box = make_jail(max_processes=64)
    log = _start_watcher(box, "scan", seconds=3.0)
    path = _long_path(12_000)
    for i in range(6):
        done = run(box.exec(["echo", str(i)], env={"PATH": path}))
        assert (done.returncode, done.stdout) == (0, f"{i}\n"), done
        run(box.write_file(f"f{i}", f"content {i}"))
        assert run(box.read_file(f"f{i}")) == f"content {i}"
    run(box.exec(["sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $! > /tmp/bg"]))
    bg = run(box.exec(["sh", "-c", "cat /proc/$(cat /tmp/bg)/status"])).stdout
    fields = dict(line.split(":\t", 1) for line in bg.splitlines() if ":\t" in line)
    assert not _held(fields, box.uid), bg
    lines = _watcher_log(log, wait_s=8.0)
    scans = [line[1] for line in lines if line[0] == "scans"]
    assert scans and scans[0] > 20, lines  # the positive control: it watched all along
    found = [line for line in lines if line[0] == "signal"]
    assert not found, _brief(found)


_FROZEN_HOLDS = (
    "a process of the sample frozen (SIGSTOP) right after the uid change of a command's start "
    "still holds capabilities: {}"
)


@pytest.mark.parametrize(
    "spawn_path",
    [
        pytest.param("trampoline", marks=pytest.mark.xfail(strict=True, reason=_FROZEN_HOLDS.format(
            "the trampoline, after setresuid(sample) and before its PR_CAPBSET_DROP loop/"
            "PR_CAP_AMBIENT_CLEAR_ALL/capset, has CapPrm=CapEff=CapAmb=CapInh=SETUID|SETGID|"
            "SETPCAP with all three uids the sample's (signalable, stoppable by the sample)"))),
        pytest.param("fork", marks=pytest.mark.xfail(strict=True, reason=_FROZEN_HOLDS.format(
            "the fork of the server, after setreuid(sample) and during its execve loop over "
            "PATH, has CapPrm=CapEff=KILL|SETGID|SETUID|DAC_READ_SEARCH"))),
    ],
)  # fmt: skip
def test_a_process_frozen_right_after_its_uid_change_holds_no_capability(
    make_jail: Factory, spawn_path: str
):
    """A background process of the sample sends SIGSTOP in a tight loop to the next pids: the
    first kill that succeeds freezes the next process the server starts at the instant it takes
    the sample's uid. Frozen there it must hold nothing: no capability in any set, no uid or group
    of the server. (The order that closes this: keep the real and saved uid the server's, i.e.
    setresuid(server, sample, server), empty every set, then setresuid(sample, sample, sample),
    which needs no capability; the sample cannot signal a process whose real and saved uids are
    not its own.)"""
    box = make_jail(max_processes=64)
    log = _start_watcher(box, "snipe", seconds=3.0)
    for i in range(12):
        done = run(box.exec(["echo", str(i)]))
        assert (done.returncode, done.stdout) == (0, f"{i}\n"), done
    lines = _watcher_log(log, wait_s=8.0)
    frozen = [line for line in lines if line[0] == "snipe"]
    assert len(frozen) >= 6, lines  # the positive control: it froze most starts
    found = [line for line in frozen if _held(line[2], box.uid)]
    assert not found, _brief(found)


def _brief(found: list[list]) -> str:
    keys = ("Name", "State", "Stopped", "PPid", "Uid", "Gid", *CAPS)
    return "\n".join(
        f"{kind} pid {pid}: " + ", ".join(f"{k}={st.get(k, '').strip()}" for k in keys)
        for kind, pid, st in found
    )


@pytest.mark.parametrize(
    "spawn_path",
    [
        "trampoline",
        pytest.param("fork", marks=pytest.mark.xfail(strict=True, reason=(
            "fork path: a fork of the server that a process of the sample stops after its "
            "setreuid, before its exec, blocks the server's Popen (it reads its error pipe "
            "with no timeout): the exec never answers, the host gives up past its slack "
            "(JailGoneError) and the serving thread hangs for good"))),
    ],
)  # fmt: skip
def test_a_start_stopped_before_the_commands_exec_times_out_and_the_jail_serves_on(
    make_jail: Factory, spawn_path: str, monkeypatch: pytest.MonkeyPatch
):
    """A background process of the sample stops (SIGSTOP) the next process the server starts,
    right after its uid change (a long PATH keeps it there), and leaves it stopped: the exec is a timeout (the command's own
    limit; the stopped start is killed), read as such, and the jail serves the next call."""
    monkeypatch.setattr(bwrap_jail, "_ANSWER_SLACK_S", 4.0)  # a hung server shows in seconds
    box = make_jail(max_processes=64)
    log = _start_watcher(box, "stop", seconds=6.0)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="timed out"):
        run(
            box.exec(
                ["sh", "-c", "echo ran > /tmp/ran"], env={"PATH": _long_path(12_000)}, timeout=2
            )
        )
    assert time.monotonic() - started < 4.0
    lines = _watcher_log(log, wait_s=0.0)
    assert [line[0] for line in lines[:1]] == ["stop"], lines  # the positive control
    assert not _exists(box, "/tmp/ran")  # it never ran
    after = run(box.exec(["echo", "still serving"]))
    assert (after.returncode, after.stdout) == (0, "still serving\n")


def test_a_start_killed_before_the_commands_exec_reads_as_a_signal_death(
    make_jail: Factory, spawn_path: str
):
    """SIGKILL of the next process the server starts, right after its uid change: the harness
    reads a death by SIGKILL (137) with no output, never a success or a forged "not found", and
    the command never ran; the next exec is unaffected."""
    box = make_jail(max_processes=64)
    log = _start_watcher(box, "kill", seconds=3.0)
    done = run(
        box.exec(
            ["sh", "-c", "echo ran > /tmp/ran; echo out"],
            timeout=10,
            env={"PATH": _long_path(12_000)},
        )
    )
    lines = _watcher_log(log, wait_s=0.0)
    assert [line[0] for line in lines[:1]] == ["kill"], lines  # the positive control
    assert (done.returncode, done.stdout) == (137, ""), done
    assert not _exists(box, "/tmp/ran")
    after = run(box.exec(["sh", "-c", "exit 3"]))
    assert after.returncode == 3
