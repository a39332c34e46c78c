"""Shared fixtures of the swe_abs task tests: the sandbox and the set-up cache, or a skip."""

from __future__ import annotations

from typing import Any

import pytest

# The clamp instance and a correct fix written differently from its gold patch (a scripted
# solver's reply in several tests).
CLAMP = "mahmoud__boltons-clamp-bounds"
GOOD = '''Here is the fix:
```python
def clamp(x, lower=float('-inf'), upper=float('inf')):
    """Limit a value to a given range."""
    if upper < lower:
        raise ValueError("upper bound below lower bound")
    return min(max(x, lower), upper)
```'''


@pytest.fixture(scope="session")
def swe_abs_ready() -> None:
    """Skip with the reason when bwrap cannot run or the sdists/test packages were not fetched."""
    import sandboxes.bwrap as bw
    from tasks.swe_abs.fetch import SetupMissingError, require_site, sdist_archive

    problem = bw.bwrap_problem()
    if problem:
        pytest.skip(f"bwrap sandbox unavailable: {problem}")
    try:
        require_site()
        for req in ("toolz==1.2.0", "inflection==0.5.1", "boltons==26.2.0", "six==1.17.0"):
            sdist_archive(req)
    except SetupMissingError as exc:
        pytest.skip(str(exc))


def run_swe_abs(
    tmp_path,
    model: Any,
    *,
    roles: dict[str, Any] | None = None,
    max_samples: int = 1,
    epochs: int = 1,
    **task_args: Any,
):
    """Evaluate swe_abs on scripted models; returns (log, [per-sample swe_abs metadata])."""
    from inspect_ai import eval

    import harness.models  # noqa: F401  (registers the scripted provider)
    from tasks.swe_abs.task import swe_abs

    [log] = eval(
        swe_abs(**task_args),
        model=model,
        model_roles=roles or {},
        log_dir=str(tmp_path),
        display="none",
        max_samples=max_samples,
        epochs=epochs,
        fail_on_error=False,
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    errors = [(s.id, s.epoch, s.error.message) for s in log.samples if s.error is not None]
    assert not errors, errors
    return log, log.samples
