"""Shared fixtures of the agent_stress tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def bwrap_ok() -> None:
    """Skip with the reason when bubblewrap cannot run here."""
    from sandboxes.bwrap import bwrap_problem

    problem = bwrap_problem()
    if problem:
        pytest.skip(f"bwrap sandbox unavailable: {problem}")


@pytest.fixture(scope="session")
def docker_ok() -> None:
    """Skip with the reason when no Docker engine is reachable (`make docker` starts one)."""
    from sandboxes.docker import docker_problem

    problem = docker_problem()
    if problem is not None:
        pytest.skip(f"docker sandbox unavailable here: {problem}")
