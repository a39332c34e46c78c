"""OOD-style hallucination detection on the LM head (NCI, fDBD) and its single-sample baselines.

From "From Out-of-Distribution Detection to Hallucination Detection: A Geometric View" (ICML 2026):
next-token prediction is a classification by the LM head ``W z + b``; OOD scores computed on it per
generated token and averaged over the answer flag hallucinations. Plain numpy; no inspect.
"""

from methods.ood._aggregate import Aggregation, aggregate
from methods.ood._detector import (
    DEFAULT_DETECTORS,
    HallucinationDetector,
    make_detector,
    prefetch_top,
    score_all,
)
from methods.ood._greybox import GREYBOX_DETECTORS, greybox_scores, greybox_token_scores
from methods.ood._head import LMHead, decision_neutral_point
from methods.ood._token_scores import (
    fdbd_boundary_distances,
    fdbd_token_scores,
    log_prob_token_scores,
    logsumexp_rows,
    max_prob_token_scores,
    nci_token_scores,
    neg_energy_token_scores,
    neg_entropy_token_scores,
)
from methods.ood._trace import TokenTrace

__all__ = [
    "Aggregation",
    "DEFAULT_DETECTORS",
    "GREYBOX_DETECTORS",
    "HallucinationDetector",
    "LMHead",
    "TokenTrace",
    "aggregate",
    "decision_neutral_point",
    "fdbd_boundary_distances",
    "fdbd_token_scores",
    "greybox_scores",
    "greybox_token_scores",
    "log_prob_token_scores",
    "logsumexp_rows",
    "make_detector",
    "max_prob_token_scores",
    "nci_token_scores",
    "neg_energy_token_scores",
    "neg_entropy_token_scores",
    "prefetch_top",
    "score_all",
]
