"""The statistics core: detection-curve kernels, one interval type, bootstrap, paired tests.

Pure numpy/scipy (no inspect): the per-eval ``@metric``s (``scorers.detection``,
``scorers.localisation``, task metrics) and the report's cells (``reports``) compute every value
and interval here, so a leaderboard cell and the metric its log holds are the same number when
asked with the same ``n_boot`` and ``seed``.

Conventions:

- Binary ``labels``: 1 / True = the positive class (the thing to detect: a hallucination, an
  anomaly); ``scores``: higher = more likely positive. Non-binary labels or non-finite scores are a
  ``ValueError`` naming how many and the first index (callers decide what a failed sample means
  before asking for a metric; silently dropping it would bias the value).
- A detection metric that is undefined (no samples, one class only) is ``nan``, with a
  :class:`MetricUndefined` warning from the validated functions, even where scikit-learn returns a
  number (its ``average_precision_score`` gives 1.0 on all-positive input), so "one class" is never
  mistaken for a perfect or useless detector.
- Values match scikit-learn: ``roc_auc_score`` (ties count 1/2), ``average_precision_score``
  (step-wise, no interpolation). FPR@TPR is the FPR of the first point of the ROC curve **over
  every distinct threshold** (``roc_curve(drop_intermediate=False)``) whose TPR reaches the
  target: the lowest FPR any threshold achieves at that recall. This is pytorch-ood's
  ``FPR95TPR`` (Kirchheim et al., CVPR-W 2022; ``pytorch_ood.metrics.functional.fpr_at_tpr`` in
  0.4.0, equal to ours on 4,000 random cases with ties), whose published benchmark tables use
  it. Reading scikit-learn's *default* curve at the first TPR ≥ 0.95 (OpenOOD's
  ``auc_and_fpr_recall``) can differ: that curve drops collinear points, and when the first point
  reaching the target is one of them (a diagonal run of tied positive/negative pairs) the next
  kept point has a higher FPR. Hendrycks et al.'s ``fpr_and_fdr_at_recall`` (Energy, ReAct, …)
  takes the point whose recall is *closest* to the target, which may lie below it; the fDBD
  authors' repository (``util/metrics.py``) thresholds at the 5th percentile of the
  in-distribution scores. Numbers computed those ways are not comparable to ours to the last
  digit.
- Intervals are two-sided at ``level`` (default 0.95). Bootstrap intervals are percentile
  intervals over ``n_boot`` resamples of the samples (with replacement) drawn with
  ``numpy.random.default_rng(seed)``; resamples where the statistic is undefined (e.g. one class)
  are dropped and counted (``Interval.n_skipped``). An interval that cannot be estimated is
  ``(nan, nan)``; the estimate is ``nan`` only when the statistic itself is. A degenerate
  ``[v, v]`` would claim certainty the data does not give.
- Samples are resampled in one canonical order, :func:`sample_order_key` of their ids (numbers
  inside an id compare as numbers: ``q-2`` before ``q-10``), never in the order they happened to
  finish: the same seed then draws the same bootstrap samples in the eval and in the report.

The package holds one job per module: ``_common`` (the interval and result types, the sample
order, input checks), ``_kernels`` (detection kernels and scalar metrics), ``_bootstrap``
(bootstrap intervals), ``_paired`` (Wilson intervals and paired tests); import from
``scorers.stats``.
"""

from scorers.stats._bootstrap import (
    bootstrap_mean_ci,
    bootstrap_statistic_ci,
    detection_interval,
    detection_summary,
)
from scorers.stats._common import (
    Interval,
    McNemarResult,
    MetricUndefined,
    PairedDiff,
    check_binary_inputs,
    sample_order_key,
)
from scorers.stats._kernels import (
    DETECTION_METRICS,
    DetectionMetric,
    aupr,
    aupr_rows,
    auroc,
    auroc_rows,
    detection_rows,
    fpr_at_tpr,
    fpr_at_tpr_rows,
)
from scorers.stats._paired import (
    holm_adjust,
    mcnemar,
    paired_bootstrap_diff,
    paired_bootstrap_statistic_diff,
    wilson_ci,
)

__all__ = [
    "DETECTION_METRICS",
    "DetectionMetric",
    "Interval",
    "McNemarResult",
    "MetricUndefined",
    "PairedDiff",
    "aupr",
    "aupr_rows",
    "auroc",
    "auroc_rows",
    "bootstrap_mean_ci",
    "bootstrap_statistic_ci",
    "check_binary_inputs",
    "detection_interval",
    "detection_rows",
    "detection_summary",
    "fpr_at_tpr",
    "fpr_at_tpr_rows",
    "holm_adjust",
    "mcnemar",
    "paired_bootstrap_diff",
    "paired_bootstrap_statistic_diff",
    "sample_order_key",
    "wilson_ci",
]
