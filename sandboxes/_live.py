"""The live-sample registry both sandbox providers share (bwrap and docker_api).

Every sample environment a provider starts is tracked until it is destroyed, so that what inspect
does not clean up is still cleaned up: a task's samples whose `sample_cleanup` never ran (inspect
calls `task_cleanup(cleanup=True)` for them) and, at interpreter exit, every sample still alive
(an interrupted run, a crashed task), destroyed all at once rather than one after another.

How a sample is destroyed stays the provider's own (`destroy()`: a jail's SIGKILL loop and
folders, or a container's removal): those are self-contained programs that must work when the
rest of the process is half torn down.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from typing import Any, ClassVar

import anyio

__all__ = ["LiveSamples"]

# How long exit waits for each destroy (a container's removal, a jail's kill loop).
_EXIT_WAIT_S = 60.0


class LiveSamples:
    """Mixin of a sandbox environment class: each subclass gets its own registry and its own
    exit hook. The subclass implements `destroy()` (idempotent, never raising on what the
    sample built) and sets `task_name`."""

    _live: ClassVar[set[Any]]
    task_name: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._live = set()
        atexit.register(cls.destroy_all_now)

    def track(self) -> None:
        """Count this sample as live (from its constructor)."""
        type(self)._live.add(self)

    def untrack(self) -> None:
        """This sample is being destroyed (first thing in `destroy()`)."""
        type(self)._live.discard(self)

    @classmethod
    def live(cls) -> list[Any]:
        return list(cls._live)

    # inspect's SandboxEnvironment cleanup hooks, the same for both providers (this mixin comes
    # first in their bases, so these override SandboxEnvironment's)
    @classmethod
    async def sample_cleanup(  # noqa: PLR0913 - inspect's signature
        cls,
        task_name: str,  # noqa: ARG003 - inspect's signature
        config: Any,  # noqa: ARG003
        environments: dict[str, Any],
        interrupted: bool,  # noqa: ARG003
    ) -> None:
        """Destroy the sample's environments, off the event loop. `interrupted` needs no path of
        its own: `destroy()` kills, it never waits on the commands."""
        for environment in environments.values():
            await anyio.to_thread.run_sync(environment.as_type(cls).destroy)

    @classmethod
    async def task_cleanup(
        cls,
        task_name: str,
        config: Any,  # noqa: ARG003 - inspect's signature
        cleanup: bool,
    ) -> None:
        """With `cleanup`, the task's samples whose `sample_cleanup` did not run; then the
        provider's own sweep (`after_task`)."""
        if cleanup:
            for environment in [e for e in cls._live if e.task_name == task_name]:
                await anyio.to_thread.run_sync(environment.destroy)
        await anyio.to_thread.run_sync(cls.after_task)

    @classmethod
    def after_task(cls) -> None:
        """What a provider sweeps once a task has ended (blocking; default: nothing)."""

    @classmethod
    def destroy_all_now(cls) -> None:
        """Destroy every live sample of this class at once, each in its own thread (an
        interrupted run can hold one per running sample; each can take a second)."""

        def destroy(environment: Any) -> None:
            with contextlib.suppress(Exception):
                environment.destroy()

        workers = [
            threading.Thread(target=destroy, args=(e,), daemon=True) for e in list(cls._live)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=_EXIT_WAIT_S)
