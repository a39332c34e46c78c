"""One micro-batcher: concurrent requests gathered for a moment and run as one batch.

Several coroutines (inspect's concurrent samples) each ``await batcher.submit(request)``; a
worker task waits ``wait_s`` for more to arrive, hands up to ``batch_size`` of them to ``run``
in a worker thread (a padded forward pass, say), and gives each waiting request its own result.
Used by the in-process model back-end and by the white-box solver of ``ood_hallucination``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

__all__ = ["MicroBatcher"]

Req = TypeVar("Req")
Res = TypeVar("Res")


class MicroBatcher(Generic[Req, Res]):
    """Runs concurrently submitted requests in batches, in arrival order.

    ``run(batch) -> results``: one result per request, in order; called in a worker thread. An
    exception it raises is given to every request of that batch (the next batch still runs).
    ``key(request)``: requests that may share a batch have equal keys (the batch takes the
    oldest request's key); None: any. ``wait_alone``: with ``batch_size=1``, whether the worker
    still waits ``wait_s`` before each request (False: it runs each at once).
    """

    def __init__(
        self,
        run: Callable[[list[Req]], Sequence[Res]],
        *,
        batch_size: int,
        wait_s: float,
        key: Callable[[Req], Hashable] | None = None,
        wait_alone: bool = True,
    ) -> None:
        self.run, self.key = run, key
        self.batch_size, self.wait_s = max(1, batch_size), wait_s
        self.wait_alone = wait_alone
        self.pending: list[tuple[Req, asyncio.Future[Res]]] = []
        self.worker: asyncio.Task[None] | None = None

    def serves_running_loop(self) -> bool:
        """False when its worker belongs to another event loop (a new `eval()` run needs a new
        batcher: a worker task cannot move between loops)."""
        return self.worker is None or self.worker.get_loop() is asyncio.get_running_loop()

    async def submit(self, request: Req) -> Res:
        future: asyncio.Future[Res] = asyncio.get_running_loop().create_future()
        self.pending.append((request, future))
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self._drain())
        return await future

    def _take_batch(self) -> list[tuple[Req, asyncio.Future[Res]]]:
        if self.key is None:
            batch = self.pending[: self.batch_size]
        else:
            head = self.key(self.pending[0][0])
            batch = [p for p in self.pending if self.key(p[0]) == head][: self.batch_size]
        taken = {id(p) for p in batch}
        self.pending = [p for p in self.pending if id(p) not in taken]
        return batch

    async def _drain(self) -> None:
        while self.pending:
            if self.batch_size > 1 or self.wait_alone:
                await asyncio.sleep(self.wait_s)
            batch = self._take_batch()
            try:
                results = await asyncio.to_thread(self.run, [request for request, _ in batch])
            except Exception as exc:  # noqa: BLE001 - every waiting request gets the error
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), result in zip(batch, results, strict=False):
                if not future.done():
                    future.set_result(result)
