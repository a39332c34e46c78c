"""Fork and wait: each job runs in a forked child of the warm process under a wall-clock limit;
on expiry its whole process group is killed (again and again until none is left, so a fork bomb
cannot outrun it) and the job reports ``timed_out``. The result comes back through a pipe."""

from __future__ import annotations

import json
import os
import select
import signal
import struct
import time
import traceback
from collections.abc import Callable
from typing import Any

from .swap import Runner


def _send(fd: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload, default=repr).encode("utf-8")
    os.write(fd, struct.pack(">Q", len(data)))
    view = memoryview(data)
    while view:
        n = os.write(fd, view[:65536])
        view = view[n:]


def _kill_group(pid: int, reaped: bool = False) -> bool:
    """SIGKILL the child and its process group until the group is empty, reaping the child
    (unless ``reaped`` already); True when the child is reaped. The child is also killed by
    pid: one not yet scheduled since the fork may not have joined its group."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not reaped:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            if reaped:
                break
        if not reaped:
            try:
                reaped = os.waitpid(pid, os.WNOHANG)[0] == pid
            except ChildProcessError:
                reaped = True
        time.sleep(0.005)
    return reaped


def _enter_own_group() -> None:
    """In the child: lead a process group of its own (the parent sets it too, see run_child)."""
    os.setpgid(0, 0)


def _fork() -> int:
    for attempt in range(50):
        try:
            return os.fork()
        except BlockingIOError:  # process limit reached (a fork bomb being cleaned up)
            time.sleep(0.05 * (attempt + 1))
    return os.fork()


def run_child(
    runner: Runner, job: dict[str, Any], fn: Callable[[Runner, dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """Run ``fn(runner, job)`` in a forked child under the job's wall-clock limit."""
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    pid = _fork()
    if pid == 0:  # the child
        os.close(read_fd)
        try:
            _enter_own_group()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            result = fn(runner, job)
        except BaseException as exc:  # noqa: BLE001 - whatever happens, report it
            result = {
                "error": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc()[-3000:],
            }
        try:
            _send(write_fd, result)
        finally:
            os._exit(0)
    # The parent sets the child's group too: a child not yet scheduled when its limit expires
    # would otherwise not be in the group that is killed, and the wait below would never end.
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child already did it (or has exited)
    os.close(write_fd)
    timeout = float(job.get("timeout", 60))
    chunks: list[bytes] = []
    timed_out = False
    while True:
        left = timeout - (time.monotonic() - started)
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([read_fd], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(read_fd)
    if not (timed_out and _kill_group(pid)):
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    _kill_group(pid, reaped=True)  # leftovers of the child's process group (none, usually)
    elapsed = round(time.monotonic() - started, 4)
    if timed_out:
        return {"timed_out": True, "seconds": elapsed, "status": {}}
    raw = b"".join(chunks)
    if len(raw) < 8:
        return {
            "error": "the job's process died without a result",
            "seconds": elapsed,
            "status": {},
        }
    (size,) = struct.unpack(">Q", raw[:8])
    try:
        result = json.loads(raw[8 : 8 + size].decode("utf-8"))
    except ValueError:
        return {"error": "truncated result", "seconds": elapsed, "status": {}}
    result["seconds"] = elapsed
    return result
