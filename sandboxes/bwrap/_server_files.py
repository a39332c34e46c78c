# bwrap-exec-files: runs INSIDE a persistent jail, imported by the exec server (_server.py).
"""The exec server's file helper: `read_file` / `write_file` of a persistent jail (issue 26.2).

Each read or write runs in a process forked from the server (no exec): it closes every
descriptor but its result pipe, takes the sample's uid as effective (and file-system) uid while
its real and saved uids stay the server's, drops every capability and only then resolves the
path. So the path is resolved inside the jail with exactly the sample's rights (/proc/self is the
helper, which holds nothing), and no process of the sample can signal, trace or open the helper
(uids differ, not dumpable): the contents written or read never pass through a process it can
reach. Codes and semantics are those of _files.py's scripts (per_exec mode).
"""

import ctypes
import errno
import json
import os
import stat
import struct

_WORKDIR = "/workspace"  # relative file paths start here (_config.WORKDIR)
_UMASK = 0o022  # of written files (as in per_exec mode)
# _files.py's codes
_NOT_FOUND, _IS_DIR, _DENIED, _NOT_DIR, _TOO_BIG = 52, 53, 54, 55, 56
_NOT_REGULAR, _NO_SPACE, _FILE_SIZE = 57, 58, 59
_KINDS = {stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket", stat.S_IFCHR: "character special file",
          stat.S_IFBLK: "block special file", stat.S_IFLNK: "symbolic link"}  # fmt: skip


def set_capabilities(libc, keep, permitted=None, inheritable=0):
    """Effective capabilities of this thread = `keep`, permitted `permitted` (default `keep`),
    inheritable `inheritable` (default none)."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    permitted = keep if permitted is None else permitted
    data = (ctypes.c_uint32 * 6)(keep, permitted, inheritable, 0, 0, 0)  # eff, perm, inh x2
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


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
    set_capabilities(ctypes.CDLL(None, use_errno=True), 0)


def file_op(req, data, uid):
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
