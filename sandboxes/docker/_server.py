"""The in-container exec server of the `docker_api` sandbox (stdlib only; its source is SOURCE).

The host starts it with the engine's exec API as the container's root (`user="0:0"`), keeps that
exec's attach stream open, and sends it requests one after another (sandboxes/docker/_channel.py).
So the channel is a pair of pipes between the engine's shim and this process, which runs under a
uid the sample's processes never have (they run as the sample's private uid, ≥ 10⁹): no process
of the sample can signal it, ptrace it or open its /proc/<pid>/fd (the kernel's ptrace access
check compares uids; dumpability matters only between equal uids). It is not dumpable either,
from its first instruction after the loader.

Framing (host ↔ server, on the exec's stdin/stdout; the engine frames stdout and stderr apart):

- start: 8-byte little-endian length + this program (read by the loader), then 8-byte length +
  JSON `{"uid": U, "home": "/workspace"}`; the server answers `{"ready": true}`;
- request: 8-byte length + JSON `{"id", "op", ...}` + `input_len` raw bytes;
- reply: 8-byte length + JSON `{"id", "status", ..., "out_len", "err_len"}` + the raw bytes.

`id` is a fresh random value per request, echoed in the reply: a reply that does not carry it is
refused by the host.

The server holds CAP_SETUID/SETGID (to start each command as the sample's uid) and CAP_KILL (to
kill a command's tree on a timeout, an output overflow or a hang-up); at start it empties its
bounding set (CAP_SETPCAP, then dropped) so that nothing it starts can ever regain a capability.

exec: `subprocess.Popen` (its child is C code: no Python runs there, so a fork touches few pages)
with the server's file-system uid set to the sample's for the call: the child, still root (so no
process of the sample can touch it), puts the command's pipes on 0/1/2, enters the working
directory with the sample's permission checks (a cwd under /proc or outside what the sample may
enter fails as it would for the sample), starts a new session, drops supplementary groups, takes
the sample's gid and uid (the kernel makes it non-dumpable at that change), closes every other
descriptor and execs. The command's result is what it wrote before it exited: on its exit
(a pidfd) the server takes exactly the bytes its pipes hold; output that background processes
write later is drained and discarded between and during later requests.

read/write: a child with the sample's uid as its effective and file-system uid (real and saved
uid stay root, so the sample cannot signal it; no capabilities; not dumpable; no descriptors but
/dev/null and a socket to the server) resolves the path, checks it is a regular file and opens it; it passes the
open descriptor back (SCM_RIGHTS) and the server reads or writes the contents through it.
"""

from __future__ import annotations

SOURCE = r"""
import ctypes, errno, json, os, select, signal, socket, stat, struct, sys, time

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_DUMPABLE, _PR_CAPBSET_DROP = 4, 24
_CAP_KILL, _CAP_SETGID, _CAP_SETUID = 5, 6, 7
_KEEP = (1 << _CAP_KILL) | (1 << _CAP_SETGID) | (1 << _CAP_SETUID)
_FIONREAD = 0x541B
_CHUNK = 1 << 16
UID = HOME = None
LEFTOVER = set()  # read ends of earlier commands' pipes, still held by their background processes

def _prctl(option, arg):
    if _libc.prctl(option, arg, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl %d" % option)

def _restrict():
    _prctl(_PR_SET_DUMPABLE, 0)
    if os.getuid() != 0:
        raise SystemExit("docker_api exec server: must start as the container's root")
    with open("/proc/sys/fs/suid_dumpable") as f:
        if f.read().strip() == "1":  # a process would stay dumpable across setresuid
            raise SystemExit("docker_api exec server: the host's fs.suid_dumpable is 1; set 0 or 2")
    for cap in range(64):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != errno.EINVAL:
            raise OSError(ctypes.get_errno(), "PR_CAPBSET_DROP %d" % cap)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)(_KEEP, _KEEP, 0, 0, 0, 0)
    if _libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    os.setgroups([])

def _read_exact(n):
    chunks, got = [], 0
    while got < n:
        b = os.read(0, min(1 << 20, n - got))
        if not b:
            raise EOFError
        chunks.append(b); got += len(b)
    return b"".join(chunks)

def _message():
    return json.loads(_read_exact(struct.unpack("<Q", _read_exact(8))[0]))

def _reply(header, *parts):
    head = json.dumps(header).encode()
    view = memoryview(struct.pack("<Q", len(head)) + head + b"".join(parts))
    while view:
        view = view[os.write(1, view):]

def _drain(fds):
    # discard what background processes of earlier commands write; close at EOF
    for fd in fds:
        try:
            if not os.read(fd, _CHUNK):
                raise OSError
        except BlockingIOError:
            pass
        except OSError:
            LEFTOVER.discard(fd); os.close(fd)

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
        if int(fields[3]) == sid and fields[0] != b"Z":
            found.append(int(name))
    return found

def _kill_session(sid):
    try:
        os.killpg(sid, signal.SIGKILL)
    except OSError:
        pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        members = _session_members(sid)
        if not members:
            return
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)

def _as_sample_fs():
    _libc.setfsgid(UID); _libc.setfsuid(UID)
    if _libc.setfsuid(UID) != UID:
        raise OSError(errno.EPERM, "setfsuid")

def _spawn(req):
    # the child is forked by _posixsubprocess (C: no Python code runs in it, so it touches few
    # pages) with the server's file-system uid set to the sample's: its chdir is checked as the
    # sample; then setsid, no supplementary groups, setregid/setreuid to the sample, exec
    import subprocess
    _as_sample_fs()
    try:
        return subprocess.Popen(
            req["argv"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            bufsize=0, cwd=req["cwd"], env=req["env"], start_new_session=True, close_fds=True,
            user=UID, group=UID, extra_groups=[],
        )
    finally:
        _libc.setfsuid(0); _libc.setfsgid(0)

def _spawn_failed(req, ex):
    message = ex.strerror or str(ex)
    if ex.filename == req["cwd"]:
        msg, rc = "cannot change to working directory %s: %s\n" % (req["cwd"], message), 126
    else:
        rc = 127 if ex.errno in (errno.ENOENT, errno.ENOTDIR) else 126
        msg = "%s: %s\n" % (req["argv"][0], message)
    err = msg.encode()
    _reply({"id": req["id"], "status": "ok", "returncode": rc, "out_len": 0, "err_len": len(err)}, err)

def _available(fd):
    buf = ctypes.c_int(0)
    import fcntl
    fcntl.ioctl(fd, _FIONREAD, buf)
    return buf.value

def _exec(req, payload):
    try:
        proc = _spawn(req)
    except OSError as ex:
        return _spawn_failed(req, ex)
    except (ValueError, TypeError) as ex:  # e.g. a NUL byte in argv or env
        return _spawn_failed(req, OSError(errno.EINVAL, str(ex)))
    pid = proc.pid
    in_w, out_r, err_r = proc.stdin.fileno(), proc.stdout.fileno(), proc.stderr.fileno()
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    cap, deadline = req["cap"], time.monotonic() + req["timeout"]
    bufs = {out_r: bytearray(), err_r: bytearray()}
    for fd in (in_w, out_r, err_r):
        os.set_blocking(fd, False)
    pending = memoryview(payload)
    if not pending:
        proc.stdin.close(); in_w = None
    status, rc = "ok", None
    poller = select.poll()
    for fd in bufs:
        poller.register(fd, select.POLLIN)
    for fd in LEFTOVER:
        poller.register(fd, select.POLLIN)
    poller.register(0, select.POLLIN)
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    if in_w is not None:
        poller.register(in_w, select.POLLOUT)
    while rc is None and status == "ok":
        wait = deadline - time.monotonic()
        if wait <= 0:
            status = "timeout"; break
        events = poller.poll(min(wait, 1.0 if pidfd is not None else 0.02) * 1000)
        if pidfd is None or any(fd == pidfd for fd, _ in events):
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                rc = os.waitstatus_to_exitcode(code)
                break
        for fd, _ in events:
            if fd == 0:
                status = "hangup"  # the host closed the channel: its call was cancelled
            elif fd in bufs:
                try:
                    chunk = os.read(fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    poller.unregister(fd); continue
                bufs[fd] += chunk
                if len(bufs[fd]) > cap:
                    status = "overflow"
            elif fd == in_w:
                try:
                    pending = pending[os.write(in_w, pending[:_CHUNK]):]
                except BrokenPipeError:
                    pending = pending[:0]
                if not pending:
                    poller.unregister(in_w); proc.stdin.close(); in_w = None
            elif fd in LEFTOVER:
                _drain([fd])
                if fd not in LEFTOVER:
                    poller.unregister(fd)
    if rc is not None:
        # the command has exited: its result is exactly what its pipes hold now
        for fd, buf in bufs.items():
            want = _available(fd)
            while want > 0 and len(buf) <= cap:
                try:
                    chunk = os.read(fd, min(want, _CHUNK))
                except BlockingIOError:
                    break
                if not chunk:
                    break
                buf += chunk; want -= len(chunk)
            if len(buf) > cap:
                status = "overflow"
    else:
        _kill_session(pid)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        rc = 137
    if pidfd is not None:
        os.close(pidfd)
    proc.returncode = rc  # reaped here; Popen must not wait for it again
    if in_w is not None:
        proc.stdin.close()
    for stream in (proc.stdout, proc.stderr):
        fd = stream.fileno()
        if rc is not None and status == "ok" and not _at_eof(fd):
            LEFTOVER.add(os.dup(fd))  # background processes hold it: drain and discard later
        stream.close()
    if status == "hangup":
        raise SystemExit(0)
    if rc < 0:
        rc = 128 - rc
    out, err = bytes(bufs[out_r][: cap + 1]), bytes(bufs[err_r][: cap + 1])
    _reply({"id": req["id"], "status": status, "returncode": rc, "out_len": len(out),
            "err_len": len(err)}, out, err)

def _at_eof(fd):
    probe = select.poll(); probe.register(fd, select.POLLIN)
    return any(ev & select.POLLHUP and not ev & select.POLLIN for _, ev in probe.poll(0))

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))

def _not_regular(path, mode):
    if stat.S_ISDIR(mode):
        return {"status": "error", "errno": "EISDIR", "message": "Is a directory"}
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return {"status": "not_regular", "kind": kind, "message": "%s is %s, not a regular file" % (path, kind)}

def _open_child(req, sock):
    # runs as the sample: resolve the path, check it, open it, hand the descriptor over
    try:
        null = os.open("/dev/null", os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(null, target)
        os.closerange(3, sock.fileno()); os.closerange(sock.fileno() + 1, 1 << 16)
        # the sample's uid as effective (so file-system) uid only: real and saved stay root, so
        # no process of the sample can signal this helper (a SIGSTOP here would hang the channel)
        os.setgroups([]); os.setresgid(UID, UID, UID); os.setresuid(0, UID, 0)
        _prctl(_PR_SET_DUMPABLE, 0)
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        if _libc.capset(header, (ctypes.c_uint32 * 6)(0, 0, 0, 0, 0, 0)) != 0:
            raise OSError(ctypes.get_errno(), "capset")
        os.chdir(HOME)
        path, writing = req["path"], req["op"] == "write"
        try:
            if writing:
                parent = os.path.dirname(path)
                if parent:
                    os.makedirs(parent, exist_ok=True)
            try:
                st = os.stat(path)
            except FileNotFoundError:
                if not writing:
                    raise
                st = None
                if os.statvfs(os.path.dirname(path) or ".").f_flag & os.ST_RDONLY:
                    raise OSError(errno.EROFS, "Read-only file system")
            if st is not None and not stat.S_ISREG(st.st_mode):
                answer, fds = _not_regular(path, st.st_mode), []
            else:
                flags = os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
                flags |= (os.O_WRONLY | os.O_CREAT) if writing else os.O_RDONLY
                fd = os.open(path, flags, 0o644)
                answer, fds = {"status": "ok"}, [fd]
        except OSError as ex:
            answer, fds = {"status": "error", "errno": errno.errorcode.get(ex.errno or 0, "EIO"),
                           "message": ex.strerror or str(ex)}, []
        socket.send_fds(sock, [json.dumps(answer).encode()], fds)
    finally:
        os._exit(0)

def _open_as_sample(req):
    parent, child = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        parent.close()
        _open_child(req, child)
    child.close()
    try:
        data, fds, _, _ = socket.recv_fds(parent, 1 << 16, 1)
    finally:
        parent.close()
        os.waitpid(pid, 0)
    if not data:
        return {"status": "error", "errno": "EIO", "message": "file helper died"}, None
    answer = json.loads(data)
    return answer, (fds[0] if fds else None)

def _file(req, payload):
    answer, fd = _open_as_sample(req)
    out = b""
    if fd is not None:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):  # swapped in between the check and the open
                answer = _not_regular(req["path"], st.st_mode)
            elif req["op"] == "write":
                os.ftruncate(fd, 0)
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view[: 1 << 20]):]
            else:
                chunks, size = [], 0
                while True:
                    b = os.read(fd, 1 << 20)
                    if not b:
                        break
                    chunks.append(b); size += len(b)
                    if size > req["cap"]:
                        answer = {"status": "too_large"}; chunks = []; break
                out = b"".join(chunks)
        except OSError as ex:
            answer = {"status": "error", "errno": errno.errorcode.get(ex.errno or 0, "EIO"),
                      "message": ex.strerror or str(ex)}
            out = b""
        finally:
            os.close(fd)
    _reply({**answer, "id": req["id"], "out_len": len(out), "err_len": 0}, out)

def main():
    global UID, HOME
    _restrict()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    start = _message()
    UID, HOME = int(start["uid"]), start["home"]
    if UID < 1000:
        raise SystemExit("docker_api exec server: refusing sample uid %d" % UID)
    _reply({"ready": True, "pid": os.getpid()})
    while True:
        while LEFTOVER:
            ready, _, _ = select.select([0] + sorted(LEFTOVER), [], [])
            _drain([fd for fd in ready if fd != 0])
            if 0 in ready:
                break
        try:
            req = _message()
            payload = _read_exact(req.get("input_len", 0))
        except EOFError:
            return
        op = req.get("op")
        if op == "exec":
            _exec(req, payload)
        elif op in ("read", "write"):
            _file(req, payload)
        else:
            _reply({"id": req.get("id"), "status": "error", "errno": "EINVAL",
                    "message": "unknown op %r" % op, "out_len": 0, "err_len": 0})

main()
"""
"""The server's program (run with `python3 -I -S -c <loader>`, which reads it from stdin)."""
