"""Reusable scorers and metrics.

:mod:`scorers.stats` is the pure statistics core (AUROC/AUPR/FPR@TPR kernels, the one
:class:`Interval` type, bootstrap, Wilson, paired tests, Holm) shared by the eval metrics and the
report; :mod:`scorers.detection` and :mod:`scorers.localisation` hold inspect ``@metric``s on it.
"""

from scorers.stats import (
    Interval,
    MetricUndefined,
    aupr,
    auroc,
    bootstrap_mean_ci,
    bootstrap_statistic_ci,
    detection_interval,
    detection_summary,
    fpr_at_tpr,
    wilson_ci,
)

__all__ = [
    "Interval",
    "MetricUndefined",
    "aupr",
    "auroc",
    "bootstrap_mean_ci",
    "bootstrap_statistic_ci",
    "detection_interval",
    "detection_summary",
    "fpr_at_tpr",
    "wilson_ci",
]
