"""The host side of the docker_api sandbox's exec channel: per sample, a few long-lived engine
execs, each running the in-container server (`_server.py`) as the container's root, whose attach
stream (the exec's stdin and its engine-framed stdout/stderr) carries one request at a time.

A call takes an idle channel (or starts one: one engine exec), sends its request with a fresh
random `id`, and reads the reply, refusing one that does not echo that `id`. Closing a channel's
connection (the call was cancelled, or the host's own deadline passed) makes the engine close the
server's stdin; the server then kills the running command's session and exits, so that channel is
never used again.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import struct
import threading
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread

from ._engine import docker_client
from ._server import SOURCE

_LOADER = (
    "import os,struct\n"
    "def r(n):\n b=b''\n while len(b)<n:\n  c=os.read(0,n-len(b))\n  if not c: raise SystemExit(3)\n  b+=c\n return b\n"
    "exec(compile(r(struct.unpack('<Q',r(8))[0]),'docker_api-exec-server','exec'))"
)
SERVER_ARGV = ["/usr/bin/python3", "-I", "-S", "-c", _LOADER]
SERVER_USER = "0:0"
_PROGRAM = SOURCE.encode()
_STDOUT = 1
_IDLE_KEPT = 4  # idle channels a sample keeps; more are closed when their call ends
_STDERR_CAP = 1 << 20


class SupervisorError(RuntimeError):
    """The exec server died or answered garbage (its container is gone or out of memory)."""


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


class Channel:
    """One engine exec running the server; one request at a time."""

    def __init__(self, wrapper: Any) -> None:
        self._wrapper = wrapper
        self._sock = _raw_socket(wrapper)
        self._sock.setblocking(False)
        self._frames = bytearray()  # engine frames not yet split
        self._stdout = bytearray()
        self._stderr = bytearray()
        self.closed = False

    async def _send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[self._sock.send(view) :]
            except BlockingIOError:
                await anyio.wait_writable(self._sock)

    async def _fill(self) -> None:
        """Read once from the engine and split its frames (stream byte, 3 zero bytes, 4-byte
        big-endian length) into stdout and stderr."""
        while True:
            try:
                chunk = self._sock.recv(1 << 16)
                break
            except BlockingIOError:
                await anyio.wait_readable(self._sock)
        if not chunk:
            raise SupervisorError(self._died())
        self._frames += chunk
        while len(self._frames) >= 8:
            size = struct.unpack(">I", self._frames[4:8])[0]
            if len(self._frames) < 8 + size:
                break
            target = self._stdout if self._frames[0] == _STDOUT else self._stderr
            target += self._frames[8 : 8 + size]
            del self._frames[: 8 + size]
        if len(self._stderr) > _STDERR_CAP:
            del self._stderr[: -_STDERR_CAP // 2]

    async def _take(self, size: int, reply_cap: int) -> bytes:
        if size > reply_cap:
            raise SupervisorError(f"exec server reply over {reply_cap} bytes")
        while len(self._stdout) < size:
            await self._fill()
        data = bytes(self._stdout[:size])
        del self._stdout[:size]
        return data

    async def _message(self, reply_cap: int) -> dict[str, Any]:
        size = struct.unpack("<Q", await self._take(8, reply_cap))[0]
        try:
            header = json.loads(await self._take(size, reply_cap))
        except ValueError:
            raise SupervisorError(self._died()) from None
        if not isinstance(header, dict):
            raise SupervisorError(self._died())
        return header

    async def start(self, uid: int, home: str) -> None:
        start = json.dumps({"uid": uid, "home": home}).encode()
        program = struct.pack("<Q", len(_PROGRAM)) + _PROGRAM
        await self._send(program + struct.pack("<Q", len(start)) + start)
        if not (await self._message(1 << 16)).get("ready"):
            raise SupervisorError(self._died())

    async def request(self, request: dict[str, Any], payload: bytes, reply_cap: int) -> Reply:
        call_id = secrets.token_hex(16)
        head = json.dumps({**request, "id": call_id, "input_len": len(payload)}).encode()
        await self._send(struct.pack("<Q", len(head)) + head + payload)
        header = await self._message(reply_cap)
        if header.get("id") != call_id:
            raise SupervisorError("exec server reply does not answer this call")
        out_len, err_len = int(header.get("out_len", 0)), int(header.get("err_len", 0))
        body = await self._take(out_len + err_len, reply_cap)
        return Reply(header, body[:out_len], body[out_len:])

    def _died(self) -> str:
        tail = self._stderr.decode("utf-8", errors="replace").strip()[-2000:]
        return "the exec server ended without a complete reply" + (f": {tail}" if tail else "")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            self._sock.close()
        close = getattr(self._wrapper, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()


class ChannelPool:
    """The channels of one sample's container."""

    def __init__(self, container_id: str, uid: int, home: str) -> None:
        self.container_id = container_id
        self.uid = uid
        self.home = home
        self._idle: list[Channel] = []
        self._all: set[Channel] = set()
        self._lock = threading.Lock()

    async def _open(self) -> Channel:
        api = docker_client().api
        created = await anyio.to_thread.run_sync(
            lambda: api.exec_create(
                self.container_id,
                SERVER_ARGV,
                stdin=True,
                stdout=True,
                stderr=True,
                user=SERVER_USER,
                workdir="/",
                environment={"PATH": "/usr/bin:/bin"},
            )  # fmt: skip
        )
        wrapper = await anyio.to_thread.run_sync(lambda: api.exec_start(created["Id"], socket=True))
        channel = Channel(wrapper)
        with self._lock:
            self._all.add(channel)
        try:
            await channel.start(self.uid, self.home)
        except BaseException:
            self._discard(channel)
            raise
        return channel

    async def warm(self) -> None:
        """Start one channel ahead of the first call (sample start-up)."""
        channel = await self._open()
        self._release(channel)

    def _release(self, channel: Channel) -> None:
        with self._lock:
            if not channel.closed and len(self._idle) < _IDLE_KEPT:
                self._idle.append(channel)
                return
        self._discard(channel)

    def _discard(self, channel: Channel) -> None:
        channel.close()
        with self._lock:
            self._all.discard(channel)

    async def call(
        self, request: dict[str, Any], payload: bytes, *, reply_cap: int, host_timeout: float
    ) -> Reply:
        with self._lock:
            channel = self._idle.pop() if self._idle else None
        if channel is None:
            channel = await self._open()
        ok = False
        try:
            with anyio.fail_after(host_timeout):
                reply = await channel.request(request, payload, reply_cap)
            ok = True
            return reply
        finally:
            if ok:
                self._release(channel)
            else:  # cancelled, timed out or broken: the server kills the command and exits
                self._discard(channel)

    def close(self) -> None:
        with self._lock:
            channels = list(self._all)
            self._all.clear()
            self._idle.clear()
        for channel in channels:
            channel.close()
