"""The shared micro-batcher: arrival order, batch size, keys, errors per batch, loop binding."""

from __future__ import annotations

import asyncio
import time

import pytest

from methods.common import MicroBatcher


def _recording(calls: list[list[str]], fail_on: str | None = None):
    def run(batch: list[str]) -> list[str]:
        calls.append(list(batch))
        if fail_on is not None and fail_on in batch:
            raise RuntimeError(f"bad request {fail_on}")
        return [r.upper() for r in batch]

    return run


def test_concurrent_requests_run_in_batches_of_at_most_batch_size_in_arrival_order() -> None:
    calls: list[list[str]] = []
    batcher = MicroBatcher(_recording(calls), batch_size=3, wait_s=0.01)

    async def main() -> list[str]:
        return await asyncio.gather(*(batcher.submit(r) for r in "abcdefg"))

    assert asyncio.run(main()) == list("ABCDEFG")
    assert calls == [["a", "b", "c"], ["d", "e", "f"], ["g"]]


def test_a_batch_holds_only_requests_with_the_oldest_requests_key() -> None:
    calls: list[list[str]] = []
    batcher = MicroBatcher(_recording(calls), batch_size=8, wait_s=0.01, key=lambda r: r[0])

    async def main() -> list[str]:
        return await asyncio.gather(*(batcher.submit(r) for r in ["x1", "y1", "x2", "y2", "x3"]))

    assert asyncio.run(main()) == ["X1", "Y1", "X2", "Y2", "X3"]
    assert calls == [["x1", "x2", "x3"], ["y1", "y2"]]


def test_an_error_reaches_every_request_of_its_batch_and_only_those() -> None:
    calls: list[list[str]] = []
    batcher = MicroBatcher(_recording(calls, fail_on="b"), batch_size=2, wait_s=0.01)

    async def main() -> list[object]:
        return await asyncio.gather(*(batcher.submit(r) for r in "abc"), return_exceptions=True)

    a, b, c = asyncio.run(main())
    assert isinstance(a, RuntimeError) and isinstance(b, RuntimeError) and "bad request b" in str(a)
    assert c == "C"


def test_batch_size_one_without_wait_alone_runs_each_request_at_once() -> None:
    calls: list[list[str]] = []
    batcher = MicroBatcher(_recording(calls), batch_size=1, wait_s=5.0, wait_alone=False)

    async def main() -> list[str]:
        return await asyncio.gather(batcher.submit("a"), batcher.submit("b"))

    started = time.monotonic()
    assert asyncio.run(main()) == ["A", "B"]
    assert time.monotonic() - started < 4.0  # a 5 s wait before either would fail this
    assert calls == [["a"], ["b"]]


def test_a_batcher_knows_when_its_worker_belongs_to_another_event_loop() -> None:
    batcher = MicroBatcher(_recording([]), batch_size=2, wait_s=0.0)

    async def use() -> bool:
        await batcher.submit("a")
        return batcher.serves_running_loop()

    assert asyncio.run(use()) is True
    assert asyncio.run(_check(batcher)) is False


async def _check(batcher: MicroBatcher[str, str]) -> bool:
    return batcher.serves_running_loop()


@pytest.mark.parametrize("batch_size", [0, -3])
def test_a_non_positive_batch_size_means_one(batch_size: int) -> None:
    assert MicroBatcher(_recording([]), batch_size=batch_size, wait_s=0.0).batch_size == 1
