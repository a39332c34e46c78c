"""Threshold-free detection metrics: AUROC, AUPR (average precision), FPR@TPR, bootstrap CIs.

Conventions (shared by every task that scores a detector):

- ``labels`` are binary: 1 / True = the positive class (the thing to detect: a hallucination,
  an anomaly), 0 / False = negative. Any other value is a ``ValueError``.
- ``scores`` are real numbers, higher = more likely positive. NaN or ±inf is a ``ValueError``
  naming how many and the first index (a detector that produced NaN is a bug upstream, and
  silently dropping the sample would bias the metric).
- A metric that is undefined on the input (empty, or only one class present) returns
  ``float('nan')`` and emits a :class:`MetricUndefined` warning whose message gives the reason.
  All three metrics follow this rule, even where scikit-learn returns a number (its
  ``average_precision_score`` returns 1.0 on all-positive input), so that "only one class" is
  never mistaken for a perfect or a useless detector.
- Values match scikit-learn exactly: ``roc_auc_score`` (ties count 1/2),
  ``average_precision_score`` (step-wise, no interpolation) and, for FPR@TPR, the FPR of the
  first point of ``roc_curve(drop_intermediate=False)`` whose TPR reaches the target.

:func:`bootstrap_ci` resamples samples with replacement (non-stratified by default, so the
interval also reflects the uncertainty of the class balance; ``stratified=True`` resamples each
class separately and keeps the class counts). Resamples in which the metric is undefined (one
class only) are skipped, and the returned interval says how many were.

The inspect ``@metric`` over per-sample score dicts is :func:`detection_metrics` at the end
(the functions above it are pure numpy and never touch inspect state).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, Value, metric
from scipy.stats import rankdata

__all__ = [
    "ConfidenceInterval",
    "MetricUndefined",
    "aupr",
    "auroc",
    "bootstrap_ci",
    "check_binary_inputs",
    "detection_metrics",
    "detection_summary",
    "fpr_at_tpr",
]


class MetricUndefined(UserWarning):
    """A metric was asked for on input where it has no value (empty, or one class only)."""


def check_binary_inputs(labels: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate and convert ``labels``/``scores`` to (bool array, float64 array).

    Raises ``ValueError`` with the reason on mismatched lengths, non-binary labels, non-numeric
    or non-finite scores, or non-1-D input.
    """
    y = np.asarray(labels)
    s = np.asarray(scores)
    if y.ndim != 1 or s.ndim != 1:
        raise ValueError(f"labels and scores must be 1-D; got shapes {y.shape} and {s.shape}")
    if y.shape[0] != s.shape[0]:
        raise ValueError(f"labels and scores differ in length: {y.shape[0]} vs {s.shape[0]}")
    if y.dtype != bool:
        try:
            yf = y.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"labels must be 0/1 or bool; got dtype {y.dtype}") from exc
        bad = ~np.isin(yf, (0.0, 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"labels must be 0/1 or bool; {int(bad.sum())} value(s) are not, "
                f"first at index {i}: {y[i]!r}"
            )
        y = yf.astype(bool)
    try:
        s = s.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scores must be numeric; got dtype {s.dtype}") from exc
    nonfinite = ~np.isfinite(s)
    if nonfinite.any():
        i = int(np.flatnonzero(nonfinite)[0])
        raise ValueError(
            f"scores must be finite; {int(nonfinite.sum())} NaN/inf value(s), "
            f"first at index {i}: {s[i]!r}"
        )
    return y, s


def _undefined_reason(y: np.ndarray) -> str | None:
    if y.size == 0:
        return "no samples"
    n_pos = int(y.sum())
    if n_pos == 0:
        return f"only the negative class is present ({y.size} samples, 0 positives)"
    if n_pos == y.size:
        return f"only the positive class is present ({y.size} samples, 0 negatives)"
    return None


def _nan(metric: str, reason: str, warn: bool) -> float:
    if warn:
        warnings.warn(
            f"{metric} is undefined: {reason}; returning NaN", MetricUndefined, stacklevel=3
        )
    return float("nan")


def _auroc(y: np.ndarray, s: np.ndarray) -> float:
    # Mann-Whitney U with average ranks == trapezoidal ROC area with ties counted 1/2.
    ranks = rankdata(s, method="average")
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def _curve(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative (tp, fp) at each distinct threshold, scores descending (as sklearn)."""
    order = np.argsort(-s, kind="mergesort")
    s_sorted = s[order]
    y_sorted = y[order]
    # Last index of each run of equal scores: tied samples cross the threshold together.
    last = np.r_[np.flatnonzero(np.diff(s_sorted)), y.size - 1]
    tp = np.cumsum(y_sorted)[last].astype(np.float64)
    fp = (last + 1) - tp
    return tp, fp


def _aupr(y: np.ndarray, s: np.ndarray) -> float:
    tp, fp = _curve(y, s)
    precision = tp / (tp + fp)
    recall = tp / tp[-1]
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def _fpr_at_tpr(y: np.ndarray, s: np.ndarray, tpr: float) -> float:
    tp, fp = _curve(y, s)
    tprs = tp / tp[-1]
    fprs = fp / fp[-1]
    # Small tolerance: 0.95 * 20 positives must count as reached at exactly 19/20.
    i = int(np.searchsorted(tprs, tpr - 1e-12, side="left"))
    return float(fprs[i])


def auroc(labels: Any, scores: Any, *, warn: bool = True) -> float:
    """Area under the ROC curve (== ``sklearn.metrics.roc_auc_score``); NaN if one class."""
    y, s = check_binary_inputs(labels, scores)
    reason = _undefined_reason(y)
    return _nan("AUROC", reason, warn) if reason else _auroc(y, s)


def aupr(labels: Any, scores: Any, *, warn: bool = True) -> float:
    """Average precision (== ``sklearn.metrics.average_precision_score``); NaN if one class."""
    y, s = check_binary_inputs(labels, scores)
    reason = _undefined_reason(y)
    return _nan("AUPR", reason, warn) if reason else _aupr(y, s)


def fpr_at_tpr(labels: Any, scores: Any, tpr: float = 0.95, *, warn: bool = True) -> float:
    """False-positive rate at the first ROC point whose TPR is ≥ ``tpr``; NaN if one class."""
    if not 0.0 < tpr <= 1.0:
        raise ValueError(f"tpr must be in (0, 1]; got {tpr}")
    y, s = check_binary_inputs(labels, scores)
    reason = _undefined_reason(y)
    return _nan(f"FPR@{tpr:g}TPR", reason, warn) if reason else _fpr_at_tpr(y, s, tpr)


class ConfidenceInterval(tuple):
    """A ``(lo, hi)`` tuple that also records how the bootstrap went.

    Unpacks as two values (``lo, hi = bootstrap_ci(...)``); the attributes ``n_boot``,
    ``n_skipped`` (resamples where the metric was undefined), ``level`` and ``stratified`` say
    what stands behind it.
    """

    n_boot: int
    n_skipped: int
    level: float
    stratified: bool

    def __new__(
        cls, lo: float, hi: float, *, n_boot: int, n_skipped: int, level: float, stratified: bool
    ) -> ConfidenceInterval:
        self = super().__new__(cls, (float(lo), float(hi)))
        self.n_boot = n_boot
        self.n_skipped = n_skipped
        self.level = level
        self.stratified = stratified
        return self

    @property
    def lo(self) -> float:
        return self[0]

    @property
    def hi(self) -> float:
        return self[1]

    def __repr__(self) -> str:
        return (
            f"ConfidenceInterval(lo={self.lo:.4g}, hi={self.hi:.4g}, level={self.level}, "
            f"n_boot={self.n_boot}, n_skipped={self.n_skipped}, "
            f"stratified={self.stratified})"
        )


def bootstrap_ci(
    metric_fn: Callable[..., float],
    labels: Any,
    scores: Any,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    *,
    stratified: bool = False,
) -> ConfidenceInterval:
    """Percentile bootstrap interval of ``metric_fn(labels, scores)``.

    Resamples the samples with replacement ``n_boot`` times (``stratified=True``: within each
    class, keeping the class counts). Resamples on which the metric is NaN (one class only) are
    skipped and counted in ``n_skipped``; if every resample is skipped (or the input itself has
    one class) the interval is ``(nan, nan)`` with a :class:`MetricUndefined` warning.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be ≥ 1; got {n_boot}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1); got {level}")
    y, s = check_binary_inputs(labels, scores)
    reason = _undefined_reason(y)
    if reason:
        warnings.warn(
            f"bootstrap interval is undefined: {reason}; returning (NaN, NaN)",
            MetricUndefined,
            stacklevel=2,
        )
        return ConfidenceInterval(
            np.nan, np.nan, n_boot=n_boot, n_skipped=n_boot, level=level, stratified=stratified
        )
    rng = np.random.default_rng(seed)
    pos = np.flatnonzero(y)
    neg = np.flatnonzero(~y)
    values: list[float] = []
    skipped = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MetricUndefined)
        for _ in range(n_boot):
            if stratified:
                idx = np.r_[rng.choice(pos, pos.size), rng.choice(neg, neg.size)]
            else:
                idx = rng.integers(0, y.size, y.size)
            yb = y[idx]
            if yb.all() or not yb.any():
                skipped += 1
                continue
            v = float(metric_fn(yb, s[idx]))
            if np.isnan(v):
                skipped += 1
                continue
            values.append(v)
    if not values:
        warnings.warn(
            f"bootstrap interval is undefined: all {n_boot} resamples were one-class",
            MetricUndefined,
            stacklevel=2,
        )
        return ConfidenceInterval(
            np.nan, np.nan, n_boot=n_boot, n_skipped=skipped, level=level, stratified=stratified
        )
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(np.asarray(values), [alpha, 1.0 - alpha])
    return ConfidenceInterval(
        lo, hi, n_boot=n_boot, n_skipped=skipped, level=level, stratified=stratified
    )


def detection_summary(
    labels: Sequence[Any],
    scores: Sequence[Any],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    tpr: float = 0.95,
    stratified: bool = False,
) -> dict[str, float]:
    """AUROC, AUPR and FPR@TPR with bootstrap bounds, as one flat dict of floats.

    Keys: ``auroc``, ``auroc_lo``, ``auroc_hi``, ``aupr``, ``aupr_lo``, ``aupr_hi``,
    ``fpr95`` (named for the default ``tpr``), ``fpr95_lo``, ``fpr95_hi``, ``n``, ``n_pos``,
    ``boot_skipped`` (one-class resamples skipped, the same for all three metrics).
    """
    y, s = check_binary_inputs(labels, scores)
    out: dict[str, float] = {"n": float(y.size), "n_pos": float(y.sum())}
    fns: dict[str, Callable[..., float]] = {
        "auroc": auroc,
        "aupr": aupr,
        "fpr95": lambda a, b: fpr_at_tpr(a, b, tpr),
    }
    skipped = float(n_boot)
    for name, fn in fns.items():
        out[name] = fn(y, s)
        with warnings.catch_warnings():
            # One warning for the point value is enough; the CI repeats the same reason.
            if np.isnan(out[name]):
                warnings.simplefilter("ignore", MetricUndefined)
            ci = bootstrap_ci(
                fn, y, s, n_boot=n_boot, seed=seed, level=level, stratified=stratified
            )
        out[f"{name}_lo"], out[f"{name}_hi"] = ci
        skipped = float(ci.n_skipped)
    out["boot_skipped"] = skipped
    return out


def _finite_or_none(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None


@metric(scores="reduced")
def detection_metrics(
    score_keys: Sequence[str],
    label_key: str = "label",
    accuracy_key: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    stratified: bool = False,
) -> Metric:
    """Per-detector AUROC/AUPR/FPR@95 with bootstrap bounds over per-sample score dicts.

    Each sample's ``Score.value`` is a dict holding ``label_key`` (1 = positive) and one float
    per detector in ``score_keys`` (higher = more likely positive). Samples whose label or score
    is missing/non-finite (e.g. a scored failure) are left out of that detector's metrics and
    counted in ``<key>/n_missing``. Output keys: ``<key>/auroc``, ``<key>/auroc_lo``, …,
    ``<key>/fpr95_hi``, ``<key>/n_missing``, plus ``n_scored``, ``n_pos``,
    ``boot_skipped`` and, when ``accuracy_key`` is given, ``accuracy`` (its mean).
    """

    def compute(scores: list[SampleScore]) -> Value:
        values: list[Mapping[str, Any]] = []
        for i, v in enumerate(s.score.value for s in scores):
            if isinstance(v, Mapping):
                values.append(v)
            else:
                raise ValueError(
                    f"detection_metrics expects dict score values; sample {scores[i].sample_id} "
                    f"has {type(v).__name__}"
                )
        out: dict[str, float] = {}
        if accuracy_key is not None:
            acc = [_finite_or_none(v.get(accuracy_key)) for v in values]
            acc_ok = [a for a in acc if a is not None]
            out["accuracy"] = float(np.mean(acc_ok)) if acc_ok else float("nan")
        labels_all = [_finite_or_none(v.get(label_key)) for v in values]
        out["n_scored"] = float(sum(lab is not None for lab in labels_all))
        out["n_pos"] = float(sum(lab == 1.0 for lab in labels_all))
        skipped = 0.0
        for key in score_keys:
            pairs = [
                (lab, _finite_or_none(v.get(key)))
                for lab, v in zip(labels_all, values, strict=False)
            ]
            kept = [(lab, s) for lab, s in pairs if lab is not None and s is not None]
            with warnings.catch_warnings():
                if not kept:
                    # inspect also computes metrics for its progress display before any sample
                    # is scored; NaN is the answer there, without a warning per detector.
                    warnings.simplefilter("ignore", MetricUndefined)
                summary = detection_summary(
                    [lab for lab, _ in kept],
                    [s for _, s in kept],
                    n_boot=n_boot,
                    seed=seed,
                    level=level,
                    stratified=stratified,
                )
            for name in ("auroc", "aupr", "fpr95"):
                for suffix in ("", "_lo", "_hi"):
                    out[f"{key}/{name}{suffix}"] = summary[f"{name}{suffix}"]
            out[f"{key}/n_missing"] = float(len(pairs) - len(kept))
            skipped = summary["boot_skipped"]
        out["boot_skipped"] = skipped
        # Headline first (CLI summaries show the first few): accuracy, then each AUROC.
        head = [k for k in ("accuracy",) if k in out] + [f"{k}/auroc" for k in score_keys]
        return {k: out[k] for k in head} | {k: v for k, v in out.items() if k not in head}

    return compute
