"""Fixtures for the bwrap sandbox tests: skip (with the reason) where bwrap cannot run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment, bwrap_problem

SandboxFactory = Callable[..., BwrapSandboxEnvironment]


@pytest.fixture(scope="session")
def bwrap_ok() -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bwrap sandbox unavailable here: {problem}")


@pytest.fixture
def make_sandbox(bwrap_ok: None) -> Iterator[SandboxFactory]:
    """Create sandboxes through inspect's sample_init; all are cleaned up after the test."""
    made: list[BwrapSandboxEnvironment] = []

    def make(config: BwrapConfig | None = None) -> BwrapSandboxEnvironment:
        envs = asyncio.run(BwrapSandboxEnvironment.sample_init("test", config, {}))
        sb = envs["default"].as_type(BwrapSandboxEnvironment)
        made.append(sb)
        return sb

    yield make
    for sb in made:
        asyncio.run(
            BwrapSandboxEnvironment.sample_cleanup("test", sb.config, {"default": sb}, False)
        )


@pytest.fixture
def sandbox(make_sandbox: SandboxFactory) -> BwrapSandboxEnvironment:
    return make_sandbox(BwrapConfig(memory_mb=512, max_processes=64, timeout_s=60))
