"""What every run records about itself: task version inputs, data provenance, code revision."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path
from typing import Any

_REPO_ROOT = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=1)
def git_revision() -> dict[str, Any]:
    """The project's git commit and whether the tree is dirty ("unknown" outside a checkout)."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(_REPO_ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = bool(
            subprocess.run(
                ["git", "-C", str(_REPO_ROOT), "status", "--porcelain", "--untracked-files=no"],
                capture_output=True,
                text=True,
                timeout=10,
                check=True,
            ).stdout.strip()
        )
        return {"commit": commit, "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}


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
    from harness import __version__

    return {
        "dataset_source": dataset_source,
        "dataset_hash": dataset_hash,
        "dataset_generated": generated,
        "deviations": list(deviations),
        "harness_version": __version__,
        "harness_git": git_revision(),
        **extra,
    }
