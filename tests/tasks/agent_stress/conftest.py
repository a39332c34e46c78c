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
