"""Verification metrics: ViVerBench judgment accuracy, localisation, reward statistics, TTS.

Definitions (OmniVerifier-M1, ICML 2026; ViVerBench's rule-based script):

- **Judgment accuracy, macro**: accuracy per subtask, then the unweighted mean over subtasks
  (ViVerBench's 16 tasks; the script's macro mean, not the prose's pooled mean). **Micro**: the
  pooled share of correct judgments.
- **Localisation success**: share of y = False samples whose meta reward is 1 (IoU ≥ 0.6, or
  the point inside the box); a sample without a usable predicted box counts as a miss.
- **Grounding signal** on y = False samples: joint ``G = R_acc · R_meta`` (eq. 5: the meta
  reward reaches training only through a right judgment), decoupled ``G = R_meta`` (the
  duplicated grounding stream). With ``p = mean(R_acc)``:
  Thm 5.3 ``Var(G_joint) = p·Var(G_dec) + p(1−p)·‖E G_dec‖²`` when R_acc is independent of
  G_dec; Cor 5.4 ``SNR_joint ≤ p·SNR_dec`` with ``SNR = ‖E G‖² / Var(G)`` (population
  variances; vectors use the trace). ``thm53`` reports both sides on the observed paired streams
  and the exact remainder from their dependence; ``thm53_independent`` evaluates both sides on
  the product of the two empirical distributions (every R_acc with every G_dec), where the
  identity must hold to rounding.
- **TTS**: success = the final scene truly satisfies the prompt (checked against the scene
  specification, never by the loop's verifier); the verifier inside the loop is scored as a
  detector of wrong scenes: precision = TP / (TP + FP), recall = TP / (TP + FN), where positive =
  "the verifier says False" and truth = the exact check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, Value, metric

__all__ = [
    "Thm53",
    "macro_accuracy",
    "micro_accuracy",
    "precision_recall",
    "snr",
    "thm53",
    "thm53_independent",
    "tts_metrics",
    "verification_metrics",
]


def macro_accuracy(
    correct: Sequence[float], groups: Sequence[str]
) -> tuple[float, dict[str, float]]:
    """Unweighted mean over groups of each group's accuracy, and the per-group accuracies."""
    if len(correct) != len(groups):
        raise ValueError(f"{len(correct)} outcomes but {len(groups)} group labels")
    per: dict[str, list[float]] = {}
    for c, g in zip(correct, groups, strict=True):
        per.setdefault(str(g), []).append(float(c))
    accs = {g: float(np.mean(v)) for g, v in sorted(per.items())}
    return (float(np.mean(list(accs.values()))) if accs else math.nan), accs


def micro_accuracy(correct: Sequence[float]) -> float:
    """Pooled share of correct judgments (nan with none)."""
    return float(np.mean(correct)) if len(correct) else math.nan


def _as_2d(g: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(g, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected (n,) or (n, d) values, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: non-finite values")
    return arr


def _total_var(x: np.ndarray) -> float:
    return float(((x - x.mean(axis=0)) ** 2).sum(axis=1).mean()) if len(x) else math.nan


def snr(g: Sequence[float] | np.ndarray) -> float:
    """‖E G‖² / Var(G) (trace of the population covariance); inf when Var = 0 < ‖E G‖²."""
    x = _as_2d(g, "g")
    if len(x) == 0:
        return math.nan
    signal = float((x.mean(axis=0) ** 2).sum())
    var = _total_var(x)
    if var == 0:
        return math.inf if signal > 0 else math.nan
    return signal / var


class Thm53(NamedTuple):
    """Both sides of Thm 5.3 on one pair of streams, and what separates them."""

    p_acc: float
    var_joint: float  # left side: Var(R_acc · G_dec)
    rhs: float  # p·Var(G_dec) + p(1−p)·‖E G_dec‖²
    dependence: float  # var_joint − rhs: zero when R_acc ⟂ G_dec
    snr_joint: float
    snr_dec: float
    n: int


def _thm53_parts(a: np.ndarray, g: np.ndarray) -> tuple[float, float, float, float, float]:
    p = float(a.mean())
    joint = a[:, None] * g
    var_joint = _total_var(joint)
    var_dec = _total_var(g)
    mean_sq = float((g.mean(axis=0) ** 2).sum())
    rhs = p * var_dec + p * (1 - p) * mean_sq
    return p, var_joint, rhs, snr(joint), snr(g)


def _check_acc(r_acc: Sequence[float] | np.ndarray) -> np.ndarray:
    a = np.asarray(r_acc, dtype=float).reshape(-1)
    if not np.isin(a, (0.0, 1.0)).all():
        raise ValueError("r_acc must be 0/1 per sample")
    return a


def thm53(r_acc: Sequence[float] | np.ndarray, g_dec: Sequence[float] | np.ndarray) -> Thm53:
    """Thm 5.3's two sides on paired per-sample streams (G_joint = R_acc · G_dec).

    The exact decomposition of the left side is ``p·E‖G‖² + Cov(A, ‖G‖²) − ‖p·E G + Cov(A, G)‖²``,
    so ``dependence`` is zero when the covariances are (R_acc independent of G_dec).
    """
    a = _check_acc(r_acc)
    g = _as_2d(g_dec, "g_dec")
    if len(a) != len(g):
        raise ValueError(f"r_acc has {len(a)} samples, g_dec {len(g)}")
    if len(a) == 0:
        return Thm53(math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, 0)
    p, var_joint, rhs, snr_j, snr_d = _thm53_parts(a, g)
    return Thm53(p, var_joint, rhs, var_joint - rhs, snr_j, snr_d, len(a))


def thm53_independent(
    r_acc: Sequence[float] | np.ndarray, g_dec: Sequence[float] | np.ndarray
) -> Thm53:
    """Thm 5.3 on the product distribution of the two streams (R_acc ⟂ G_dec by construction).

    Every accuracy outcome is paired with every grounding value (n_a × n_g pairs, weighted
    equally), so the identity holds exactly; ``dependence`` is the rounding error.
    """
    a = _check_acc(r_acc)
    g = _as_2d(g_dec, "g_dec")
    if len(a) == 0 or len(g) == 0:
        return Thm53(math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, 0)
    pairs_a = np.repeat(a, len(g))
    pairs_g = np.tile(g, (len(a), 1))
    p, var_joint, rhs, snr_j, snr_d = _thm53_parts(pairs_a, pairs_g)
    return Thm53(p, var_joint, rhs, var_joint - rhs, snr_j, snr_d, len(pairs_a))


def precision_recall(tp: float, fp: float, fn: float) -> tuple[float, float]:
    """(precision, recall); nan where the denominator is zero."""
    precision = tp / (tp + fp) if tp + fp > 0 else math.nan
    recall = tp / (tp + fn) if tp + fn > 0 else math.nan
    return precision, recall


def _values(scores: list[SampleScore], name: str) -> list[Mapping[str, Any]]:
    out = []
    for s in scores:
        v = s.score.value
        if not isinstance(v, Mapping):
            raise ValueError(f"{name} expects dict score values; sample {s.sample_id} has {v!r}")
        out.append(v)
    return out


@metric
def verification_metrics() -> Metric:
    """Per-sample dicts → macro/micro judgment accuracy, per-subtask accuracy, localisation,
    format rate, reward means under both compositions, and the grounding-signal statistics.

    Per-sample keys read: ``judgment`` (R_acc), ``format`` (R_f), ``label`` (1 = consistent),
    ``localised`` (R_meta, y = False only), ``iou``, ``joint``, ``decoupled_sum`` and
    ``decoupled_n`` (sum and count of the sample's decoupled-stream rewards); the subtask
    comes from the sample metadata ``subtask``.
    """

    def compute(scores: list[SampleScore]) -> Value:
        values = _values(scores, "verification_metrics")
        if not values:
            return {"macro_accuracy": math.nan, "micro_accuracy": math.nan}
        judgment = [float(v["judgment"]) for v in values]
        groups = [str((s.sample_metadata or {}).get("subtask", "all")) for s in scores]
        macro, per = macro_accuracy(judgment, groups)
        # y = False samples with an annotated error box (ViVerBench records have none).
        false = [
            v for v in values if float(v["label"]) == 0.0 and float(v.get("has_gold_box", 1.0))
        ]
        out: dict[str, float] = {
            "macro_accuracy": macro,
            "micro_accuracy": micro_accuracy(judgment),
            "format": float(np.mean([float(v["format"]) for v in values])),
            "localisation": float(np.mean([float(v["localised"]) for v in false]))
            if false
            else math.nan,
            "mean_iou": float(np.mean([float(v["iou"]) for v in false])) if false else math.nan,
            "joint_reward": float(np.mean([float(v["joint"]) for v in values])),
            # The decoupled batch is 1.5·B long: its mean is over streams, not samples.
            "decoupled_reward": float(
                sum(float(v["decoupled_sum"]) for v in values)
                / sum(float(v["decoupled_n"]) for v in values)
            ),
            "n_subtasks": float(len(per)),
        }
        for g, acc in per.items():
            out[f"accuracy/{g}"] = acc
        if false:
            stats = thm53(
                [float(v["judgment"]) for v in false], [float(v["localised"]) for v in false]
            )
            out.update(
                {
                    "p_acc_false": stats.p_acc,
                    "grounding_var_joint": stats.var_joint,
                    "grounding_thm53_rhs": stats.rhs,
                    "grounding_snr_joint": stats.snr_joint,
                    "grounding_snr_decoupled": stats.snr_dec,
                }
            )
        return out

    return compute


@metric
def tts_metrics() -> Metric:
    """Per-sample TTS dicts → success of M1-TTS and best-of-N, rounds, verifier precision/recall.

    Per-sample keys read: ``tts_success``, ``bon_success``, ``tts_rounds``, ``tts_calls``,
    ``bon_calls``, ``verifier_tp``/``fp``/``fn``/``tn`` (pooled over every verifier call of both
    loops on the sample).
    """

    def compute(scores: list[SampleScore]) -> Value:
        values = _values(scores, "tts_metrics")
        if not values:
            return {"tts_success": math.nan}

        def mean(key: str) -> float:
            return float(np.mean([float(v[key]) for v in values]))

        tp, fp, fn, tn = (
            sum(float(v[f"verifier_{k}"]) for v in values) for k in ("tp", "fp", "fn", "tn")
        )
        precision, recall = precision_recall(tp, fp, fn)
        return {
            "tts_success": mean("tts_success"),
            "bon_success": mean("bon_success"),
            "tts_gain": mean("tts_success") - mean("bon_success"),
            "initial_success": mean("initial_success"),
            "tts_rounds": mean("tts_rounds"),
            "tts_calls": mean("tts_calls"),
            "bon_calls": mean("bon_calls"),
            "verifier_precision": precision,
            "verifier_recall": recall,
            "verifier_accuracy": (tp + tn) / (tp + fp + fn + tn) if tp + fp + fn + tn else math.nan,
        }

    return compute
