"""Reusable scorers and metrics."""

from scorers.detection import (
    ConfidenceInterval,
    MetricUndefined,
    aupr,
    auroc,
    bootstrap_ci,
    detection_metrics,
    detection_summary,
    fpr_at_tpr,
)

__all__ = [
    "ConfidenceInterval",
    "MetricUndefined",
    "aupr",
    "auroc",
    "bootstrap_ci",
    "detection_metrics",
    "detection_summary",
    "fpr_at_tpr",
]
