"""Sequence-level hallucination detectors with the scikit-learn / PyOD interface.

``score_samples`` follows scikit-learn: higher = more normal (= more confident, the paper's S);
``decision_function`` follows PyOD: higher = more anomalous (= more likely hallucinated), i.e.
``-score_samples``. All detectors here are training-free: ``fit`` only takes the LM head.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from methods.ood._aggregate import Aggregation, aggregate
from methods.ood._head import LMHead
from methods.ood._token_scores import (
    fdbd_boundary_distances,
    fdbd_token_scores,
    log_prob_token_scores,
    max_prob_token_scores,
    nci_token_scores,
    neg_energy_token_scores,
    neg_entropy_token_scores,
)
from methods.ood._trace import TokenTrace

__all__ = [
    "DEFAULT_DETECTORS",
    "HallucinationDetector",
    "make_detector",
    "prefetch_top",
    "score_all",
]

TokenScoreFn = Callable[[TokenTrace, LMHead], np.ndarray]

_BASE: dict[str, TokenScoreFn] = {
    "nci": nci_token_scores,
    "perplexity": log_prob_token_scores,
    "msp": max_prob_token_scores,
    "entropy": neg_entropy_token_scores,
    "energy": neg_energy_token_scores,
}

#: The paper's two methods (fDBD at the paper's k grid) and the four single-sample baselines.
DEFAULT_DETECTORS: tuple[str, ...] = (
    "nci",
    "fdbd@1",
    "fdbd@100",
    "fdbd@1000",
    "perplexity",
    "msp",
    "entropy",
    "energy",
)


@dataclass
class HallucinationDetector:
    """One per-token score pooled over the answer. Build with :func:`make_detector`."""

    name: str
    token_score: TokenScoreFn
    aggregation: Aggregation = "mean"
    last_k: int = 8
    head: LMHead | None = field(default=None, repr=False)
    #: top-k logit tokens this detector reads (fDBD; -1 = all V − 1), for a shared prefetch
    top_k: int = 0
    #: the score's family ("fdbd" for every fdbd@k): detectors of one family share a prefetch
    family: str = ""

    def fit(self, head: LMHead | Any, y: Any = None) -> HallucinationDetector:  # noqa: ARG002
        """Training-free: only the head (an :class:`LMHead` or a WhiteBoxLM) is needed."""
        self.head = head if isinstance(head, LMHead) else LMHead.from_whitebox(head)
        return self

    def token_scores(self, trace: TokenTrace) -> np.ndarray:
        if self.head is None:
            raise RuntimeError(f"detector {self.name!r} is not fitted: call fit(head) first")
        return self.token_score(trace, self.head)

    def score_one(self, trace: TokenTrace) -> float:
        return aggregate(self.token_scores(trace), self.aggregation, self.last_k)

    def score_samples(self, traces: Iterable[TokenTrace]) -> np.ndarray:
        """Confidence per answer (higher = less likely hallucinated)."""
        return np.array([self.score_one(t) for t in traces], dtype=np.float64)

    def decision_function(self, traces: Iterable[TokenTrace]) -> np.ndarray:
        """Hallucination score per answer (higher = more likely hallucinated)."""
        return -self.score_samples(traces)


_SPEC = re.compile(r"^(?P<base>[a-z_]+)(?:@(?P<k>\d+|all))?$")


def make_detector(
    spec: str, aggregation: Aggregation = "mean", last_k: int = 8
) -> HallucinationDetector:
    """``nci``, ``fdbd@<k>`` / ``fdbd@all``, ``perplexity``, ``msp``, ``entropy``, ``energy``."""
    m = _SPEC.match(spec.strip())
    if not m:
        raise ValueError(f"bad detector spec {spec!r}; expected e.g. 'nci' or 'fdbd@1000'")
    base, k = m["base"], m["k"]
    if base == "fdbd":
        k_val = None if k in (None, "all") else int(k)
        if k is None:
            raise ValueError("fdbd needs k: write 'fdbd@<k>' (e.g. fdbd@1000) or 'fdbd@all'")

        def fn(trace: TokenTrace, head: LMHead, _k: int | None = k_val) -> np.ndarray:
            return fdbd_token_scores(trace, head, k=_k)

        return HallucinationDetector(
            spec, fn, aggregation, last_k, top_k=-1 if k_val is None else k_val, family="fdbd"
        )
    if base not in _BASE or k is not None:
        known = ", ".join([*sorted(_BASE), "fdbd@<k>"])
        raise ValueError(f"unknown detector {spec!r}; known: {known}")
    return HallucinationDetector(spec, _BASE[base], aggregation, last_k, family=base)


def prefetch_top(detectors: Iterable[HallucinationDetector], trace: TokenTrace) -> None:
    """Sort each token's top-k candidates once, at the largest k any detector needs, and compute
    fDBD's boundary distances once per head at the largest fDBD k (smaller k are slices)."""
    dets = [d for d in detectors if d.top_k]
    if not dets or not trace.length:
        return
    v = trace.logits.shape[1]
    width = lambda d: v - 1 if d.top_k == -1 else min(d.top_k, v - 1)  # noqa: E731
    trace.top_excluding_argmax(max(width(d) for d in dets))
    fdbd = [d for d in dets if d.family == "fdbd" and d.head is not None]
    for head in {id(d.head): d.head for d in fdbd}.values():
        k = max(width(d) for d in fdbd if d.head is head)
        fdbd_boundary_distances(trace, head, k)  # type: ignore[arg-type]


def score_all(detectors: Iterable[HallucinationDetector], trace: TokenTrace) -> dict[str, float]:
    """Every detector's confidence for one answer (name → score_samples value)."""
    dets = list(detectors)
    prefetch_top(dets, trace)
    return {d.name: d.score_one(trace) for d in dets}
