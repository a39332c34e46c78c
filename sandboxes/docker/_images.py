"""Images built locally, without a registry: a Debian base from Debian packages, project layers
on top. Each image's tag is a hash of what it is built from, so an image present is never rebuilt
and a changed recipe gets a new tag.

- base: `debootstrap --variant=minbase` (or `mmdebstrap`) of Debian bookworm with the packages in
  `BASE_PACKAGES`, on the host, from the Debian mirror the machine's own apt sources use
  (`debian_mirror`; the only network used), then imported (`docker import`). About 2 minutes on a
  loaded 2-core machine.
- sandbox: `Dockerfile` here on the base (no network in the build: `network_mode=none`).
- vllm-cpu: `vllm-cpu.Dockerfile` on the base; vLLM itself comes from the host: the project's
  virtual environment and its base interpreter are mounted read-only when the server starts
  (`harness.models.docker_server`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ._engine import require_docker

HERE = Path(__file__).resolve().parent
BASE_SUITE = "bookworm"
BASE_PACKAGES = ("python3", "procps", "libnuma1", "libgomp1", "g++", "openssl")
"""python3: the exec supervisor and the tasks' scripts; procps: ps; libnuma1/libgomp1: vllm-cpu's
native libraries (the vLLM image runs the host's virtual environment); g++ and openssl: torch
inductor compiles vLLM-CPU's sampler at the first request and hashes its precompiled header with
the `openssl` command (without them the engine dies: "InvalidCxxCompiler: No working C++
compiler found", then "No such file or directory: 'openssl'")."""
DEBIAN_SUITES = frozenset({
    "buster", "bullseye", "bookworm", "trixie", "forky", "duke", "sid",
    "oldoldstable", "oldstable", "stable", "testing", "unstable",
})  # fmt: skip
"""Suites that only a Debian archive serves: an apt source with one of them is a Debian mirror."""
MIRROR_ENV = "HARNESS_DEBIAN_MIRROR"
REPOSITORY = "icml26-harness"
Progress = Callable[[str], None]


class ImageBuildError(RuntimeError):
    """An image could not be built (the message says which step and why)."""


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)


def base_image_tag() -> str:
    return (
        f"{REPOSITORY}/base:{BASE_SUITE}-{_digest(BASE_SUITE, 'minbase', BASE_PACKAGES, _arch())}"
    )


def _layer_tag(name: str, dockerfile: str) -> str:
    recipe = (HERE / dockerfile).read_text()
    return f"{REPOSITORY}/{name}:{_digest(base_image_tag(), recipe)}"


def sandbox_image_tag() -> str:
    return _layer_tag("sandbox", "Dockerfile")


def vllm_image_tag() -> str:
    return _layer_tag("vllm-cpu", "vllm-cpu.Dockerfile")


def image_exists(tag: str) -> bool:
    import docker.errors

    try:
        require_docker().images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


@contextlib.contextmanager
def _build_lock(name: str) -> Iterator[None]:
    """One build of an image at a time on this machine (parallel test workers, two harnesses)."""
    folder = Path(tempfile.gettempdir()) / "icml26-harness-image-locks"
    folder.mkdir(exist_ok=True)
    with open(folder / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _apt_entries(root: Path) -> list[tuple[str, list[str], list[str]]]:
    """(URI, suites, components) of every enabled binary (`deb`) source in the machine's apt
    configuration: `/etc/apt/sources.list`, `sources.list.d/*.list` (one-line format) and
    `sources.list.d/*.sources` (deb822)."""
    folder = root / "etc" / "apt"
    entries: list[tuple[str, list[str], list[str]]] = []
    one_line = [folder / "sources.list", *sorted((folder / "sources.list.d").glob("*.list"))]
    for path in one_line:
        if not path.is_file():
            continue
        for raw in path.read_text(errors="replace").splitlines():
            words = raw.split("#", 1)[0].split()
            if len(words) >= 3 and words[0] == "deb":
                if words[1].startswith("["):  # options: [arch=amd64 signed-by=...]
                    while words and not words[0].endswith("]"):
                        words.pop(0)
                    words = ["deb", *words[1:]]
                if len(words) >= 3:
                    entries.append((words[1], [words[2]], words[3:]))
    for path in sorted((folder / "sources.list.d").glob("*.sources")):
        text = "\n".join(
            line for line in path.read_text(errors="replace").splitlines()
            if not line.lstrip().startswith("#")
        )  # fmt: skip
        for stanza in text.split("\n\n"):
            fields: dict[str, str] = {}
            for line in stanza.splitlines():
                key, sep, value = line.partition(":")
                if sep and not line[:1].isspace():
                    fields[key.strip().lower()] = value.strip()
            if "deb" not in fields.get("types", "").split():
                continue
            if fields.get("enabled", "yes").lower() == "no":
                continue
            for uri in fields.get("uris", "").split():
                entries.append((uri, fields.get("suites", "").split(),
                                fields.get("components", "").split()))  # fmt: skip
    return entries


def debian_mirror(root: Path = Path("/")) -> str:
    """The Debian mirror to build the base image from: `$HARNESS_DEBIAN_MIRROR`, else the
    archive this machine's apt sources name for Debian's `main` component (a source for the
    base image's own suite first, then one for any other Debian release; security, updates and
    backports archives are skipped). ImageBuildError when there is none (e.g. a non-Debian host):
    set HARNESS_DEBIAN_MIRROR then."""
    configured = os.environ.get(MIRROR_ENV)
    if configured:
        return configured
    found: dict[int, str] = {}
    for uri, suites, components in _apt_entries(root):
        if "main" not in components or uri.split(":", 1)[0] not in ("http", "https", "ftp", "file"):
            continue
        for suite in suites:
            if suite == BASE_SUITE:
                found.setdefault(0, uri)
            elif suite in DEBIAN_SUITES:
                found.setdefault(1, uri)
    if not found:
        raise ImageBuildError(
            f"no apt source for Debian's main archive in {root / 'etc/apt'} (sources.list, "
            f"sources.list.d/); set {MIRROR_ENV} to the URL of a Debian mirror to build the base "
            "image from"
        )
    return found[min(found)].rstrip("/")


def _rootfs_command(target: Path, mirror: str) -> list[str]:
    include = ",".join(BASE_PACKAGES)
    if shutil.which("debootstrap"):
        return ["debootstrap", "--variant=minbase", f"--include={include}", BASE_SUITE,
                str(target), mirror]  # fmt: skip
    if shutil.which("mmdebstrap"):
        return ["mmdebstrap", "--variant=minbase", f"--include={include}", BASE_SUITE,
                str(target), mirror]  # fmt: skip
    raise ImageBuildError(
        "building the base image needs `debootstrap` or `mmdebstrap` "
        "(apt-get install debootstrap; `make docker` does)"
    )


def ensure_base_image(progress: Progress = _stderr) -> str:
    """The Debian base image; built once (debootstrap + import) and then reused."""
    tag = base_image_tag()
    if image_exists(tag):
        return tag
    with _build_lock("base"):
        if image_exists(tag):
            return tag
        if os.geteuid() != 0:
            raise ImageBuildError(f"building {tag} runs debootstrap, which needs root")
        mirror = debian_mirror()
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="icml26-rootfs-", dir="/var/tmp") as tmp:
            target = Path(tmp) / "rootfs"
            command = _rootfs_command(target, mirror)
            progress(f"building {tag}: {' '.join(command)}")
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise ImageBuildError(
                    f"{command[0]} failed ({done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}"
                )
            _import_rootfs(target, tag)
        progress(f"built {tag} in {time.monotonic() - started:.0f} s")
    return tag


def _import_rootfs(rootfs: Path, tag: str) -> None:
    """`tar -C rootfs -c . | docker import - tag`, through the engine API."""
    for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
        folder = rootfs / leftover
        if folder.is_dir():
            for entry in folder.iterdir():
                if entry.is_file():
                    entry.unlink()
    tarball = rootfs.parent / "rootfs.tar"
    subprocess.run(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(tarball), "."],
                   check=True)  # fmt: skip
    repository, version = tag.rsplit(":", 1)
    client = require_docker()
    client.api.import_image_from_file(str(tarball), repository=repository, tag=version)
    if not image_exists(tag):
        raise ImageBuildError(f"docker import of {tarball} did not produce {tag}")


def _ensure_layer(tag: str, dockerfile: str, progress: Progress) -> str:
    if image_exists(tag):
        return tag
    base = ensure_base_image(progress)
    with _build_lock(tag.split("/")[1].split(":")[0]):
        if image_exists(tag):
            return tag
        started = time.monotonic()
        progress(f"building {tag} from sandboxes/docker/{dockerfile} on {base}")
        client = require_docker()
        try:
            client.images.build(
                path=str(HERE),
                dockerfile=dockerfile,
                tag=tag,
                buildargs={"BASE_IMAGE": base},
                network_mode="none",  # no network inside the build: packages come from the host
                pull=False,
                rm=True,
                forcerm=True,
            )
        except Exception as ex:  # noqa: BLE001 - the SDK's BuildError/APIError, re-raised with context
            log = "".join(
                str(item.get("stream") or item.get("error") or "")
                for item in getattr(ex, "build_log", [])
            )
            raise ImageBuildError(f"docker build of {tag} failed: {ex}\n{log[-3000:]}") from None
        progress(f"built {tag} in {time.monotonic() - started:.0f} s")
    return tag


def ensure_sandbox_image(progress: Progress = _stderr) -> str:
    """The sandbox image (base + `Dockerfile`), built on first use."""
    return _ensure_layer(sandbox_image_tag(), "Dockerfile", progress)


def ensure_vllm_image(progress: Progress = _stderr) -> str:
    """The CPU vLLM image (base + `vllm-cpu.Dockerfile`), built on first use."""
    return _ensure_layer(vllm_image_tag(), "vllm-cpu.Dockerfile", progress)


def image_info() -> dict[str, Any]:
    """The project's image tags and whether each is present (for `harness list`, logs, tests)."""
    tags = {"base": base_image_tag(), "sandbox": sandbox_image_tag(), "vllm": vllm_image_tag()}
    return {name: {"tag": tag, "present": image_exists(tag)} for name, tag in tags.items()}
