"""Host side of a persistent jail: one long-lived bwrap jail per sample whose main process is the
exec server (_server.py); each exec is one request over the server's unix socket."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import queue
import select
import signal
import struct
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.util import SandboxUnavailableError

from ._process import Finished, OutputTooLarge
from ._reaper import forget, launching

SERVER_SOURCE = (Path(__file__).with_name("_server.py")).read_text()
SERVER_FILE = "bwrap-exec-server.py"
FILES_SOURCE = (Path(__file__).with_name("_server_files.py")).read_text()
FILES_FILE = "bwrap_exec_files.py"  # the server's file helper, imported by it
SOCKET_NAME = "exec.sock"
_STARTUP_TIMEOUT_S = 60.0
_ANSWER_SLACK_S = 30.0  # the server enforces the timeout; this only catches a hung server


class JailGoneError(SandboxUnavailableError):
    """The persistent jail of a sample (or its exec server) died or stopped answering."""


class _Spawner:
    """Starts every jail from one thread that lives as long as the harness.

    bwrap's --die-with-parent is PR_SET_PDEATHSIG, which fires when the *thread* that forked the
    jail exits; inspect's worker threads come and go, so a jail forked there would die with them.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[
            tuple[list[str], dict[str, Any], concurrent.futures.Future[Any]]
        ]
        self._jobs = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def _loop(self) -> None:
        while True:
            argv, kwargs, future = self._jobs.get()
            try:
                future.set_result(subprocess.Popen(argv, **kwargs))
            except BaseException as ex:  # noqa: BLE001 - handed to the caller
                future.set_exception(ex)

    def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="bwrap-jails", daemon=True)
                self._thread.start()
        future: concurrent.futures.Future[subprocess.Popen[bytes]] = concurrent.futures.Future()
        self._jobs.put((argv, kwargs, future))
        return future.result()


_spawner = _Spawner()


class PersistentJail:
    """A running jail and the way to its exec server."""

    def __init__(self, proc: subprocess.Popen[bytes], socket_path: str, log_path: Path) -> None:
        self.proc = proc
        # how the server starts a command as the sample: "trampoline" (a vfork and the
        # trampoline's exec, _trampoline.py) or "fork" (a fork of the server)
        self.spawn = "fork"
        self.socket_path = socket_path
        self.log_path = log_path

    @classmethod
    def start(
        cls, argv: list[str], socket_path: str, log_path: Path, pass_fds: tuple[int, ...] = ()
    ) -> PersistentJail:
        """Start the jail (blocking) and wait until its server listens."""
        with open(log_path, "wb") as log, launching() as register:
            proc = _spawner.popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                start_new_session=True, close_fds=True, pass_fds=pass_fds,
            )  # fmt: skip
            register(proc.pid)
        jail = cls(proc, socket_path, log_path)
        assert proc.stdout is not None
        got = b""
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        try:
            while b"\n" not in got:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
                    raise JailGoneError(
                        f"bwrap sandbox: the persistent jail did not start within "
                        f"{_STARTUP_TIMEOUT_S:.0f}s. {jail._log_tail()}"
                    )
                chunk = os.read(proc.stdout.fileno(), 64)
                if not chunk:
                    raise JailGoneError(
                        f"bwrap sandbox: the persistent jail exited while starting "
                        f"(status {proc.wait(timeout=5)}). {jail._log_tail()}"
                    )
                got += chunk
        except BaseException:
            jail.kill()
            raise
        finally:
            proc.stdout.close()
        words = got.split()
        if not words or words[0] != b"ready":
            jail.kill()
            raise JailGoneError(f"bwrap sandbox: unexpected start-up output {got!r}")
        jail.spawn = (words[1] if len(words) > 1 else b"fork").decode()
        return jail

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            text = self.log_path.read_bytes()[-2000:].decode("utf-8", errors="replace").strip()
            if text:
                return f"Jail log: {text}"
        return ""

    def _gone(self, why: object) -> JailGoneError:
        status = self.proc.poll()
        if status is None:
            return JailGoneError(
                f"bwrap sandbox: the exec server of this sample's persistent jail dropped the "
                f"request ({why}). {self._log_tail()}".strip()
            )
        return JailGoneError(
            f"bwrap sandbox: this sample's persistent jail is gone (exit status {status}): its "
            f"exec server was killed or crashed, so the sample cannot run commands any more "
            f"(other samples are unaffected). {self._log_tail()}".strip()
        )

    async def _gone_after_exit(self, why: object, wait_s: float = 2.0) -> JailGoneError:
        """The error for a refused or dropped connection, once the jail had a moment to exit
        (a killed server takes its jail down a few ms later)."""
        deadline = time.monotonic() + wait_s
        while self.proc.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return self._gone(why)

    def kill(self) -> None:
        """SIGKILL the jail: bwrap's PID 1 dies with it and the kernel kills the namespace."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
            forget(self.proc.pid)

    async def request(
        self,
        cmd: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        input: bytes | None,
        timeout: float,
        output_cap: int,
    ) -> Finished:
        """Run one command through the server. Raises TimeoutError, OutputTooLarge, JailGoneError."""
        header = {"op": "exec", "cmd": list(cmd), "cwd": cwd, "env": dict(env),
                  "timeout": timeout, "cap": output_cap}  # fmt: skip
        return await self._call(header, input or b"", timeout)

    async def file(
        self, op: str, path: str, *, data: bytes = b"", cap: int = 0, timeout: float
    ) -> Finished:
        """Read (`op="read"`, at most `cap` bytes) or write the file `path` in the server's file
        helper, as the sample's uid. returncode: 0 or one of _files.py's codes."""
        return await self._call({"op": op, "path": path, "cap": cap}, data, timeout)

    async def _call(self, header: dict[str, Any], data: bytes, timeout: float) -> Finished:
        body = json.dumps({**header, "input_len": len(data)}).encode()
        try:
            reader, writer = await asyncio.open_unix_connection(self.socket_path)
        except OSError as ex:
            raise await self._gone_after_exit(ex) from None
        try:
            async with asyncio.timeout(timeout + _ANSWER_SLACK_S):
                writer.write(b"".join((struct.pack(">I", len(body)), body, data)))
                await writer.drain()
                size = struct.unpack(">I", await reader.readexactly(4))[0]
                reply = json.loads(await reader.readexactly(size))
                out_len = int(reply["stdout_len"])
                both = await reader.readexactly(out_len + int(reply["stderr_len"]))
                stdout, stderr = both[:out_len], both[out_len:]
        except TimeoutError:
            raise self._gone(
                f"no answer {_ANSWER_SLACK_S:.0f}s past the command's timeout"
            ) from None
        except (OSError, EOFError, asyncio.IncompleteReadError, ValueError, KeyError) as ex:
            raise await self._gone_after_exit(ex) from None
        finally:
            writer.close()  # a close before the answer tells the server to kill the command
        status = reply["status"]
        if status == "exited":
            return Finished(int(reply["returncode"]), stdout, stderr)
        if status == "timeout":
            raise TimeoutError(f"command timed out after {timeout}s")
        if status == "overflow":
            raise OutputTooLarge(str(reply["stream"]), stdout)
        raise SandboxUnavailableError(f"bwrap sandbox: {reply.get('message', reply)}")
