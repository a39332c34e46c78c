"""Shared fixtures: data directory (skips with the reason when absent), hermetic caches."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """HARNESS_DATA_DIR, or skip: tests that need real benchmark data say so by name."""
    value = os.environ.get("HARNESS_DATA_DIR", "").strip()
    if not value:
        pytest.skip("HARNESS_DATA_DIR is not set (real benchmark data absent on this clone)")
    path = Path(value)
    if not path.is_dir():
        pytest.skip(f"HARNESS_DATA_DIR={path} does not exist (real benchmark data absent)")
    return path


@pytest.fixture(scope="session")
def bwrap_available() -> str:
    path = shutil.which("bwrap")
    if path is None:
        pytest.skip("bubblewrap (bwrap) is not installed: apt-get install -y bubblewrap")
    return path


@pytest.fixture(scope="session")
def embedded_dir() -> Path:
    """The embedded model converted to an HF folder (converted once per cache dir)."""
    from harness.models import EmbeddedModelError, embedded_model_dir

    try:
        return embedded_model_dir()
    except EmbeddedModelError as exc:
        pytest.skip(f"embedded model unavailable: {exc}")


@pytest.fixture(autouse=True)
def _logs_out_of_the_tree(tmp_path_factory, monkeypatch):
    """Evals in tests that name no log_dir write to a temp dir, never into ./logs."""
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path_factory.mktemp("inspect-logs")))
