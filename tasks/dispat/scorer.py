"""Per-row score dicts and the leaderboard metric (datasets x methods, mean and interval over seeds).

Each sample's ``Score.value`` is ``{method: anomaly score}`` for the methods that succeeded on its
(dataset, seed) split; failures are listed with their reason in ``Score.metadata["errors"]``.

The :func:`leaderboard` metric returns one flat dict (inspect stores each entry as a metric):

- ``{dataset}/{method}/{m}`` for ``m`` in auroc, aupr, f1: mean over the seeds that succeeded;
  ``{...}/{m}_lo``, ``{...}/{m}_hi``: two-sided 95% Student-t interval over seeds (absent with
  one seed); ``{dataset}/{method}/n_seeds`` (succeeded), ``/n_failed`` (failed seeds),
  ``/fit_s`` (mean fit seconds per seed), ``/rows_per_s`` (test rows scored per second);
- ``{method}/{m}``: the mean over datasets of the per-dataset means (datasets where the method
  failed on every seed are left out and counted in ``{method}/n_datasets_failed``);
  ``{method}/n_datasets``.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from typing import cast

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from methods.dispat import F1Threshold, f1_at_contamination, seed_summary
from scorers.stats import MetricUndefined, aupr, auroc

METRICS = ("auroc", "aupr", "f1")
STATE_KEY = "dispat"


def per_split_metrics(
    labels: np.ndarray, scores: np.ndarray, f1_threshold: F1Threshold = "percentile"
) -> dict[str, float]:
    """AUROC, AUPR and F1 at the contamination threshold (``f1_threshold``: PyOD's percentile
    rule or top-k, see :func:`methods.dispat.f1_at_contamination`) of one split."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MetricUndefined)
        return {
            "auroc": auroc(labels, scores, warn=False),
            "aupr": aupr(labels, scores, warn=False),
            "f1": f1_at_contamination(labels, scores, threshold=f1_threshold)
            if 0 < labels.sum() < len(labels)
            else math.nan,
        }


def leaderboard_table(
    sample_scores: list[SampleScore], f1_threshold: F1Threshold = "percentile"
) -> dict[str, float]:
    """The leaderboard from per-row scores; pure so it can be tested without an eval."""
    rows: dict[tuple[str, int], list[tuple[int, dict, dict]]] = defaultdict(list)
    methods: list[str] = []
    for ss in sample_scores:
        md = ss.score.metadata or {}
        values = cast(dict, ss.score.value or {})  # anomaly_scores: {method: score}
        rows[(md["dataset"], md["seed"])].append((int(md["label"]), values, md))
        for m in [*values, *md.get("errors", {})]:
            if m not in methods:
                methods.append(m)
    per: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    failed: dict[tuple[str, str], int] = defaultdict(int)
    for (ds, _seed), items in rows.items():
        labels = np.array([lab for lab, _, _ in items])
        for m in methods:
            if any(m not in v for _, v, _ in items):
                failed[(ds, m)] += 1
                continue
            vals = per_split_metrics(
                labels, np.array([float(v[m]) for _, v, _ in items]), f1_threshold
            )
            timing = items[0][2].get("timing", {}).get(m, {})
            for k, x in vals.items():
                per[(ds, m)][k].append(x)
            per[(ds, m)]["fit_s"].append(float(timing.get("fit_s", math.nan)))
            per[(ds, m)]["rows_per_s"].append(float(timing.get("rows_per_s", math.nan)))
    out: dict[str, float] = {}
    datasets = list(dict.fromkeys(ds for ds, _ in rows))
    for m in methods:
        means: dict[str, list[float]] = defaultdict(list)
        n_ds = n_ds_failed = 0
        for ds in datasets:
            cell = per.get((ds, m))
            prefix = f"{ds}/{m}"
            out[f"{prefix}/n_failed"] = float(failed.get((ds, m), 0))
            if not cell:
                n_ds_failed += 1
                out[f"{prefix}/n_seeds"] = 0.0
                continue
            n_ds += 1
            for k in METRICS:
                finite = [x for x in cell[k] if math.isfinite(x)]
                s = seed_summary(finite)
                out[f"{prefix}/{k}"] = s.mean
                if s.n > 1:
                    out[f"{prefix}/{k}_lo"], out[f"{prefix}/{k}_hi"] = s.low, s.high
                if finite:
                    means[k].append(s.mean)
            out[f"{prefix}/n_seeds"] = float(len(cell["auroc"]))
            out[f"{prefix}/fit_s"] = float(np.nanmean(cell["fit_s"])) if cell["fit_s"] else math.nan
            out[f"{prefix}/rows_per_s"] = (
                float(np.nanmean(cell["rows_per_s"])) if cell["rows_per_s"] else math.nan
            )
        for k in METRICS:
            out[f"{m}/{k}"] = float(np.mean(means[k])) if means[k] else math.nan
        out[f"{m}/n_datasets"] = float(n_ds)
        out[f"{m}/n_datasets_failed"] = float(n_ds_failed)
    return out


@metric
def leaderboard(f1_threshold: F1Threshold = "percentile") -> Metric:
    """Datasets x methods: AUROC/AUPR/F1 mean and t-interval over seeds, plus per-method means."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return leaderboard_table(scores, f1_threshold)

    return compute


@scorer(metrics=[])  # the task passes leaderboard(f1_threshold=...) as its metric
def anomaly_scores() -> Scorer:
    """Copies the cached detector scores of this row into the Score (no model judgement)."""

    async def score(state: TaskState, target: Target) -> Score:
        result = state.metadata.get(STATE_KEY)
        if result is None:
            raise RuntimeError("dispat scorer: the detector solver did not run for this sample")
        md = state.metadata
        return Score(
            value=result["scores"],
            answer=target.text,
            explanation="; ".join(f"{m}: {e}" for m, e in result["errors"].items()) or None,
            metadata={
                "dataset": md["dataset"],
                "seed": md["seed"],
                "label": md["label"],
                "row": md["row"],
                "errors": result["errors"],
                "timing": result["timing"],
                **({"diagnostics": result["diagnostics"]} if result.get("diagnostics") else {}),
            },
        )

    return score
