"""Shared helpers for the anchor task tests: run the task on scripted roles in a sandbox."""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.model import get_model


@pytest.fixture(scope="session")
def bwrap_ok() -> None:
    """Skip with the reason when bubblewrap cannot run here."""
    try:
        import sandboxes.bwrap as bw
    except ImportError as e:  # the provider package is missing from this checkout
        pytest.skip(f"sandboxes.bwrap cannot be imported: {e}")
    problem = bw.bwrap_problem()
    if problem:
        pytest.skip(f"bwrap sandbox unavailable: {problem}")


def run_anchor(
    tmp_path,
    *,
    name: str,
    target: list[Any],
    auditor_replies: list[Any] | None = None,
    judge: list[Any] | None = None,
    **task_args: Any,
):
    """Evaluate `anchor` with scripted target/auditor/judge; returns (log, sample metadata).

    split=all unless given: these tests exercise the audit on named scenarios of either side."""
    import harness.models  # noqa: F401  (registers the scripted provider)
    from tasks.anchor.task import anchor

    tgt = get_model(f"scripted/{name}-target", replies=target)

    def scripted(role: str, replies: list[Any] | None, default: str):
        if not replies:  # the provider wants a non-empty script or a single reply
            return get_model(f"scripted/{name}-{role}", reply=default)
        return get_model(f"scripted/{name}-{role}", replies=replies, default=default)

    roles = {
        "target": tgt,
        "auditor": scripted("auditor", auditor_replies, "(no auditor reply)"),
        "judge": scripted("judge", judge, '{"refused": false}'),
    }
    task_args.setdefault("split", "all")
    [log] = eval(
        anchor(**task_args), model=tgt, model_roles=roles, log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    return log, [s.metadata["anchor"] for s in log.samples]
