"""Run one host process with stdin, a wall-time limit and an output cap; kill its tree on expiry.

asyncio's `Process.wait()` only returns once every pipe has hit EOF, so the readers below never
stop early: past the cap they keep draining (and discarding) until the killed tree closes its
pipes. That is what keeps a killed chatty process from hanging the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_DRAIN_AFTER_KILL_S = 10.0


class OutputTooLarge(Exception):
    """A stream passed the output cap; carries what was read up to the cap."""

    def __init__(self, stream: str, head: bytes) -> None:
        super().__init__(stream)
        self.stream = stream
        self.head = head


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: bytes
    stderr: bytes


async def _read_capped(
    stream: asyncio.StreamReader, cap: int, on_overflow: Callable[[], None]
) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size, overflow = 0, False
    while chunk := await stream.read(1 << 16):
        if overflow:
            continue  # drain to EOF
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            overflow = True
            on_overflow()
    return b"".join(chunks)[: cap if overflow else None], overflow


async def _feed(stdin: asyncio.StreamWriter, data: bytes | None) -> None:
    try:
        if data:
            stdin.write(data)
            await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the command did not read all of its input; that is its business
    finally:
        with contextlib.suppress(OSError):
            stdin.close()


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the launcher's process group. bwrap's --die-with-parent then takes the sandbox's
    PID 1, and the kernel kills every process of that PID namespace."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


async def run_process(
    argv: Sequence[str],
    *,
    input: bytes | None,
    timeout: float | None,
    output_cap: int,
    uid: int | None = None,
    pass_fds: Sequence[int] = (),
    on_spawn: Callable[[int], None] | None = None,
) -> Finished:
    """Run argv (as host `uid` when given) and collect its output.

    Raises TimeoutError after `timeout` seconds and OutputTooLarge when stdout or stderr passes
    `output_cap` bytes; in both cases the whole process group is killed first. `pass_fds` stay
    open in the child (at the same numbers); `on_spawn(pid)` is called once it has started.
    """
    creds: dict[str, object] = {}
    if uid is not None:
        creds = {"user": uid, "group": uid, "extra_groups": []}
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
        pass_fds=tuple(pass_fds),
        **creds,  # type: ignore[arg-type]
    )
    if on_spawn is not None:
        on_spawn(proc.pid)
    assert proc.stdin and proc.stdout and proc.stderr
    kill = _killer(proc)
    work = asyncio.ensure_future(
        asyncio.gather(
            _read_capped(proc.stdout, output_cap, kill),
            _read_capped(proc.stderr, output_cap, kill),
            _feed(proc.stdin, input),
            proc.wait(),
        )
    )
    timed_out = False
    try:
        done, _ = await asyncio.wait({work}, timeout=timeout)
        if not done:
            timed_out = True
            kill()
            await asyncio.wait({work}, timeout=_DRAIN_AFTER_KILL_S)
    except BaseException:  # cancelled: no process may outlive the call
        kill()
        raise
    finally:
        if not work.done():  # the tree would not die or close its pipes: give up on it
            work.cancel()
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()
    if timed_out:
        raise TimeoutError(f"command timed out after {timeout}s")
    (stdout, out_over), (stderr, err_over), _, returncode = work.result()
    if out_over or err_over:
        raise OutputTooLarge("stdout" if out_over else "stderr", stdout if out_over else stderr)
    return Finished(returncode, stdout, stderr)


def _killer(proc: asyncio.subprocess.Process) -> Callable[[], None]:
    return lambda: _kill_group(proc)
