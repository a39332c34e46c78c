"""Escape suite, result integrity (issue 26.2): a background process that the sample leaves
running (`nohup setsid python3 forger.py &`) attacks every process and channel it can find while
the harness makes >= 20 `exec` / `read_file` / `write_file` calls, and must change none of the
results the harness reads and learn none of what the harness sends (file contents, stdin, env).

The forger (below) watches /proc in a tight loop. Every process it sees that is not one of the
harness's own test commands (the exec server, file helpers, anything else) it freezes with
SIGSTOP, then tries to read its environment and every descriptor (stealing what flows in, e.g.
the contents of a `write_file`), to write a forged reply into every descriptor (a pipe carrying
results back, or the file being written), and finally SIGKILLs it. The harness's test commands
(they carry a marker in their argv, or are forks of the server that still show its command line,
between the fork and their exec) it does not kill - a sample can always kill its own commands,
which the harness then truthfully sees as a signal death - but it attacks their descriptors and
environment all the same, once per command line it sees (before and after the exec). It also
tries the exec server's socket. Each attempt is logged; the log is the positive control (the
forger ran during the calls, saw the processes and tried).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
import shlex
import time

import pytest

from sandboxes.bwrap import BwrapSandboxEnvironment

run = asyncio.run
ROUNDS = 6  # x 4 calls, + start and stop: > 20 calls while the forger runs

FORGER = r"""
import json, os, signal, socket, sys, time
log_path, stop_path, spare = sys.argv[1], sys.argv[2], sys.argv[3].encode()
me, seen, killed = os.getpid(), set(), set()
log = open(log_path, "a", buffering=1)
def note(*what):
    log.write(json.dumps([round(time.time(), 3)] + [w if isinstance(w, (int, str)) else repr(w)
                                                    for w in what]) + "\n")
def attack_memory(pid):
    try:
        mem = open("/proc/%d/mem" % pid, "r+b", buffering=0)
    except OSError as ex:
        note("mem-denied", pid, type(ex).__name__)
        return
    note("mem-opened", pid)
    with mem:
        for line in open("/proc/%d/maps" % pid):
            fields = line.split()
            if not fields[1].startswith("rw"):
                continue
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            try:
                mem.seek(lo)
                data = mem.read(min(hi - lo, 64 << 20))
            except OSError:
                continue
            for needle in (b"secret ", b"hidden test "):
                at = data.find(needle)
                while at >= 0:
                    note("stole-memory", pid, data[at : at + 80])
                    at = data.find(needle, at + 1)
def attack_fds(pid, is_spared):
    try:
        env = open("/proc/%d/environ" % pid, "rb").read()
        note("environ", pid, env)
    except OSError as ex:
        note("environ-denied", pid, type(ex).__name__)
    try:
        attack_memory(pid)
    except OSError as ex:
        note("mem-failed", pid, type(ex).__name__)
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError as ex:
        note("fds-denied", pid, type(ex).__name__)
        return
    for fd in fds:
        path = "/proc/%d/fd/%s" % (pid, fd)
        try:
            target = os.readlink(path)
        except OSError:
            continue
        if target.startswith("/dev/null") or target == log_path:
            continue  # (stealing its own log back into the log would grow it without end)
        try:
            r = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            try:
                note("stole", pid, fd, target, os.read(r, 1 << 20))
            finally:
                os.close(r)
        except OSError as ex:
            note("read-denied", pid, fd, target, type(ex).__name__)
        try:
            w = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            try:
                note("forged", pid, fd, target, os.write(w, b"FORGED\n"))
            finally:
                os.close(w)
        except OSError as ex:
            note("write-denied", pid, fd, target, type(ex).__name__)
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect("/.bwrap-exec/exec.sock")
    note("CONNECTED")
except OSError as ex:
    note("connect-denied", type(ex).__name__)
note("ready", me)
my_uid = os.getuid()
def uid_of(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("Uid:"):
            return int(line.split()[1])
def parent_cmdline(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("PPid:"):
            return open("/proc/%d/cmdline" % int(line.split()[1]), "rb").read()
deadline = time.time() + 300
while not os.path.exists(stop_path) and time.time() < deadline:
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me or int(name) in killed:
            continue
        pid = int(name)
        try:
            cmdline = open("/proc/%d/cmdline" % pid, "rb").read()
            uid = uid_of(pid)
        except (OSError, ValueError, TypeError):
            continue
        if not cmdline or (pid, cmdline) in seen:
            continue
        first = pid not in {p for p, _ in seen}
        seen.add((pid, cmdline))
        # the harness's test commands, and a fork of the server that has not exec'd yet (it shows
        # its parent's command line: a command on its way to our uid) are not killed. Decided on
        # the command lines alone: the child's uid changes under us (root, then ours before the
        # exec), and a rule on it raced that setuid (commands stopped or killed: 137/timeouts)
        try:
            is_start = b"bwrap-exec-server" in cmdline and parent_cmdline(pid) == cmdline
        except (OSError, ValueError):
            is_start = False
        is_spared = spare in cmdline or is_start
        note("saw", pid, int(spare in cmdline), cmdline[:200])
        if not is_spared:
            try:
                os.kill(pid, signal.SIGSTOP)
                note("stopped", pid)
            except OSError as ex:
                note("stop-denied", pid, type(ex).__name__)
        attack_fds(pid, is_spared)
        if not is_spared:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
                note("killed", pid)
            except OSError:
                pass
note("bye", len(seen))
"""

# Waits (<= 10 s) for a word in the forger's log; with "print", prints the log. One process whose
# argv carries the marker: a `grep`/`cat` child would be the forger's to kill.
_WAIT_FOR = r"""
import sys, time
path, word, show = sys.argv[1], sys.argv[2], sys.argv[4:] == ["print"]
end = time.time() + 10
text = ""
while time.time() < end:
    try:
        text = open(path).read()
    except OSError:
        text = ""
    if word in text:
        break
    time.sleep(0.02)
if show:
    sys.stdout.write(text)
"""

_COMMAND = r"""
import hashlib, os, sys, time
what, k = sys.argv[1], int(sys.argv[2])
data = sys.stdin.buffer.read()
time.sleep(0.2)  # long enough for the forger to find this process (stdin and env in its memory)
if what == "out":
    print("out-%d" % k); print("err-%d" % k, file=sys.stderr); sys.exit(k % 7 + 1)
if what == "stdin":
    print(hashlib.sha256(data).hexdigest())
if what == "env":
    print(hashlib.sha256(os.environ["SECRET"].encode()).hexdigest())
"""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_background_forger_changes_no_result(sandbox: BwrapSandboxEnvironment, mode: str) -> None:
    token = secrets.token_hex(6)
    spare = f"harness-test-command-{token}"
    log, stop = f"/tmp/forger-{token}.log", f"/tmp/forger-{token}.stop"
    cmd = ["python3", "-c", _COMMAND]
    sent: list[str] = []  # tokens of what the harness sends in; the forger must learn none
    run(sandbox.write_file("/tmp/forger.py", FORGER))
    started = run(sandbox.exec(["sh", "-c",
        f"nohup setsid python3 /tmp/forger.py {log} {stop} {spare} >/dev/null 2>&1 & "
        f"python3 -c {shlex.quote(_WAIT_FOR)} {log} ready {spare} && echo started", spare],
        timeout=60))  # fmt: skip
    assert started.stdout == "started\n", started
    started_at = time.time()
    calls = 1
    for k in range(ROUNDS):
        sent += [secrets.token_hex(16) for _ in range(3)]
        content = f"hidden test {k} {sent[-3]}\n".encode() * 50
        run(sandbox.write_file(f"d{k}/hidden_{k}.py", content))
        stdin = f"stdin secret {k} {sent[-2]}".encode()
        env_secret = f"env secret {k} {sent[-1]}"
        out = run(sandbox.exec([*cmd, "out", str(k), spare], timeout=60))
        assert (out.returncode, out.stdout, out.stderr) == (k % 7 + 1, f"out-{k}\n", f"err-{k}\n")
        fed = run(sandbox.exec([*cmd, "stdin", str(k), spare], input=stdin, timeout=60))
        assert (fed.returncode, fed.stdout) == (0, _sha(stdin) + "\n"), fed
        env = run(sandbox.exec([*cmd, "env", str(k), spare], env={"SECRET": env_secret},
                               cwd=f"d{k}", timeout=60))  # fmt: skip
        assert (env.returncode, env.stdout) == (0, _sha(env_secret.encode()) + "\n"), env
        assert run(sandbox.read_file(f"d{k}/hidden_{k}.py", text=False)) == content
        calls += 5
    with pytest.raises(FileNotFoundError):
        run(sandbox.read_file("does-not-exist.txt"))
    run(sandbox.write_file(stop, ""))
    stopped = run(sandbox.exec(["python3", "-c", _WAIT_FOR, log, "bye", spare, "print"]))
    calls += 2
    assert calls >= 20
    entries = [json.loads(line) for line in stopped.stdout.splitlines() if line.startswith("[")]
    kinds = [e[1] for e in entries]
    assert "ready" in kinds, stopped
    text = stopped.stdout
    for secret in sent:
        assert secret not in text, f"the forger learned a secret: {text[:3000]}"
    assert "CONNECTED" not in kinds and "connect-denied" in kinds
    opened = [e for e in entries if e[1] == "mem-opened" and e[2] in _commands_seen(entries)]
    assert not opened, f"the forger opened a harness command's memory: {opened}"
    if mode == "persistent":  # the forger lived through every call and attacked what it saw
        assert "bye" in kinds, "the forger did not live until the end"
        saw_commands = _commands_seen(entries)
        assert len(saw_commands) >= ROUNDS, f"control: the forger saw few commands: {entries}"
        if os.geteuid() == 0:
            assert "stop-denied" in kinds, "control: the forger never tried the server"
    else:  # per_exec: nothing of an exec outlives it, so the forger died with its start-up exec
        assert "bye" not in kinds and max(e[0] for e in entries) < started_at + 1, entries


def _commands_seen(entries: list[list[object]]) -> set[object]:
    """Pids of the harness's test commands the forger saw."""
    return {e[2] for e in entries if e[1] == "saw" and e[3] == 1}
