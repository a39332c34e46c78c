"""Base trees of the offline instances: a cached sdist plus the instance's set-up patch.

An offline instance names its sdist (``base_commit: "sdist:toolz==1.2.0"``) and carries
``base_setup_patch``, the diff from the sdist's files to the instance's base commit (the function
as it was before the fix, the tests of the test patch and any removed tests taken out, and for
flask an environment fix). Applying it is text work on the host; nothing is executed.
"""

from __future__ import annotations

import hashlib
import tarfile
from functools import lru_cache
from pathlib import Path

from methods.swe_abs import PatchError, apply_patch
from tasks.swe_abs.fetch import sdist_archive

_SKIP_PARTS = {"__pycache__", ".git", ".tox", ".eggs", "docs", "doc", "benchmark", "examples"}


class InstanceTreeError(ValueError):
    """The set-up patch does not fit the cached sdist (wrong version or corrupted cache)."""


@lru_cache(maxsize=16)
def sdist_files(requirement: str) -> tuple[tuple[str, bytes], ...]:
    """Every regular file of the sdist (the archive's top folder stripped), sorted."""
    archive = sdist_archive(requirement)
    out = []
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            parts = Path(member.name).parts[1:]
            if not parts or _SKIP_PARTS & set(parts[:-1]) or parts[-1].endswith((".pyc", ".pyo")):
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            out.append(("/".join(parts), handle.read()))
    return tuple(sorted(out))


def sdist_digest(requirement: str) -> str:
    return hashlib.sha256(sdist_archive(requirement).read_bytes()).hexdigest()


def requirement_of(base_commit: str) -> str:
    if not base_commit.startswith("sdist:"):
        raise InstanceTreeError(
            f"base_commit {base_commit!r} is not an offline instance's (expected 'sdist:<name>==<version>')"
        )
    return base_commit[len("sdist:") :]


def base_tree(base_commit: str, setup_patch: str, *, where: str = "instance") -> dict[str, bytes]:
    """The instance's base tree: the sdist's files with the set-up patch applied."""
    files = dict(sdist_files(requirement_of(base_commit)))
    if setup_patch.strip():
        texts = {p: d.decode("utf-8") for p, d in files.items() if p.endswith(".py")}
        try:
            changed = apply_patch(texts, setup_patch)
        except PatchError as exc:
            raise InstanceTreeError(
                f"{where}: base_setup_patch does not apply to {base_commit} ({exc}); "
                "is the cached sdist the pinned version?"
            ) from None
        for path, text in changed.items():
            if text is None:
                files.pop(path, None)
            else:
                files[path] = text.encode("utf-8")
    return files
