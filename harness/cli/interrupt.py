"""Ctrl-C during a run: stop within seconds, say what is saved and how to resume, exit 130.

The first SIGINT raises `KeyboardInterrupt` from the main thread's event loop, where inspect's
eval-set runs (a callback, so never inside a sample's coroutine, where it would end that attempt
as an error and eval-set would retry it; with no loop running, at once): the loop stops, the
running samples are cancelled and the logs written (`cancelled`), and the command prints one line
and returns 130. Work that cannot be cancelled
(a detector fit or a model forward pass in a worker thread) would hold that up for as long as
it runs, so a watchdog ends the process `GRACE_S` seconds after the first Ctrl-C, or at once on
the second: the samples already written to the log directory are counted and kept (a re-run of
the same command reuses them; eval-set's resume is exact after a hard stop, see
tests/harness/cli/test_cli_resume.py), and the process exits 130 without a traceback.

While an `Interrupt` is active its handler owns SIGINT (inspect's control server, uvicorn, is
kept from taking it over); asyncio (which installs its own handler
only over Python's default one) then leaves it in place. Once interrupted it stays armed until the
process ends: the caller's clean exit (logs closed, servers stopped, exit handlers run) has the
rest of the grace period, and a second Ctrl-C ends it at once.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

#: Seconds between the first Ctrl-C and a hard stop when the run has not ended by itself.
GRACE_S = 5.0
#: Seconds a hard stop gives the exit handlers (container removal) before the process ends.
CLEANUP_S = 20.0
EXIT_CODE = 130
# Set by the first Ctrl-C of an active `Interrupt`; cleared when the next one is entered.
_REQUESTED = threading.Event()
# Loggers that print a traceback when the run's tasks are cancelled under them (uvicorn's
# lifespan: inspect's control server), silenced once the user has interrupted.
_NOISY_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")


def _raise_interrupt() -> None:
    raise KeyboardInterrupt


def raise_if_interrupted() -> None:
    """`KeyboardInterrupt` when the user has interrupted the run (between evals of one command)."""
    if _REQUESTED.is_set():
        raise KeyboardInterrupt


def finished_samples(log_dir: str | Path) -> int:
    """Samples saved in the `.eval` logs under `log_dir` (what a re-run reuses)."""
    total = 0
    root = Path(log_dir)
    if not root.is_dir():
        return 0
    for log in root.rglob("*.eval"):
        try:
            with zipfile.ZipFile(log) as archive:
                total += sum(1 for n in archive.namelist() if n.startswith("samples/"))
        except (OSError, zipfile.BadZipFile):
            continue  # a log being written: its samples are counted once it is readable
    return total


def interrupted_message(log_dir: str | Path) -> str:
    n = finished_samples(log_dir)
    return (
        f"interrupted — {n} sample{'' if n == 1 else 's'} finished and saved in {log_dir}; "
        "re-run the same command to resume"
    )


class Interrupt:
    """`with Interrupt(log_dir, say):` the run's SIGINT handling (see the module docstring).

    `say` prints one line to the user (stderr). In a thread other than the main thread (where
    no signal can be handled) it does nothing.
    """

    def __init__(self, log_dir: str | Path, say: Any, grace_s: float = GRACE_S) -> None:
        self.log_dir = log_dir
        self.say = say
        self.grace_s = grace_s
        self.count = 0
        self.reported = False  # the closing line is printed (by the caller or by stop_now)
        self._previous: Any = None
        self._done = threading.Event()
        self._active = threading.current_thread() is threading.main_thread()
        self._uvicorn: Any = None
        self._previous_unraisable: Any = sys.unraisablehook

    def __enter__(self) -> Interrupt:
        if self._active:
            _REQUESTED.clear()
            self._previous = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._handle)
            self._uvicorn = _leave_signals_to_us()
            self._previous_unraisable = sys.unraisablehook
            sys.unraisablehook = self._unraisable
        return self

    def _unraisable(self, report: Any) -> None:
        # The handler's KeyboardInterrupt can land in code that cannot raise (a weakref or GC
        # callback, e.g. the import system's module-lock cleanup): Python would print it as an
        # "Exception ignored" traceback. It is the interrupt already said; the watchdog still
        # ends the run within the grace period.
        if self.count and report.exc_type is KeyboardInterrupt:
            return
        self._previous_unraisable(report)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.count:
            return  # interrupted: the process is ending; the watchdog and handler stay armed
        self._done.set()
        if self._active:
            signal.signal(signal.SIGINT, self._previous)
            _restore_uvicorn(self._uvicorn)
            sys.unraisablehook = self._previous_unraisable

    def _handle(self, signum: int, frame: FrameType | None) -> None:  # noqa: ARG002 - signal API
        self.count += 1
        _REQUESTED.set()
        if self.count > 1:
            self.stop_now()
        for name in _NOISY_LOGGERS:
            logging.getLogger(name).disabled = True
        self.say(f"stopping (at most {self.grace_s:.0f} s; Ctrl-C again to stop at once) …")
        threading.Thread(target=self._watchdog, name="harness-interrupt", daemon=True).start()
        try:
            loop = asyncio.get_running_loop()  # the main thread's, while eval-set runs in it
        except RuntimeError:
            raise KeyboardInterrupt from None
        # Raised from the loop itself, between callbacks, not inside whichever sample's coroutine
        # the signal happened to land in (there it ended that attempt as an error, with a
        # traceback, and eval-set retried it): asyncio stops the loop, cancels every task (the
        # samples end as cancelled) and re-raises it from `asyncio.run`.
        loop.call_soon_threadsafe(_raise_interrupt)

    def _watchdog(self) -> None:
        if not self._done.wait(self.grace_s):
            self.stop_now()

    def stop_now(self) -> None:
        """Count what is saved, say it in one line, remove what would outlive the process (its
        exit handlers, output closed, at most `CLEANUP_S`) and end it with 130."""
        try:
            if not self.reported:
                self.reported = True
                self.say(interrupted_message(self.log_dir))
        finally:
            _flush()
            _close_output()
            _run_exit_handlers(CLEANUP_S)
            os._exit(EXIT_CODE)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _close_output() -> None:
    """Point stdout and stderr at /dev/null: what the cancelled run prints from here is noise."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    os.close(null)


def _run_exit_handlers(timeout_s: float) -> None:
    """The process's atexit handlers (container removal, temp dirs, log handlers), in a thread
    given at most `timeout_s`: a handler that hangs must not keep the process alive."""
    worker = threading.Thread(target=atexit._run_exitfuncs, name="harness-exit", daemon=True)
    worker.start()
    worker.join(timeout_s)


def _leave_signals_to_us() -> Any:
    """Stop uvicorn (inspect's control server, `ctl_server`) from taking SIGINT while it serves.

    uvicorn's `Server.capture_signals` replaces the SIGINT handler for as long as the server
    runs and hands a captured signal back only when the server has shut down, which under load
    took 10-20 s of the run going on (measured). The control server is stopped by inspect at the
    end of the eval either way. Returns what `_restore_uvicorn` puts back.
    """
    try:
        import uvicorn
    except ImportError:
        return None
    original = uvicorn.Server.capture_signals

    @contextlib.contextmanager
    def capture_nothing(self: Any) -> Iterator[None]:  # noqa: ARG001 - uvicorn's method
        yield

    uvicorn.Server.capture_signals = capture_nothing  # type: ignore[method-assign]
    return original


def _restore_uvicorn(original: Any) -> None:
    if original is not None:
        import uvicorn

        uvicorn.Server.capture_signals = original  # type: ignore[method-assign]
