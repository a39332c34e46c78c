"""The sandbox specs tasks ask for by name."""

from __future__ import annotations

import pytest

import sandboxes
from tasks.anchor.task import _sandbox_spec as anchor_spec
from tasks.swe_abs.task import _sandbox_spec as swe_abs_spec


def test_task_docker_is_inspects_compose_provider_with_the_projects_file() -> None:
    expected = ("docker", str(sandboxes.COMPOSE_FILE))
    assert sandboxes.COMPOSE_FILE.is_file()
    assert sandboxes.compose_docker_spec() == expected
    assert anchor_spec("docker") == expected
    assert swe_abs_spec("docker", sandboxes.COMPOSE_FILE.parent, 512) == expected


def test_task_docker_without_the_compose_file_is_inspects_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandboxes, "COMPOSE_FILE", sandboxes.COMPOSE_FILE.with_name("gone.yaml"))
    assert sandboxes.compose_docker_spec() == "docker"
