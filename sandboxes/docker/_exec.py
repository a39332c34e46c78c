"""The host side of one supervisor call: an engine exec whose stdin/stdout carry the request and
the reply (`_supervisor.py`), read without blocking the event loop (anyio, asyncio or trio).

Closing the exec's connection (the call was cancelled, or the host's own deadline passed) makes
the engine close the supervisor's stdin; the supervisor takes that as a hang-up and kills the
command's session.
"""

from __future__ import annotations

import json
import socket
import struct
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread

from ._engine import docker_client
from ._supervisor import SOURCE

# A short loader in argv (what `ps` shows); the supervisor's program follows on stdin.
_LOADER = (
    "import os,struct\n"
    "def r(n):\n b=b''\n while len(b)<n:\n  c=os.read(0,n-len(b))\n  if not c: raise SystemExit(3)\n  b+=c\n return b\n"
    "exec(compile(r(struct.unpack('<Q',r(8))[0]),'docker_api-supervisor','exec'))"
)
SUPERVISOR_ARGV = ["/usr/bin/python3", "-I", "-S", "-c", _LOADER]
_PROGRAM = SOURCE.encode()
_STDOUT, _STDERR = 1, 2


class SupervisorError(RuntimeError):
    """The supervisor died or answered garbage: the container is gone, or the sample's own
    processes killed it (they share its uid)."""


@dataclass
class Reply:
    header: dict[str, Any]
    out: bytes
    err: bytes


def _raw_socket(wrapper: Any) -> socket.socket:
    raw = getattr(wrapper, "_sock", wrapper)
    if not isinstance(raw, socket.socket):
        raise SupervisorError(f"unsupported engine transport {type(raw).__name__}")
    return raw


async def _send_all(sock: socket.socket, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            sent = sock.send(view)
            view = view[sent:]
        except BlockingIOError:
            await anyio.wait_writable(sock)


async def _recv(sock: socket.socket) -> bytes:
    while True:
        try:
            return sock.recv(1 << 16)
        except BlockingIOError:
            await anyio.wait_readable(sock)


async def call(
    container_id: str,
    request: dict[str, Any],
    payload: bytes,
    *,
    user: str,
    reply_cap: int,
    host_timeout: float,
) -> Reply:
    """Run the supervisor in the container as `user` and return its reply.

    `reply_cap`: most bytes the reply may have (the supervisor caps output itself; this guards
    the host against a broken one). `host_timeout`: the host's own deadline for the whole call.
    """
    api = docker_client().api
    created = await anyio.to_thread.run_sync(
        lambda: api.exec_create(
            container_id,
            SUPERVISOR_ARGV,
            stdin=True,
            stdout=True,
            stderr=True,
            user=user,
            workdir="/",
        )  # fmt: skip
    )
    wrapper = await anyio.to_thread.run_sync(lambda: api.exec_start(created["Id"], socket=True))
    sock = _raw_socket(wrapper)
    sock.setblocking(False)
    head = json.dumps({**request, "input_len": len(payload)}).encode()
    stdout, stderr = bytearray(), bytearray()
    try:
        with anyio.fail_after(host_timeout):
            program = struct.pack("<Q", len(_PROGRAM)) + _PROGRAM
            await _send_all(sock, program + struct.pack("<Q", len(head)) + head + payload)
            buffer = bytearray()
            while True:
                chunk = await _recv(sock)
                if not chunk:
                    break
                buffer += chunk
                # engine frames: 1 byte stream, 3 zero bytes, 4 bytes big-endian length
                while len(buffer) >= 8:
                    size = struct.unpack(">I", buffer[4:8])[0]
                    if len(buffer) < 8 + size:
                        break
                    target = stdout if buffer[0] == _STDOUT else stderr
                    target += buffer[8 : 8 + size]
                    del buffer[: 8 + size]
                if len(stdout) > reply_cap or len(stderr) > 1 << 20:
                    raise SupervisorError(f"supervisor reply over {reply_cap} bytes")
    finally:
        try:
            sock.close()
        finally:
            close = getattr(wrapper, "close", None)
            if close is not None:
                close()
    return _parse(bytes(stdout), bytes(stderr))


def _parse(stdout: bytes, stderr: bytes) -> Reply:
    if len(stdout) < 8:
        raise SupervisorError(_died(stderr))
    size = struct.unpack("<Q", stdout[:8])[0]
    try:
        header = json.loads(stdout[8 : 8 + size])
    except ValueError:
        raise SupervisorError(_died(stderr)) from None
    body = stdout[8 + size :]
    out_len, err_len = int(header.get("out_len", 0)), int(header.get("err_len", 0))
    if len(body) != out_len + err_len:
        raise SupervisorError(_died(stderr))
    return Reply(header, body[:out_len], body[out_len:])


def _died(stderr: bytes) -> str:
    tail = stderr.decode("utf-8", errors="replace").strip()[-2000:]
    return "the exec supervisor ended without a complete reply" + (f": {tail}" if tail else "")
