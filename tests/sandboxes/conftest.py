"""Fixtures for the bwrap sandbox tests: skip (with the reason) where bwrap cannot run.

Every test that builds a sandbox through `make_sandbox` / `sandbox` runs once per jail mode
("persistent": one jail per sample with an exec server; "per_exec": one jail per exec)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment, bwrap_problem

SandboxFactory = Callable[..., BwrapSandboxEnvironment]
MODES = ("persistent", "per_exec")


@pytest.fixture(scope="session")
def bwrap_ok() -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bwrap sandbox unavailable here: {problem}")


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_sandbox(bwrap_ok: None, mode: str) -> Iterator[SandboxFactory]:
    """Create sandboxes (in the test's `mode`) through inspect's sample_init; all are cleaned up
    after the test."""
    made: list[BwrapSandboxEnvironment] = []

    def make(config: BwrapConfig | None = None) -> BwrapSandboxEnvironment:
        config = (config or BwrapConfig()).model_copy(update={"mode": mode})
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
