"""Metrics without a value (`MetricUndefined`: one class only, no sample scored) said once.

A run with a small limit can leave many metrics undefined; each warned on its own (a dozen
warnings, each naming a source line) buries the run's result. During a run the warnings are
collected instead, and the command prints one line naming how many and why.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collect_undefined() -> Iterator[list[str]]:
    """Collect `MetricUndefined` warnings (their messages) raised inside; others pass through."""
    from scorers import MetricUndefined

    found: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MetricUndefined)
        try:
            yield found
        finally:
            for warning in caught:
                if issubclass(warning.category, MetricUndefined):
                    found.append(str(warning.message))
                else:
                    warnings.showwarning(
                        warning.message, warning.category, warning.filename, warning.lineno
                    )


def undefined_line(messages: list[str], limit: int = 2) -> str | None:
    """One line: how many metric values were undefined and the distinct reasons (first few)."""
    if not messages:
        return None
    reasons = list(dict.fromkeys(m.strip().rstrip(".") for m in messages))
    shown = "; ".join(reasons[:limit]) + (
        f"; … {len(reasons) - limit} more" if len(reasons) > limit else ""
    )
    n = len(messages)
    return f"undefined: {n} metric value{'' if n == 1 else 's'} (NaN): {shown}"
