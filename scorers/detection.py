"""Detection metrics as an inspect ``@metric``: AUROC, AUPR and FPR@95 with bootstrap intervals
per detector, over per-sample score dicts.

The numbers come from :mod:`scorers.stats` (the pure statistics core: scikit-learn-exact AUROC
and average precision, FPR@TPR over every distinct threshold, percentile bootstrap), the same
functions the report's cells use; conventions (labels, score direction, undefined cases, the
FPR@95 source) are documented there.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, Value, metric

from scorers.stats import MetricUndefined, detection_summary, sample_order_key

__all__ = ["detection_metrics"]


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
    ``boot_skipped`` and, when ``accuracy_key`` is given, ``accuracy`` (its mean). Samples are
    taken in :func:`~scorers.stats.sample_order_key` order of their ids (not the order they
    finished), as the report does, so its cells reproduce these intervals.
    """

    def compute(scores: list[SampleScore]) -> Value:
        scores = sorted(scores, key=lambda s: sample_order_key(s.sample_id))
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
