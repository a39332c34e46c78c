# bwrap-exec-server: runs INSIDE a persistent jail, by the jail's own python3 (stdlib only, -I -S).
"""The exec server of a persistent bwrap jail (see _jail.py for the host side).

    python3 -I -S bwrap-exec-server.py SOCKET_PATH UID_JSON

Listens on the unix socket SOCKET_PATH (in a folder only its own uid can enter) and serves one
request per connection; the thread that accepted a connection serves it (a few threads wait in
accept(), see _acceptor):

    request: 4-byte big-endian length, JSON {"op", "cmd", "cwd", "env", "timeout", "cap",
             "path", "input_len"}, then input_len raw bytes (stdin, or the file's contents)
    reply:   4-byte big-endian length, JSON {"status", "returncode", "stdout_len", "stderr_len",
             "stream", "message"}, then the raw stdout and stderr bytes

op "exec" (the default) runs `cmd`; op "read" reads the regular file `path` (at most `cap`
bytes; the reply's stdout) and op "write" writes the input to it, both in a file helper (below);
their returncode is 0 or one of the _files.py codes, stderr names a refused file's type.

status: "exited" (returncode set), "timeout" (the command tree was killed), "overflow" (`stream`
passed `cap` bytes; the tree was killed and the reply carries the first `cap` bytes), "error"
(the command could not be started; `message` says why).

UID_JSON is the sample's uid when the server runs as its own uid (harness as root), else null.
Then the server starts with CAP_SETUID/SETGID/SETPCAP/KILL/DAC_READ_SEARCH (ambient, from
`setpriv`) and first empties its inheritable and ambient sets. A command starts one of two ways,
chosen once at start-up:

- through the trampoline (bwrap-exec-trampoline beside this file, a freestanding static binary
  from _trampoline.c), when it is there and passes a self-test: the serving thread raises
  CAP_SETUID/SETGID/SETPCAP as its own ambient capabilities for the one spawn, vforks and execs
  the trampoline, which drops to the sample's uid and a fresh group, empties the bounding,
  ambient, inheritable, permitted and effective sets and execs the command (_spawn_fast). The
  server's bounding set keeps those three for it; SETPCAP stays permitted, not effective;
- else by a fork of the server (CPython's Popen with user=/group=: setgroups/setregid/setreuid),
  the server's bounding set emptied and CAP_SETPCAP dropped at start-up.

Either way the command, exec'd under no_new_privs, ends with no capabilities in any set. The
trampoline saves the fork of the Python server (~1-2 ms on a VM: its page tables are copied). CAP_DAC_READ_SEARCH lets the child chdir into the sample's 0700
work dir before its uid changes (Popen chdirs first; the host always sends that fixed folder, a
caller's cwd is entered by the command itself: _command.ENTER_CWD); CAP_KILL lets the server kill
the command's tree.

Each command runs as the sample's uid with a group id of its own (a fresh one per exec, no
supplementary groups): the kernel lets a process open another's /proc/<pid>/{fd,environ,mem}
only when uid *and* gid match, so a background process left by an earlier exec cannot read a
later command's environment or memory, nor open its descriptors (its pipes to the server belong
to the server's uid anyway). It can still see and signal it (same uid): a sample can always kill
its own commands, and the harness then sees that truthfully as a signal death.

read/write run in a file helper forked from the server (bwrap_exec_files.py beside this file,
from _server_files.py): out of reach of every process of the sample.

Each command runs in a new session, i.e. its own process group. A timeout, an output overflow or
the host hanging up kills that group, that session and every descendant of the command. Once the
command has exited, output still held open by background processes it left running is drained (and
discarded) in the background after a short grace period, so `cmd &` does not hang the exec.
"""

import ctypes
import errno
import itertools
import json
import os
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

# the file helper, copied beside this file into the server's folder (see _jail.py)
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bwrap_exec_files import file_op, set_capabilities  # noqa: E402

_GRACE_S = 0.1  # how long to wait for EOF once the command has exited
_ONE_SEND = 1 << 16  # replies with at most this much output go in one send (one copy)
_KILL_ROUNDS = 200
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_SET_DUMPABLE = 24, 47, 4
_PR_CAP_AMBIENT_RAISE, _PR_CAP_AMBIENT_CLEAR_ALL = 2, 4
_CAP_DAC_READ_SEARCH, _CAP_KILL, _CAP_SETGID, _CAP_SETUID, _CAP_SETPCAP = 2, 5, 6, 7, 8
_KEEP = (1 << _CAP_DAC_READ_SEARCH) | (1 << _CAP_KILL) | (1 << _CAP_SETGID) | (1 << _CAP_SETUID)
# the trampoline (bwrap-exec-trampoline beside this file, from _trampoline.c): what it needs to
# become the sample's uid and to empty the command's bounding set
_TRAMPOLINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bwrap-exec-trampoline")
_SPAWN_CAPS = (_CAP_SETUID, _CAP_SETGID, _CAP_SETPCAP)
_SPAWN = sum(1 << c for c in _SPAWN_CAPS)
_KEEP_FAST = _KEEP | (1 << _CAP_SETPCAP)  # permitted with the trampoline (SETPCAP not effective)
_STEP_EXEC = 9  # the trampoline's last step (see _trampoline.c)
_fast_spawn = False  # set once at start-up, by the trampoline's self-test
_libc = ctypes.CDLL(None, use_errno=True)
_UMASK = 0o022  # of commands and written files (as in per_exec mode)
# a fresh gid per command (see above); gids of system groups (< 10**9) are never used
_GID_BASE, _GID_SPAN = 1_000_000_000, 1_100_000_000
_exec_counter = itertools.count(1)
_IDLE_ACCEPTORS = 2  # acceptor threads kept waiting (see _acceptor)


def _set_capabilities(keep, permitted=None, inheritable=0):
    set_capabilities(_libc, keep, permitted, inheritable)


def _drop_bounding(keep=0):
    for cap in range(64):
        if (keep >> cap) & 1:
            continue
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:
            raise OSError(ctypes.get_errno(), f"PR_CAPBSET_DROP {cap} failed")


def _restrict_capabilities(uid):
    """Empty the ambient set and keep only _KEEP as permitted/effective; empty the bounding set,
    unless the trampoline (below) passes its self-test: then the bounding set keeps _SPAWN, which
    the trampoline empties in every command before its exec."""
    if _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_CAP_AMBIENT_CLEAR_ALL failed")
    global _fast_spawn
    if os.access(_TRAMPOLINE, os.X_OK):
        _drop_bounding(keep=_SPAWN)
        _set_capabilities(_KEEP_FAST)
        _fast_spawn = True
        try:
            proc = _spawn_fast(["/bin/sh", "-c", "exit 0"], {"PATH": "/usr/bin:/bin"}, "/", uid)
            proc.communicate(timeout=10)
            _fast_spawn = proc.returncode == 0
        except Exception:  # noqa: BLE001 - any failure: the fork path, with nothing kept
            _fast_spawn = False
    if not _fast_spawn:
        _set_capabilities(_KEEP_FAST)
        _drop_bounding()
    # SETPCAP stays permitted (not effective) only for the trampoline's ambient set
    _set_capabilities(_KEEP, permitted=_KEEP_FAST if _fast_spawn else _KEEP)


class _SpawnStepError(OSError):
    """The trampoline could not drop to the sample's credentials (it never ran the command)."""


def _spawn_fast(cmd, env, cwd, uid, timeout=None):
    """Start `cmd` as the sample's `uid` through the trampoline: vfork (CPython's fast path: no
    user=/group= here), with CAP_SETUID/SETGID/SETPCAP raised as ambient capabilities of this
    thread only, for this one spawn (credentials are per thread; the server's other threads and
    every command keep none). The trampoline reports a failure on a pipe, as CPython's child does;
    the same OSError a failed Popen raises is raised here."""
    err_read, err_write = os.pipe()
    try:
        _set_capabilities(_KEEP, permitted=_KEEP_FAST, inheritable=_SPAWN)
        try:
            for cap in _SPAWN_CAPS:
                if _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0:
                    raise OSError(ctypes.get_errno(), "PR_CAP_AMBIENT_RAISE failed")
            # the trampoline searches PATH itself, once it holds nothing (a long PATH would
            # not fit as candidates in its arguments)
            argv = [_TRAMPOLINE, str(uid), str(_exec_gid(uid)), str(err_write), "--"]
            proc = subprocess.Popen(
                [*argv, *cmd],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
                pass_fds=(err_write,),
                umask=_UMASK,
            )
        finally:
            os.close(err_write)
            try:
                if _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
                    raise OSError(ctypes.get_errno(), "PR_CAP_AMBIENT_CLEAR_ALL failed")
                _set_capabilities(_KEEP, permitted=_KEEP_FAST)
            except OSError:  # never serve on with a thread that could hand capabilities on
                os._exit(70)
        # EOF once the command's exec closed the pipe; 8 bytes (step, errno) when it failed
        # poll, not select: the descriptor may be past FD_SETSIZE (many commands at once)
        poller = select.poll()
        poller.register(err_read, select.POLLIN)
        ready = poller.poll(None if timeout is None else timeout * 1000)
        report = os.read(err_read, 8) if ready else None
    finally:
        os.close(err_read)
    if report is None or report:
        if report is None:  # stopped before its exec (a process of the sample can signal it)
            _kill_tree(proc.pid)
        proc.wait()
        for f in (proc.stdin, proc.stdout, proc.stderr):
            if f is not None:
                f.close()
    if report is None:
        raise TimeoutError("the command did not start within its timeout")
    if report:
        step, code = struct.unpack("=ii", report.ljust(8, b"\0"))
        if step != _STEP_EXEC and code != errno.EAGAIN:
            raise _SpawnStepError(code, f"cannot drop to the sample's uid (step {step})")
        raise OSError(code, os.strerror(code), cmd[0])
    return proc


def _exec_gid(uid):
    """A group id for the next command of the sample whose uid is `uid`, unlike any earlier one."""
    return _GID_BASE + (uid - _GID_BASE + next(_exec_counter)) % _GID_SPAN


def _recv_exact(conn, n):
    chunks, left = [], n
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise EOFError("host closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _reply(conn, header, stdout=b"", stderr=b""):
    header = dict(header, stdout_len=len(stdout), stderr_len=len(stderr))
    body = json.dumps(header).encode()
    if len(stdout) + len(stderr) <= _ONE_SEND:  # one send: the host wakes once for the reply
        conn.sendall(b"".join((struct.pack(">I", len(body)), body, stdout, stderr)))
        return
    conn.sendall(struct.pack(">I", len(body)) + body)
    if stdout:
        conn.sendall(stdout)
    if stderr:
        conn.sendall(stderr)


def _stat_fields():
    """{pid: (ppid, pgrp, session, zombie)} of every process of this PID namespace."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/" + name + "/stat", "rb") as f:
                tail = f.read().rsplit(b")", 1)[1].split()
            found[int(name)] = (int(tail[1]), int(tail[2]), int(tail[3]), tail[0] == b"Z")
        except (OSError, IndexError, ValueError):
            pass
    return found


def _tree(leader):
    """The live members of the command's process group and session, and every live descendant of
    its first process (zombies are dead already; the leader stays one until the server reaps it)."""
    procs = _stat_fields()
    tree = {p for p, (_, pgrp, sid, _) in procs.items() if pgrp == leader or sid == leader}
    tree.add(leader)
    grew = True
    while grew:
        grew = False
        for p, (ppid, _, _, _) in procs.items():
            if ppid in tree and p not in tree:
                tree.add(p)
                grew = True
    tree.discard(os.getpid())
    return {p for p in tree if p in procs and not procs[p][3]}


def _kill_tree(leader):
    """SIGKILL the command's tree until nothing of it is left (a fork bomb keeps forking)."""
    for _ in range(_KILL_ROUNDS):
        try:
            victims = _tree(
                leader
            )  # before the kill: a dead parent's children lose their ppid link
        except OSError:  # out of descriptors to read /proc: the group now, the tree next round
            victims = {leader}
        try:
            os.killpg(leader, signal.SIGKILL)
        except OSError:
            pass
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)


def _drain(files):
    """Read (and discard) what background processes still write to a finished command's pipes."""
    try:
        sel = selectors.DefaultSelector()
        by_fd = {f.fileno(): f for f in files}
        for f in files:
            sel.register(f, selectors.EVENT_READ)
        while sel.get_map():
            for key, _ in sel.select():
                try:
                    chunk = os.read(key.fd, 1 << 16)
                except OSError:
                    chunk = b""
                if not chunk:
                    sel.unregister(key.fileobj)
                    by_fd[key.fd].close()
    except Exception:  # noqa: BLE001 - never let a drain thread take the server down
        pass


def _start(req, uid):
    if _fast_spawn and uid is not None and req["cmd"]:
        return _spawn_fast(list(req["cmd"]), req["env"], req["cwd"], uid, float(req["timeout"]))
    creds = {} if uid is None else {"user": uid, "group": _exec_gid(uid), "extra_groups": []}
    return subprocess.Popen(
        list(req["cmd"]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=req["env"],
        cwd=req["cwd"],
        start_new_session=True,
        close_fds=True,
        umask=_UMASK,
        **creds,
    )


# commands starting at once: a start holds ~11 descriptors for a moment, and hundreds of threads
# each taking some and failing for the rest would starve one another (livelock)
_STARTING = threading.BoundedSemaphore(4)


def _start_when_descriptors_allow(req, uid, timeout):
    """_start and the command's selector, waiting (up to the command's timeout) while this process
    is out of descriptors: many commands at once hold ~6 each here, and free them as they end."""
    deadline = time.monotonic() + timeout
    while True:
        sel = None
        try:
            with _STARTING:
                sel = selectors.DefaultSelector()  # before the start: a failure leaves nothing
                return _start(req, uid), sel
        except OSError as ex:
            if sel is not None:
                sel.close()
            out_of_fds = ex.filename is None and ex.errno in (errno.EMFILE, errno.ENFILE)
            if not out_of_fds or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)


def _pidfd(pid):
    """A pidfd on the started command, waiting a moment for a free descriptor; None if none came
    (the caller then kills the command's group, which needs none)."""
    for _ in range(200):
        try:
            return os.pidfd_open(pid)
        except OSError as ex:
            if ex.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            time.sleep(0.005)
    return None


def _serve(conn, uid):
    n = struct.unpack(">I", _recv_exact(conn, 4))[0]
    req = json.loads(_recv_exact(conn, n))
    data = _recv_exact(conn, int(req.get("input_len", 0)))
    if req.get("op", "exec") in ("read", "write"):
        code, out, kind = file_op(req, data, uid)
        _reply(conn, {"status": "exited", "returncode": code}, out, kind.encode())
        return
    cap, timeout = int(req["cap"]), float(req["timeout"])
    try:
        proc, sel = _start_when_descriptors_allow(req, uid, timeout)
    except TimeoutError:  # the trampoline was stopped before its exec (_spawn_fast)
        _reply(conn, {"status": "timeout"})
        return
    except _SpawnStepError as ex:
        _reply(conn, {"status": "error", "message": f"cannot start the command: {ex}"})
        return
    except OSError as ex:  # like a shell: 127 not found, 126 not executable, 1 for a bad cwd
        if ex.filename is None and ex.errno in (errno.EMFILE, errno.ENFILE, errno.ENOMEM):
            # the server's own resources (pipes for the command), not the command's
            _reply(conn, {"status": "error", "message": f"cannot start the command: {ex}"})
            return
        if ex.filename == req["cwd"]:
            code = 1
        else:
            code = 127 if isinstance(ex, FileNotFoundError) else 126
        message = "bwrap sandbox: {}: {}\n".format(ex.filename or req["cmd"][0], ex.strerror or ex)
        if isinstance(ex, BlockingIOError):  # fork failed: the process limit of the sample
            _reply(conn, {"status": "error", "message": f"cannot start the command: {ex}"})
        else:
            _reply(conn, {"status": "exited", "returncode": code}, b"", message.encode())
        return
    leader = proc.pid
    pidfd = _pidfd(leader)
    if pidfd is None:  # out of descriptors: never leave a started command unsupervised
        _kill_tree(leader)
        proc.wait()
        sel.close()
        for f in (proc.stdin, proc.stdout, proc.stderr):
            f.close()
        _reply(conn, {"status": "error", "message": "cannot watch the command: out of files"})
        return
    outs = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    names = {proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr"}
    for fd in outs:
        sel.register(fd, selectors.EVENT_READ)
    sel.register(pidfd, selectors.EVENT_READ)
    sel.register(conn, selectors.EVENT_READ)  # readable only when the host hangs up
    stdin_fd = proc.stdin.fileno()
    pending = memoryview(data)
    if pending:
        os.set_blocking(stdin_fd, False)
        sel.register(stdin_fd, selectors.EVENT_WRITE)
    else:
        proc.stdin.close()
    open_outs = set(outs)
    status, stream, exited_at = "exited", None, None
    deadline = time.monotonic() + timeout
    while open_outs or exited_at is None:
        now = time.monotonic()
        wait = (deadline if exited_at is None else exited_at + _GRACE_S) - now
        if wait <= 0:
            if exited_at is None:
                status = "timeout"
            break
        for key, _ in sel.select(wait):
            fd = key.fd
            if fd == stdin_fd:
                try:
                    pending = pending[os.write(fd, pending[: 1 << 16]) :]
                except BlockingIOError:
                    continue
                except OSError:  # the command does not read all of its input
                    pending = pending[:0]
                if not pending:
                    sel.unregister(fd)
                    proc.stdin.close()
            elif fd in outs:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    sel.unregister(fd)
                    open_outs.discard(fd)
                    continue
                outs[fd] += chunk
                if len(outs[fd]) > cap and status == "exited":
                    status, stream = "overflow", names[fd]
            elif fd == pidfd:
                sel.unregister(pidfd)
                exited_at = time.monotonic()
            elif not conn.recv(1):  # the host hung up (cancelled): nobody wants the result
                _kill_tree(leader)
                proc.wait()
                os.close(pidfd)
                sel.close()
                for f in (proc.stdin, proc.stdout, proc.stderr):
                    f.close()
                return
        if status != "exited":
            break
    if status != "exited" or exited_at is None:
        _kill_tree(leader)
    returncode = proc.wait()
    os.close(pidfd)
    if stdin_fd in sel.get_map():
        proc.stdin.close()
    sel.close()
    out, err = bytes(outs[proc.stdout.fileno()]), bytes(outs[proc.stderr.fileno()])
    held = [f for f in (proc.stdout, proc.stderr) if f.fileno() in open_outs]
    for f in (proc.stdout, proc.stderr):
        if f not in held:
            f.close()
    if held:  # background processes hold the pipes: keep them writable, discard the rest
        threading.Thread(target=_drain, args=(held,), daemon=True).start()
    if returncode < 0:
        returncode = 128 - returncode  # like a shell: 128 + signal number
    if status == "overflow":
        head = out if stream == "stdout" else err
        _reply(conn, {"status": status, "stream": stream}, head[:cap], b"")
    else:
        _reply(conn, {"status": status, "returncode": returncode}, out, err)


def _handle(conn, uid):
    try:
        _serve(conn, uid)
    except Exception as ex:  # noqa: BLE001 - report to the host, keep serving others
        try:
            _reply(conn, {"status": "error", "message": f"exec server error: {ex!r}"})
        except Exception:  # noqa: BLE001
            pass
    finally:
        conn.close()


def main():
    path, uid = sys.argv[1], json.loads(sys.argv[2])
    if uid is not None:
        _restrict_capabilities(uid)
    # not dumpable: processes of the same uid cannot ptrace the server or open its /proc files
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    os.umask(0o077)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    # a long backlog: past a full one a unix connect gets EAGAIN, which asyncio's client reads
    # as a connect in progress and then as a lost connection (the kernel caps it at somaxconn)
    listener.listen(4096)
    os.umask(_UMASK)
    os.write(1, b"ready trampoline\n" if _fast_spawn else b"ready fork\n")
    devnull = os.open("/dev/null", os.O_WRONLY)
    os.dup2(devnull, 1)
    for _ in range(_IDLE_ACCEPTORS):
        threading.Thread(target=_acceptor, args=(listener, uid), daemon=True).start()
    threading.Event().wait()  # the acceptor threads serve; the server lives until the jail dies


class _Pool:
    """How many acceptor threads wait in accept() right now (under `lock`)."""

    lock = threading.Lock()
    idle = 0


def _accept(listener):
    """The next connection; out of descriptors (pipes still drained, say) it waits and tries
    again rather than let the acceptor thread die."""
    while True:
        try:
            return listener.accept()[0]
        except OSError as ex:
            if ex.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                raise
            time.sleep(0.01)


def _acceptor(listener, uid):
    """Accept a connection and serve it in this thread (no wake-up of another thread on the path
    of a request). A few threads wait in accept() at all times: only when the last idle one takes
    a connection does it start another (before serving), and a thread that finds enough others
    idle after serving ends. So a sample running one command at a time never starts a thread per
    request (a new thread competes for the GIL with the one serving), and concurrent requests
    each get a thread. When no thread can be started (the sample's process limit), the thread
    keeps accepting itself."""
    while True:
        with _Pool.lock:
            _Pool.idle += 1
        try:
            conn = _accept(listener)
        finally:
            with _Pool.lock:
                _Pool.idle -= 1
                last = _Pool.idle == 0
        if last:
            try:
                threading.Thread(target=_acceptor, args=(listener, uid), daemon=True).start()
            except RuntimeError:
                pass  # no thread to spare: this one accepts again once it has served
        _handle(conn, uid)
        with _Pool.lock:
            if _Pool.idle >= _IDLE_ACCEPTORS:
                return


if __name__ == "__main__":
    main()
