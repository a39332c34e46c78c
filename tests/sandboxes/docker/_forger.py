"""A background forger/interferer for the docker_api escape tests (issue 26 §2), and the engine's
own exec as the tests' ground truth.

The forger runs inside the sample's container as the sample's uid, started by an earlier `exec`
(`nohup setsid python3 forger.py … &`). Every few hundred microseconds it walks /proc and attacks
every process that is not itself and not one of the harness's commands (their argv carries the
test's marker: the sample's own commands are its own to kill, that is no forgery):

- it opens the process's /proc/<pid>/fd/0, fd/1 and fd/2; where that works (the issue's window: a
  process of its own uid that is still dumpable) it SIGSTOPs the process, steals what waits on its
  stdin (the request: a command, a file's contents), writes a forged reply into its stdout
  (`FORGED`, in the supervisor's framing), and SIGKILLs it;
- it sends SIGSTOP to every process of another uid (the engine's exec, a supervisor or server);
- it connects to every unix socket listed in /proc/net/unix and writes `FORGED` there.

It spares, besides the marked commands, the exec server's forks that have not exec'd yet (they
show the server's command line, their parent is the root server): each is a harness command on its
way to the sample's uid, which the sample may kill like any of its own commands. Deciding that on
the child's uid instead would race the child's setuid (seen: a SIGSTOP that landed between the
setuid and the exec, and a command that then timed out). File-only tests start it without that
rule, so that it attacks the file helper (another fork of the server) as well.

It logs each attempt (one JSON object per line) to a file that the test reads through the engine.
"""

from __future__ import annotations

import shlex
from typing import Any

FORGER = r"""
import json, os, signal, socket, struct, sys, time
marker, log_path, seconds = sys.argv[1].encode(), sys.argv[2], float(sys.argv[3])
spare_forks = sys.argv[4] == "spare-forks"
me, my_uid = os.getpid(), os.getuid()
log = open(log_path, "a", buffering=1)
def note(**kw):
    log.write(json.dumps(kw) + "\n")
body = b"FORGED"
head = json.dumps({"status": "ok", "returncode": 0, "out_len": len(body), "err_len": 0}).encode()
FORGED = struct.pack("<Q", len(head)) + head + body

def steal(fd):
    data, end = b"", time.monotonic() + 1.0
    while time.monotonic() < end:
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            time.sleep(0.005); continue
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data

def attack(pid, uid):
    fds = {}
    for n, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            fds[n] = os.open("/proc/%d/fd/%d" % (pid, n), flags | os.O_NONBLOCK)
        except OSError as ex:
            note(event="open-denied", pid=pid, fd=n, errno=ex.errno)
    if uid != my_uid or fds:
        try:
            os.kill(pid, signal.SIGSTOP)
            note(event="stopped", pid=pid, uid=uid)
        except OSError as ex:
            note(event="signal-denied", pid=pid, uid=uid, errno=ex.errno)
    if not fds:
        return
    stolen = steal(fds[0]) if 0 in fds else b""
    note(event="stolen", pid=pid, data=stolen.decode("latin-1"))
    for n in (1, 2):
        if n in fds:
            try:
                os.write(fds[n], FORGED)
                note(event="forged", pid=pid, fd=n)
            except OSError as ex:
                note(event="write-denied", pid=pid, fd=n, errno=ex.errno)
    for fd in fds.values():
        os.close(fd)
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass

def real_uid_and_parent(pid):
    fields = {}
    for line in open("/proc/%d/status" % pid):
        key, _, value = line.partition(":")
        fields[key] = value.split()
    return int(fields["Uid"][0]), int(fields["PPid"][0])

def command_start(pid, cmdline):
    # a fork of a root process that has not exec'd yet (it still shows its parent's command
    # line): the exec server starting one of the harness's commands. Decided on the command line
    # and the parent alone, never on the child's uid, which changes under us (root, then the
    # sample's just before the exec)
    try:
        _, ppid = real_uid_and_parent(pid)
        parent_uid, _ = real_uid_and_parent(ppid)
        parent_cmdline = open("/proc/%d/cmdline" % ppid, "rb").read()
    except (OSError, KeyError, ValueError):
        return False
    return ppid not in (0, 1, me) and parent_uid == 0 and parent_cmdline == cmdline

def sockets():
    try:
        lines = open("/proc/net/unix").read().splitlines()[1:]
    except OSError:
        return
    for line in lines:
        parts = line.split()
        if len(parts) < 8:
            continue
        path = parts[7]
        address = "\0" + path[1:] if path.startswith("@") else path
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(0.05); s.connect(address); s.sendall(FORGED)
                note(event="socket-forged", path=path)
        except OSError:
            pass

note(event="ready", pid=me, uid=my_uid)
attacked, hammered, end, scans = set(), set(), time.monotonic() + seconds, 0
while time.monotonic() < end:
    scans += 1
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (me, 1):
            continue
        pid = int(name)
        try:
            cmdline = open("/proc/%d/cmdline" % pid, "rb").read()
            uid = os.stat("/proc/%d" % pid).st_uid
        except OSError:
            continue
        if not cmdline or marker in cmdline:
            continue
        if (pid, cmdline) in attacked:
            if pid in hammered:  # a fork of the server: stop it at any moment of its life
                try:
                    os.kill(pid, signal.SIGSTOP)
                    note(event="stopped", pid=pid, uid=uid)
                except OSError:
                    pass
            continue
        attacked.add((pid, cmdline))
        if command_start(pid, cmdline):
            if spare_forks:
                note(event="spared-start", pid=pid)
                continue
            hammered.add(pid)
        attack(pid, uid)
    if scans % 200 == 0:
        sockets()
    time.sleep(0.0003)
note(event="done", scans=scans)
"""

LOG = "/tmp/.forger.log"


def start_command(marker: str, seconds: float = 120, spare_starts: bool = True) -> list[str]:
    """The `exec` argv that starts the forger in the background (detached, like `nohup … &`).
    Its own argv carries no marker, so it attacks everything but the harness's commands: those
    carrying the marker and, with `spare_starts`, the server's forks before their exec (a command
    on its way to the sample's uid: the sample may always kill its own commands, and a forger that
    decided on the child's uid would race its setuid). Without it, every fork of the server is
    attacked too (file-only tests: the file helper must be out of the sample's reach)."""
    flag = "spare-forks" if spare_starts else "attack-forks"
    script = f"python3 -c {shlex.quote(FORGER)} {marker} {LOG} {seconds} {flag}"
    return ["sh", "-c", f"nohup setsid {script} >/dev/null 2>&1 & echo started # {marker}"]


def engine_exec(sandbox: Any, path: str, marker: str) -> bytes:
    """The contents of `path` in the sample's container, read through the engine's own exec API
    (not the sandbox's channel) as the sample's uid: the tests' ground truth. One process whose
    argv carries the marker (the forger leaves the harness's own processes alone)."""
    from sandboxes.docker import docker_client

    api = docker_client().api
    code = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"
    created = api.exec_create(
        sandbox.container_id, ["python3", "-c", code, path, marker],
        user=f"{sandbox.uid}:{sandbox.uid}", workdir="/workspace",
    )  # fmt: skip
    return bytes(api.exec_start(created["Id"]))


def forger_log(sandbox: Any, marker: str) -> list[dict[str, Any]]:
    import json

    raw = engine_exec(sandbox, LOG, marker)
    return [json.loads(line) for line in raw.decode("latin-1").splitlines() if line.startswith("{")]
