"""LLM tabular anomaly detection: AnoLLM, DiSPaT (f-divergence self-play) and PyOD baselines.

Every detector has ``fit(X_normal)`` and ``score_samples(X)`` with **higher = more anomalous**.
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
from methods.dispat._dispat import DiSPaTConfig, DiSPaTDetector
from methods.dispat._fdiv import F_DIVERGENCES, FDivergence, get_f_divergence
from methods.dispat._lm import LMFactory, encode_rows, score_encoded
from methods.dispat._metrics import SeedSummary, f1_at_contamination, seed_summary
from methods.dispat._serialize import BINNINGS, SerializedRow, TabularSerializer, letter_columns

LLM_METHODS: tuple[str, ...] = ("AnoLLM", "DiSPaT")

__all__ = [
    "AnoLLMDetector",
    "AnomalyDetector",
    "BINNINGS",
    "DiSPaTConfig",
    "DiSPaTDetector",
    "FDivergence",
    "F_DIVERGENCES",
    "FitReport",
    "LLM_METHODS",
    "LMDetectorConfig",
    "LMFactory",
    "NONFINITE_POLICIES",
    "NonFinitePolicy",
    "NonFiniteScoresError",
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
]
