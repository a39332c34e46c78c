"""Fixtures for the sandbox tests: skip (with the reason) where a sandbox cannot run.

Every test that builds a sandbox through `make_sandbox` / `sandbox` runs once per sandbox kind
and jail mode. Today the kinds are the bwrap sandbox's two jail modes ("persistent": one jail per
sample with an exec server; "per_exec": one jail per exec). The escape suite is written against
inspect's SandboxEnvironment API plus the limits of `BwrapConfig`; a new kind (docker, issue 20)
joins by adding its name to `SANDBOX_KINDS` and a factory to `_FACTORIES` that builds an
environment with those limits. Tests that look at bwrap's own host-side state (its private
uids, cgroups, sample folder) read them through `BwrapSandboxEnvironment` attributes and would
skip for other kinds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest
from inspect_ai.util import SandboxEnvironment

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment, bwrap_problem

SandboxFactory = Callable[..., BwrapSandboxEnvironment]
SANDBOX_KINDS = ("bwrap",)
MODES = ("persistent", "per_exec")


@pytest.fixture(scope="session")
def bwrap_ok() -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bwrap sandbox unavailable here: {problem}")


@pytest.fixture(params=SANDBOX_KINDS)
def sandbox_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _bwrap_environment(config: BwrapConfig, mode: str) -> SandboxEnvironment:
    config = config.model_copy(update={"mode": mode})
    envs = asyncio.run(BwrapSandboxEnvironment.sample_init("test", config, {}))
    return envs["default"]


def _bwrap_cleanup(environment: SandboxEnvironment) -> None:
    sb = environment.as_type(BwrapSandboxEnvironment)
    asyncio.run(BwrapSandboxEnvironment.sample_cleanup("test", sb.config, {"default": sb}, False))


_FACTORIES: dict[str, tuple[Callable[[BwrapConfig, str], SandboxEnvironment],
                            Callable[[SandboxEnvironment], None]]] = {
    "bwrap": (_bwrap_environment, _bwrap_cleanup),
}  # fmt: skip


@pytest.fixture
def make_sandbox(
    request: pytest.FixtureRequest, sandbox_kind: str, mode: str
) -> Iterator[SandboxFactory]:
    """Create sandboxes (of the test's kind, in its `mode`) through inspect's sample_init; all
    are cleaned up after the test."""
    if sandbox_kind == "bwrap":
        request.getfixturevalue("bwrap_ok")
    create, cleanup = _FACTORIES[sandbox_kind]
    made: list[SandboxEnvironment] = []

    def make(config: BwrapConfig | None = None) -> BwrapSandboxEnvironment:
        environment = create(config or BwrapConfig(), mode)
        made.append(environment)
        return environment  # type: ignore[return-value]

    yield make
    for environment in made:
        cleanup(environment)


@pytest.fixture
def sandbox(make_sandbox: SandboxFactory) -> BwrapSandboxEnvironment:
    return make_sandbox(BwrapConfig(memory_mb=512, max_processes=64, timeout_s=60))
