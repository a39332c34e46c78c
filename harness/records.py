"""What every run records about itself: task version inputs, data provenance, code revision."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path
from typing import Any

_REPO_ROOT = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=1)
def git_revision() -> dict[str, Any]:
    """The project's git commit and whether the tree is dirty ("unknown" outside a checkout).

    Dirty by inspect's rule (`git status --porcelain`: a modified, staged or untracked file), so
    the harness's record and the `revision` inspect writes into the same log agree.
    """
    try:
        commit = _git("rev-parse", "HEAD")
        dirty = bool(_git("status", "--porcelain").strip())
        return {"commit": commit.strip(), "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(_REPO_ROOT), *args],
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    ).stdout


def task_metadata(
    *,
    dataset_source: str,
    dataset_hash: str,
    deviations: list[str] | tuple[str, ...] = (),
    generated: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """Metadata every Task carries into its log.

    `deviations` names each way the run departs from the paper (a smaller model, a TF-IDF
    retriever, a rendered dataset, ...), so a reader of the log never has to guess.
    """
    from harness.version import __version__

    return {
        "dataset_source": dataset_source,
        "dataset_hash": dataset_hash,
        "dataset_generated": generated,
        "deviations": list(deviations),
        "harness_version": __version__,
        "harness_git": git_revision(),
        **extra,
    }
