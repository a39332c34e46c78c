# bwrap-exec-server: runs INSIDE a persistent jail, by the jail's own python3 (stdlib only, -I -S).
"""The exec server of a persistent bwrap jail (see _jail.py for the host side).

    python3 -I -S bwrap-exec-server.py SOCKET_PATH UID_JSON

Listens on the unix socket SOCKET_PATH (in a folder only its own uid can enter) and serves one
request per connection; the thread that accepted a connection serves it:

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
`setpriv`) and first empties its bounding, inheritable and ambient sets and drops CAP_SETPCAP, so
a command (forked, setgroups/setregid/setreuid to the sample's uid, exec'd under no_new_privs)
ends with no capabilities at all. CAP_DAC_READ_SEARCH lets the child chdir into the sample's 0700
work dir before its uid changes (Popen chdirs first); CAP_KILL lets the server kill the command's
tree.

Each command runs as the sample's uid with a group id of its own (a fresh one per exec, no
supplementary groups): the kernel lets a process open another's /proc/<pid>/{fd,environ,mem}
only when uid *and* gid match, so a background process left by an earlier exec cannot read a
later command's environment or memory, nor open its descriptors (its pipes to the server belong
to the server's uid anyway). It can still see and signal it (same uid): a sample can always kill
its own commands, and the harness then sees that truthfully as a signal death.

read/write run in a file helper forked from the server (no exec): it closes every descriptor
but its result pipe, takes the sample's uid as effective (and file-system) uid while its real
and saved uids stay the server's, drops every capability and only then resolves the path. So the
path is resolved inside the jail with exactly the sample's rights (/proc/self is the helper,
which holds nothing), and no process of the sample can signal, trace or open the helper (uids
differ, not dumpable): the contents written or read never pass through a process it can reach.

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
import selectors
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time

_GRACE_S = 0.1  # how long to wait for EOF once the command has exited
_KILL_ROUNDS = 200
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, _PR_SET_DUMPABLE = 24, 47, 4, 4
_CAP_DAC_READ_SEARCH, _CAP_KILL, _CAP_SETGID, _CAP_SETUID = 2, 5, 6, 7
_KEEP = (1 << _CAP_DAC_READ_SEARCH) | (1 << _CAP_KILL) | (1 << _CAP_SETGID) | (1 << _CAP_SETUID)
_libc = ctypes.CDLL(None, use_errno=True)
_WORKDIR = "/workspace"  # relative file paths start here (_config.WORKDIR)
_UMASK = 0o022  # of commands and written files (as in per_exec mode)
# a fresh gid per command (see above); gids of system groups (< 10**9) are never used
_GID_BASE, _GID_SPAN = 1_000_000_000, 1_100_000_000
_exec_counter = itertools.count(1)
# _files.py's codes
_NOT_FOUND, _IS_DIR, _DENIED, _NOT_DIR, _TOO_BIG = 52, 53, 54, 55, 56
_NOT_REGULAR, _NO_SPACE, _FILE_SIZE = 57, 58, 59
_KINDS = {stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket", stat.S_IFCHR: "character special file",
          stat.S_IFBLK: "block special file", stat.S_IFLNK: "symbolic link"}  # fmt: skip


def _set_capabilities(keep):
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)(keep, keep, 0, 0, 0, 0)  # effective, permitted, inheritable x2
    if _libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def _restrict_capabilities():
    """Empty the bounding and ambient sets, then keep only _KEEP as permitted/effective."""
    for cap in range(64):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:
            raise OSError(ctypes.get_errno(), f"PR_CAPBSET_DROP {cap} failed")
    if _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_CAP_AMBIENT_CLEAR_ALL failed")
    _set_capabilities(_KEEP)


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
        victims = _tree(leader)  # before the kill: a dead parent's children lose their ppid link
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
                    key.fileobj.close()
    except Exception:  # noqa: BLE001 - never let a drain thread take the server down
        pass


def _start(req, uid):
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


# ---------------------------------------------------------------- file helper (read / write)


def _missing(path):
    """The code for a path that does not resolve: NOT_DIR when an ancestor is not a directory."""
    d = os.path.dirname(path)
    while d and not os.path.lexists(d):
        d = os.path.dirname(d)
    return _NOT_DIR if d and not os.path.isdir(d) else _NOT_FOUND


def _kind(mode):
    return _KINDS.get(stat.S_IFMT(mode), "special file")


def _read_file(path, limit):
    """(code, contents, kind) of reading the regular file `path` (never blocks, never opens a
    FIFO, socket or device: the type is checked before the open and again on the descriptor)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return (_NOT_FOUND if os.path.islink(path) else _missing(path)), b"", ""
    except NotADirectoryError:
        return _NOT_DIR, b"", ""
    except OSError as ex:
        return (_NOT_FOUND if ex.errno == errno.ELOOP else _DENIED), b"", ""
    if stat.S_ISDIR(st.st_mode):
        return _IS_DIR, b"", ""
    if not stat.S_ISREG(st.st_mode):
        return _NOT_REGULAR, b"", _kind(st.st_mode)
    if st.st_size > limit:
        return _TOO_BIG, b"", ""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except IsADirectoryError:
        return _IS_DIR, b"", ""
    except OSError as ex:
        return (_NOT_REGULAR if ex.errno == errno.ENXIO else _DENIED), b"", ""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return (_IS_DIR if stat.S_ISDIR(st.st_mode) else _NOT_REGULAR), b"", _kind(st.st_mode)
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                return _TOO_BIG, b"", ""
        return 0, b"".join(chunks), ""
    except OSError:
        return _DENIED, b"", ""
    finally:
        os.close(fd)


def _write_file(path, data):
    """(code, kind) of writing `data` to the regular file `path` (parents made as needed)."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        return _IS_DIR, ""
    if st is not None and not stat.S_ISREG(st.st_mode):
        return _NOT_REGULAR, _kind(st.st_mode)
    parent = os.path.dirname(path)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError:
        d = parent
        while d and not os.path.lexists(d):
            d = os.path.dirname(d)
        return (_NOT_DIR if d and not os.path.isdir(d) else _DENIED), ""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o666)
    except IsADirectoryError:
        return _IS_DIR, ""
    except OSError as ex:
        if ex.errno == errno.ENXIO:
            return _NOT_REGULAR, "fifo"
        return (_NO_SPACE if ex.errno in (errno.ENOSPC, errno.EDQUOT) else _DENIED), ""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped in after the check: nothing is written
            return _NOT_REGULAR, _kind(st.st_mode)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        return 0, ""
    except OSError as ex:
        if ex.errno in (errno.ENOSPC, errno.EDQUOT):
            return _NO_SPACE, ""
        return (_FILE_SIZE if ex.errno == errno.EFBIG else _DENIED), ""
    finally:
        os.close(fd)


def _become_sample(uid, server_uid):
    """In the file helper: the sample's uid as effective and file-system uid (real and saved stay
    the server's, so the sample cannot signal us), its group, no capabilities."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(server_uid, uid, server_uid)
    _set_capabilities(0)


def _file_op(req, data, uid):
    """Run a read or write in the file helper; (code, contents, kind)."""
    path = req["path"]
    if not isinstance(path, str) or not path or "\0" in path:
        return _NOT_FOUND, b"", ""
    if not path.startswith("/"):
        path = _WORKDIR + "/" + path
    limit = int(req.get("cap", 0))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the helper: nothing of the server's but the result pipe survives
        try:
            os.closerange(0, w)
            os.closerange(w + 1, 1 << 20)
            null = os.open("/dev/null", os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.umask(_UMASK)
            if uid is not None:
                _become_sample(uid, os.getuid())
            if req["op"] == "read":
                code, out, kind = _read_file(path, limit)
            else:
                (code, kind), out = _write_file(path, data), b""
            reply = json.dumps([code, kind]).encode()
            os.write(w, struct.pack(">I", len(reply)) + reply)
            view = memoryview(out)
            while view:
                view = view[os.write(w, view) :]
        finally:
            os._exit(0)
    os.close(w)
    try:
        with os.fdopen(r, "rb") as result:
            head = result.read(4)
            body = result.read(struct.unpack(">I", head)[0]) if len(head) == 4 else b""
            out = result.read()
    finally:
        os.waitpid(pid, 0)
    if not body:
        raise OSError("the file helper died")
    code, kind = json.loads(body)
    return code, out, kind


def _serve(conn, uid):
    n = struct.unpack(">I", _recv_exact(conn, 4))[0]
    req = json.loads(_recv_exact(conn, n))
    data = _recv_exact(conn, int(req.get("input_len", 0)))
    if req.get("op", "exec") in ("read", "write"):
        code, out, kind = _file_op(req, data, uid)
        _reply(conn, {"status": "exited", "returncode": code}, out, kind.encode())
        return
    cap, timeout = int(req["cap"]), float(req["timeout"])
    try:
        proc = _start(req, uid)
    except OSError as ex:  # like a shell: 127 not found, 126 not executable, 1 for a bad cwd
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
    pidfd = os.pidfd_open(proc.pid)
    outs = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    names = {proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr"}
    sel = selectors.DefaultSelector()
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
        _restrict_capabilities()
    # not dumpable: processes of the same uid cannot ptrace the server or open its /proc files
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    os.umask(0o077)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    os.umask(_UMASK)
    os.write(1, b"ready\n")
    devnull = os.open("/dev/null", os.O_WRONLY)
    os.dup2(devnull, 1)
    threading.Thread(target=_acceptor, args=(listener, uid), daemon=True).start()
    threading.Event().wait()  # the acceptor threads serve; the server lives until the jail dies


def _acceptor(listener, uid):
    """Accept a connection, hand accepting over to a new thread, serve the request. The thread
    that accepted serves (no wake-up of another thread on the path of a request); when no new
    thread can be started (the sample's process limit), this one keeps accepting itself."""
    while True:
        conn, _ = listener.accept()
        try:
            threading.Thread(target=_acceptor, args=(listener, uid), daemon=True).start()
            handed_over = True
        except RuntimeError:
            handed_over = False
        _handle(conn, uid)
        if handed_over:
            return


if __name__ == "__main__":
    main()
