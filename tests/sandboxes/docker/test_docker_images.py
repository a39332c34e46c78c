"""The base image's Debian mirror comes from the machine's own apt sources (issue 31 item 14):
the code names no mirror host."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sandboxes.docker import ImageBuildError, debian_mirror

HERE = Path(__file__).resolve().parents[3] / "sandboxes" / "docker"


def _root(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "etc" / "apt" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_one_line_sources(tmp_path: Path) -> None:
    root = _root(tmp_path, {"sources.list": (
        "# deb http://commented.example/debian bookworm main\n"
        "deb-src http://src.example/debian bookworm main\n"
        "deb http://sec.example/debian-security bookworm-security main\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://mine.example/debian bookworm main contrib\n"
    )})  # fmt: skip
    assert debian_mirror(root) == "http://mine.example/debian"


def test_deb822_sources_and_suite_preference(tmp_path: Path) -> None:
    root = _root(tmp_path, {
        "sources.list.d/off.sources": (
            "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\n"
            "Components: main\nEnabled: no\n"
        ),
        "sources.list.d/debian.sources": (
            "Types: deb\n# a comment\nURIs: http://other.example/debian\nSuites: trixie\n"
            "Components: main\n\n"
            "Types: deb deb-src\nURIs: http://local.example/debian\n"
            "Suites: bookworm bookworm-updates\nComponents: main\n"
        ),
        "sources.list.d/extra.list": "deb https://third.example/apt stable-party main\n",
    })  # fmt: skip
    assert debian_mirror(root) == "http://local.example/debian"  # the base image's own suite first
    (tmp_path / "etc/apt/sources.list.d/debian.sources").write_text(
        "Types: deb\nURIs: http://other.example/debian\nSuites: trixie\nComponents: main\n"
    )
    assert debian_mirror(root) == "http://other.example/debian"  # another Debian release


def test_no_debian_source_is_a_clear_error(tmp_path: Path) -> None:
    root = _root(tmp_path, {"sources.list": "deb http://ubuntu.example/ubuntu jammy main\n"})
    with pytest.raises(ImageBuildError, match="HARNESS_DEBIAN_MIRROR"):
        debian_mirror(root)


def test_environment_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_DEBIAN_MIRROR", "file:///srv/mirror/debian")
    assert debian_mirror(tmp_path) == "file:///srv/mirror/debian"


def test_no_mirror_host_in_the_code() -> None:
    url = re.compile(r"\b(?:https?|ftp)://([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")
    for path in sorted(HERE.iterdir()):
        if path.is_file():
            hosts = url.findall(path.read_text())
            assert hosts == [], f"{path.name} names {hosts}"


def test_vllm_compose_does_not_deny_the_engine() -> None:
    """issue 31 item 13: the file said this workplace has no Docker engine; it has one."""
    import yaml

    path = HERE.parent / "vllm" / "compose.yaml"
    text = path.read_text()
    comments = " ".join(
        line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#")
    )  # fmt: skip
    assert "no docker engine" not in " ".join(comments.lower().split())
    assert "vllm" in yaml.safe_load(text)["services"]
