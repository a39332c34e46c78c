"""Fixtures for the sandbox tests: skip (with the reason) where a sandbox cannot run.

Every test that builds a sandbox through `make_sandbox` / `sandbox` runs once per sandbox kind
and jail mode. Today the kinds are the bwrap sandbox's two jail modes ("persistent": one jail per
sample with an exec server; "per_exec": one jail per exec). The escape suite is written against
inspect's SandboxEnvironment API plus the limits of `BwrapConfig`; a new kind (docker, issue 20)
joins by adding its name to `SANDBOX_KINDS`, its modes to `KIND_MODES` and a factory to
`_FACTORIES` that builds an environment with those limits; a test module opts in by naming the
kinds it runs on in a module-level `SANDBOX_KINDS` (the escape suite: bwrap and docker). Tests
that look at bwrap's own host-side state (its private uids, cgroups, sample folder) read them
through `BwrapSandboxEnvironment` attributes and branch or skip for other kinds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest
from inspect_ai.util import SandboxEnvironment

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment, bwrap_problem

SandboxFactory = Callable[..., BwrapSandboxEnvironment]
SANDBOX_KINDS = ("bwrap", "docker")
MODES = ("persistent", "per_exec")
# The kinds' modes: docker has one (a container per sample, whose processes outlive their exec).
KIND_MODES = {"bwrap": MODES, "docker": ("container",)}


@pytest.fixture(scope="session")
def bwrap_ok() -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bwrap sandbox unavailable here: {problem}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test module runs on the kinds in its `SANDBOX_KINDS` (default: bwrap only), each in its
    modes: (bwrap, persistent), (bwrap, per_exec), (docker, container)."""
    own_modes = any(  # the test chose its modes itself (@pytest.mark.parametrize("mode", ...))
        "mode" in str(mark.args[0]) for mark in metafunc.definition.iter_markers("parametrize")
    )
    if "sandbox_kind" not in metafunc.fixturenames or own_modes:
        if "sandbox_kind" in metafunc.fixturenames:
            metafunc.parametrize("sandbox_kind", ["bwrap"])
        elif "mode" in metafunc.fixturenames and not own_modes:  # bwrap's own: both jail modes
            metafunc.parametrize("mode", MODES)
        return
    kinds = getattr(metafunc.module, "SANDBOX_KINDS", ("bwrap",))
    pairs = [(kind, mode) for kind in kinds for mode in KIND_MODES[kind]]
    ids = [mode if kind == "bwrap" else kind for kind, mode in pairs]
    metafunc.parametrize(("sandbox_kind", "mode"), pairs, ids=ids)


@pytest.fixture
def sandbox_kind() -> str:
    return "bwrap"  # replaced by pytest_generate_tests


@pytest.fixture
def mode(request: pytest.FixtureRequest) -> str:
    # parametrized by pytest_generate_tests, or indirectly by the test itself
    return str(getattr(request, "param", "persistent"))


def _bwrap_environment(config: BwrapConfig, mode: str) -> SandboxEnvironment:
    config = config.model_copy(update={"mode": mode})
    envs = asyncio.run(BwrapSandboxEnvironment.sample_init("test", config, {}))
    return envs["default"]


def _bwrap_cleanup(environment: SandboxEnvironment) -> None:
    sb = environment.as_type(BwrapSandboxEnvironment)
    asyncio.run(BwrapSandboxEnvironment.sample_cleanup("test", sb.config, {"default": sb}, False))


def _docker_environment(config: BwrapConfig, mode: str) -> SandboxEnvironment:
    """The same limits in a docker_api container (seccomp=False: no filter, the control run)."""
    from sandboxes.docker import DockerConfig, DockerSandboxEnvironment

    fields = config.model_dump(exclude={"mode", "seccomp"})
    docker_config = DockerConfig(**fields, seccomp_unconfined=not config.seccomp)
    envs = asyncio.run(DockerSandboxEnvironment.sample_init("test", docker_config, {}))
    return envs["default"]


def _docker_cleanup(environment: SandboxEnvironment) -> None:
    from sandboxes.docker import DockerSandboxEnvironment

    asyncio.run(
        DockerSandboxEnvironment.sample_cleanup("test", None, {"default": environment}, False)
    )


_FACTORIES: dict[str, tuple[Callable[[BwrapConfig, str], SandboxEnvironment],
                            Callable[[SandboxEnvironment], None]]] = {
    "bwrap": (_bwrap_environment, _bwrap_cleanup),
    "docker": (_docker_environment, _docker_cleanup),
}  # fmt: skip


@pytest.fixture
def make_sandbox(
    request: pytest.FixtureRequest, sandbox_kind: str, mode: str
) -> Iterator[SandboxFactory]:
    """Create sandboxes (of the test's kind, in its `mode`) through inspect's sample_init; all
    are cleaned up after the test."""
    request.getfixturevalue(f"{sandbox_kind}_ok")
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
