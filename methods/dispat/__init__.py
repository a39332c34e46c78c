"""LLM tabular anomaly detection: AnoLLM, DiSPaT (f-divergence self-play) and PyOD baselines.

Every detector has ``fit(X_normal)`` and ``decision_function(X)`` with **higher = more anomalous**
(PyOD's convention, as in ``methods.ood``).
"""

from methods.dispat._anollm import AnoLLMDetector, FitReport, LMDetectorConfig, WarmStart
from methods.dispat._baselines import PYOD_DETECTORS, PyODDetector
from methods.dispat._detector import (
    NONFINITE_POLICIES,
    AnomalyDetector,
    NonFinitePolicy,
    NonFiniteScoresError,
    apply_nonfinite_policy,
)
from methods.dispat._dispat import (
    OBJECTIVES,
    DiSPaTConfig,
    DiSPaTDetector,
    Objective,
    spin_objective,
)
from methods.dispat._fdiv import F_DIVERGENCES, FDivergence, get_f_divergence
from methods.dispat._lm import LMFactory, encode_rows, score_encoded
from methods.dispat._metrics import (
    F1_THRESHOLDS,
    F1Threshold,
    SeedSummary,
    f1_at_contamination,
    seed_summary,
)
from methods.dispat._serialize import BINNINGS, SerializedRow, TabularSerializer, letter_columns

LLM_METHODS: tuple[str, ...] = ("AnoLLM", "DiSPaT")

__all__ = [
    "AnoLLMDetector",
    "AnomalyDetector",
    "BINNINGS",
    "DiSPaTConfig",
    "DiSPaTDetector",
    "F1Threshold",
    "F1_THRESHOLDS",
    "FDivergence",
    "F_DIVERGENCES",
    "FitReport",
    "LLM_METHODS",
    "LMDetectorConfig",
    "LMFactory",
    "NONFINITE_POLICIES",
    "NonFinitePolicy",
    "NonFiniteScoresError",
    "OBJECTIVES",
    "Objective",
    "PYOD_DETECTORS",
    "PyODDetector",
    "SeedSummary",
    "SerializedRow",
    "TabularSerializer",
    "WarmStart",
    "apply_nonfinite_policy",
    "encode_rows",
    "f1_at_contamination",
    "get_f_divergence",
    "letter_columns",
    "score_encoded",
    "seed_summary",
    "spin_objective",
]
