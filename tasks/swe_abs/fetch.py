"""Set-up step of `swe_abs`: fetch the projects' sdists and the sandbox's test packages with pip.

    python -m tasks.swe_abs.fetch          # what `make setup` runs (idempotent, quick when done)

Both land in ``$HARNESS_CACHE_DIR/swe_abs/``:

- ``sdists/``: the pinned source distributions of ``sdists.txt`` (``pip download --no-binary``);
- ``site-<tag>/``: ``sandbox-requirements.txt`` installed with ``pip install --target``; the bwrap
  jail binds it read-only and puts it on ``PYTHONPATH`` of its own ``python3``.

Nothing here runs at import time of the task: a task that finds the cache missing fails at once
and names this command (``SetupMissingError``).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tarfile
from pathlib import Path

from harness.data import DatasetNotFoundError
from harness.paths import cache_dir

HERE = Path(__file__).resolve().parent
SDISTS_FILE = HERE / "sdists.txt"
SANDBOX_REQUIREMENTS = HERE / "sandbox-requirements.txt"
HOW_TO_FETCH = (
    "run `make setup` (or `.venv/bin/python -m tasks.swe_abs.fetch`) once with PyPI reachable"
)


class SetupMissingError(DatasetNotFoundError):
    """The sdists or the sandbox packages were not fetched at set-up time."""


def _requirements(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def _tag(path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:10]
    return f"py{sys.version_info.major}{sys.version_info.minor}-{digest}"


def swe_abs_cache() -> Path:
    return cache_dir() / "swe_abs"


def sdist_dir() -> Path:
    return swe_abs_cache() / "sdists"


def site_dir() -> Path:
    """The sandbox's package folder (keyed by Python version and the requirements' content)."""
    return swe_abs_cache() / f"site-{_tag(SANDBOX_REQUIREMENTS)}"


def sdist_archive(requirement: str) -> Path:
    """The cached sdist for a pinned ``name==version`` (raises SetupMissingError when absent)."""
    name, _, version = requirement.partition("==")
    stems = {name, name.replace("-", "_"), name.capitalize(), name.replace("-", "_").capitalize()}
    folder = sdist_dir()
    for stem in stems:
        for suffix in (".tar.gz", ".zip"):
            path = folder / f"{stem}-{version}{suffix}"
            if path.is_file():
                return path
    raise SetupMissingError(f"swe_abs: sdist {requirement} not found in {folder}; {HOW_TO_FETCH}")


def require_site() -> Path:
    path = site_dir()
    if not (path / ".complete").is_file():
        raise SetupMissingError(
            f"swe_abs: the sandbox test packages are not installed in {path}; {HOW_TO_FETCH}"
        )
    return path


def _pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args]
    subprocess.run(cmd, check=True)


def fetch(*, quiet: bool = False) -> tuple[Path, Path]:
    """Download what is missing; returns (sdist folder, site folder)."""
    sdists = sdist_dir()
    sdists.mkdir(parents=True, exist_ok=True)
    missing = []
    for req in _requirements(SDISTS_FILE):
        try:
            sdist_archive(req)
        except SetupMissingError:
            missing.append(req)
    if missing:
        if not quiet:
            print(f"swe_abs: downloading sdists {', '.join(missing)} into {sdists}")
        _pip("download", "--no-deps", "--no-binary", ":all:", "-d", str(sdists), *missing)
    for req in _requirements(SDISTS_FILE):
        with tarfile.open(sdist_archive(req)) as tar:  # a broken download fails here, not later
            tar.getmembers()
    site = site_dir()
    if not (site / ".complete").is_file():
        if not quiet:
            print(f"swe_abs: installing the sandbox test packages into {site}")
        site.mkdir(parents=True, exist_ok=True)
        _pip(
            "install",
            "--no-compile",
            "--upgrade",
            "--target",
            str(site),
            "-r",
            str(SANDBOX_REQUIREMENTS),
        )
        (site / ".complete").write_text("\n".join(_requirements(SANDBOX_REQUIREMENTS)) + "\n")
    return sdists, site


if __name__ == "__main__":
    s, p = fetch()
    print(f"swe_abs: sdists in {s}; sandbox packages in {p}")
