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
def docker_ok() -> None:
    """Skip with the reason when no Docker engine is reachable (`make test` starts one)."""
    from sandboxes.docker import docker_problem

    problem = docker_problem()
    if problem is not None:
        pytest.skip(f"docker sandbox unavailable here: {problem}")


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


class HubCache:
    """A Hugging Face hub cache laid out the way `snapshot_download` leaves it, for offline tests:
    `<cache>/datasets--<owner>--<name>/blobs/<hash>` holds the bytes, `snapshots/<commit>/<repo
    path>` links to the blob, `refs/<branch>` holds the commit. The `hub_cache` fixture points
    huggingface_hub at it with `HF_HUB_OFFLINE=1`, so loaders run the same `snapshot_download` +
    `datasets` calls a user runs online."""

    COMMIT = "0123456789abcdef0123456789abcdef01234567"

    def __init__(self, root: Path) -> None:
        self.root = root

    def fill(
        self, repo_id: str, files: dict[str, bytes], *, commit: str = COMMIT, ref: str = "main"
    ) -> Path:
        """Write `files` (repo path → bytes) as snapshot `commit` of dataset `repo_id`."""
        import hashlib

        repo = self.root / ("datasets--" + repo_id.replace("/", "--"))
        snapshot = repo / "snapshots" / commit
        for relative, data in files.items():
            blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(data)
            link = snapshot / relative
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(blob, link.parent))
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
        return snapshot

    @staticmethod
    def parquet(rows: list[dict]) -> bytes:
        import io

        import pyarrow as pa
        import pyarrow.parquet as pq

        buffer = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows), buffer)
        return buffer.getvalue()

    @staticmethod
    def card(configs: dict[str, dict[str, str]]) -> bytes:
        """A dataset card whose YAML maps each config's splits to path patterns (hub format)."""
        lines = ["---", "configs:"]
        for name, splits in configs.items():
            lines += [f"- config_name: {name}", "  data_files:"]
            lines += [f"  - split: {s}\n    path: {p}" for s, p in splits.items()]
        return "\n".join([*lines, "---", "", "# test card", ""]).encode()


@pytest.fixture
def hub_cache(tmp_path, monkeypatch) -> HubCache:
    """An empty, offline Hugging Face hub cache in use for this test (see `HubCache`)."""
    from huggingface_hub import constants

    root = tmp_path / "hf-hub"
    root.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(root))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return HubCache(root)


@pytest.fixture(scope="session")
def swe_abs_site() -> str:
    """swe_abs's sandbox package folder (pytest, coverage, Hypothesis), or a skip naming set-up."""
    from tasks.swe_abs.fetch import SetupMissingError, require_site

    try:
        return str(require_site())
    except SetupMissingError as exc:
        pytest.skip(str(exc))


# The suite's longest file (~15 min: one strengthening run over all 31 swe_abs instances, in
# `make test-full`) and the files with slow, vLLM or embedded-model tests run first: with two
# xdist workers taking one file at a time, a long file that starts last leaves the other worker
# idle at the end.
_LONGEST_FILE = "test_all_instances.py"
_HEAVY_MARKERS = ("slow", "vllm", "embedded")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:  # a vLLM server's start is heavy integration: `make test-full` runs it
        if item.get_closest_marker("vllm") and not item.get_closest_marker("full"):
            item.add_marker(pytest.mark.full)
    heavy = {item.path for item in items if any(item.get_closest_marker(m) for m in _HEAVY_MARKERS)}

    def rank(item: pytest.Item) -> int:
        if item.path.name == _LONGEST_FILE:
            return 0
        return 1 if item.path in heavy else 2

    items.sort(key=rank)  # stable: each file's tests stay together and in order
