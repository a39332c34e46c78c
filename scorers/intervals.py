"""Intervals and paired tests: kept as an import path; they live in :mod:`scorers.stats`.

``scorers.stats`` is the one statistics core (kernels, the :class:`~scorers.stats.Interval` type,
bootstrap, Wilson, paired tests, Holm); new code imports from there.
"""

from scorers.stats import (
    Interval,
    McNemarResult,
    PairedDiff,
    bootstrap_mean_ci,
    bootstrap_statistic_ci,
    holm_adjust,
    mcnemar,
    paired_bootstrap_diff,
    paired_bootstrap_statistic_diff,
    wilson_ci,
)

__all__ = [
    "Interval",
    "McNemarResult",
    "PairedDiff",
    "bootstrap_mean_ci",
    "bootstrap_statistic_ci",
    "holm_adjust",
    "mcnemar",
    "paired_bootstrap_diff",
    "paired_bootstrap_statistic_diff",
    "wilson_ci",
]
