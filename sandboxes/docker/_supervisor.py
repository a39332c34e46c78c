"""The in-container side of one `exec`/`read_file`/`write_file` call (stdlib only).

The host runs it with `python3 -I -S -c <this source>` through the engine's exec API, as the
sample's unprivileged uid, and talks to it over the exec's stdin/stdout:

- request (host → supervisor): 8-byte little-endian length, a JSON object, then `input_len` raw
  bytes (the command's stdin, or the file's contents);
- reply (supervisor → host): 8-byte length, a JSON header, then `out_len` + `err_len` raw bytes.

For `exec` it starts the command in a new session, feeds its stdin, reads its stdout/stderr up to
the output cap and enforces the time limit. On a timeout, an output overflow or a host hang-up
(the host closed the exec's connection: its call was cancelled) it SIGKILLs the command's session,
repeatedly, until nothing of it is left (a fork bomb keeps forking). Background processes of the
command survive a normal return (as in docker) and their later output is discarded.

The supervisor makes itself non-dumpable first: its `/proc/<pid>/fd` then belongs to root, so the
command (same uid) cannot write into the reply stream and forge the result of a call.
"""

from __future__ import annotations

SOURCE = r"""
import ctypes, errno, json, os, select, signal, stat, struct, sys, time

def _nondumpable():
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except Exception:
        pass

def _read_exact(fd, n):
    chunks, got = [], 0
    while got < n:
        b = os.read(fd, min(1 << 20, n - got))
        if not b:
            raise EOFError("host closed the request early")
        chunks.append(b); got += len(b)
    return b"".join(chunks)

def _reply(header, *parts):
    head = json.dumps(header).encode()
    data = struct.pack("<Q", len(head)) + head + b"".join(parts)
    view = memoryview(data)
    while view:
        n = os.write(1, view)
        view = view[n:]

def _session_members(sid):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        # after the command name: state ppid pgrp session ...; a zombie (our own child until we
        # wait for it, or an orphan the container's init reaps) runs nothing any more
        if int(fields[3]) == sid and fields[0] != b"Z" and int(name) != os.getpid():
            found.append(int(name))
    return found

def _kill_session(sid, proc_pid):
    try:
        os.killpg(sid, signal.SIGKILL)
    except OSError:
        pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        members = _session_members(sid)
        if not members:
            break
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)

def _errinfo(ex):
    return {"errno": errno.errorcode.get(ex.errno or 0, "EIO"), "message": ex.strerror or str(ex)}

def _exec(req, payload):
    import subprocess
    cap = req["cap"]
    env = req["env"]
    try:
        proc = subprocess.Popen(
            req["argv"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=req["cwd"], env=env, start_new_session=True, close_fds=True,
        )
    except OSError as ex:
        code = 127 if ex.errno in (errno.ENOENT, errno.ENOTDIR) else 126
        msg = "%s: %s\n" % (req["argv"][0] if ex.filename is None else ex.filename, ex.strerror)
        if ex.filename == req["cwd"] or (ex.errno == errno.ENOENT and not os.path.isdir(req["cwd"])):
            msg = "cannot change to working directory %s: %s\n" % (req["cwd"], ex.strerror)
            code = 126
        err = msg.encode()
        _reply({"status": "ok", "returncode": code, "out_len": 0, "err_len": len(err)}, err)
        return
    sid = proc.pid
    deadline = None if req["timeout"] is None else time.monotonic() + req["timeout"]
    bufs = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    open_fds = set(bufs)
    stdin_fd = proc.stdin.fileno()
    pending = memoryview(payload)
    if not pending:
        proc.stdin.close(); stdin_fd = None
    else:
        os.set_blocking(stdin_fd, False)
    status, exited_at = "ok", None
    while True:
        if proc.poll() is not None:
            if exited_at is None:
                exited_at = time.monotonic()
            # the command returned: take what its pipes already hold, then stop (background
            # processes may keep them open, and writing, forever)
            if not open_fds or time.monotonic() - exited_at > 2.0:
                break
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            status = "timeout"; break
        wait = 0.05 if exited_at is not None else (1.0 if deadline is None else min(1.0, deadline - now))
        rlist = list(open_fds) + [0]
        wlist = [stdin_fd] if stdin_fd is not None else []
        try:
            readable, writable, _ = select.select(rlist, wlist, [], max(wait, 0))
        except InterruptedError:
            continue
        if exited_at is not None and not [fd for fd in readable if fd != 0]:
            break  # nothing left in the pipes
        if 0 in readable:
            # the host hung up (its call was cancelled): stop the command
            if not os.read(0, 1):
                status = "hangup"; break
        for fd in readable:
            if fd == 0:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                open_fds.discard(fd); continue
            bufs[fd] += chunk
            if len(bufs[fd]) > cap:
                status = "overflow"; break
        if status != "ok":
            break
        if writable:
            try:
                n = os.write(stdin_fd, pending[:1 << 16])
                pending = pending[n:]
            except BrokenPipeError:
                pending = pending[:0]
            if not pending:
                proc.stdin.close(); stdin_fd = None
    if status != "ok":
        _kill_session(sid, proc.pid)
    try:
        proc.wait(timeout=10)
    except Exception:
        pass
    rc = proc.returncode
    if rc is None:
        rc = 137
    elif rc < 0:
        rc = 128 - rc
    out = bytes(bufs[proc.stdout.fileno()][: cap + 1])
    err = bytes(bufs[proc.stderr.fileno()][: cap + 1])
    _reply({"status": status, "returncode": rc, "out_len": len(out), "err_len": len(err)}, out, err)

_KINDS = [(stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")]

def _kind(mode):
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"

def _not_regular(path, mode):
    if stat.S_ISDIR(mode):
        return {"status": "error", "errno": "EISDIR", "message": "Is a directory"}
    return {"status": "not_regular", "kind": _kind(mode),
            "message": "%s is %s, not a regular file" % (path, _kind(mode))}

def _read(req):
    path, cap = req["path"], req["cap"]
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return _reply(_not_regular(path, st.st_mode))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as ex:
        return _reply({"status": "error", **_errinfo(ex)})
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped in between the check and the open
            return _reply(_not_regular(path, st.st_mode))
        chunks, size = [], 0
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b); size += len(b)
            if size > cap:
                return _reply({"status": "too_large"})
    except OSError as ex:
        return _reply({"status": "error", **_errinfo(ex)})
    finally:
        os.close(fd)
    data = b"".join(chunks)
    _reply({"status": "ok", "out_len": len(data), "err_len": 0}, data)

def _write(req, payload):
    path = req["path"]
    try:
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            return _reply(_not_regular(path, st.st_mode))
        if st is None and os.statvfs(parent or ".").f_flag & os.ST_RDONLY:
            # a read-only mount refuses the create; procfs would say ENOENT, not why
            return _reply({"status": "error", "errno": "EROFS", "message": "Read-only file system"})
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, 0o644)
    except OSError as ex:
        return _reply({"status": "error", **_errinfo(ex)})
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return _reply(_not_regular(path, st.st_mode))
        os.ftruncate(fd, 0)
        view = memoryview(payload)
        while view:
            n = os.write(fd, view[:1 << 20])
            view = view[n:]
    except OSError as ex:
        return _reply({"status": "error", **_errinfo(ex)})
    finally:
        os.close(fd)
    _reply({"status": "ok", "out_len": 0, "err_len": 0})

def main():
    _nondumpable()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    n = struct.unpack("<Q", _read_exact(0, 8))[0]
    req = json.loads(_read_exact(0, n))
    payload = _read_exact(0, req.get("input_len", 0))
    os.chdir(req.get("home", "/"))
    op = req["op"]
    if op == "exec":
        _exec(req, payload)
    elif op == "read":
        _read(req)
    elif op == "write":
        _write(req, payload)
    else:
        _reply({"status": "error", "errno": "EINVAL", "message": "unknown op %r" % op})

main()
"""
"""The supervisor's program (run with `python3 -I -S -c SOURCE`)."""
