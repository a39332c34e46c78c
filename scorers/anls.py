"""ANLS: Average Normalized Levenshtein Similarity (DocVQA / ST-VQA).

Standard definition (Biten et al., "Scene Text Visual Question Answering", ICCV 2019, §4; the
DocVQA evaluation): for question i with reference answers a_ij and prediction o_i,

    s(a, o) = 1 - NL(a, o)   if NL(a, o) < τ   else 0,     NL = Lev(a, o) / max(|a|, |o|)
    ANLS    = mean_i max_j s(a_ij, o_i),                    τ = 0.5

on lower-cased strings with leading/trailing white space removed and inner runs of white space
collapsed to one space (as the `anls` PyPI package does). Two empty strings have NL = 0.

``variant="docval_repo"`` is the DocVAL repository's answer score (its
``AnswerValidatorModule._compute_anls``): ``1 - Lev/max_len`` on lower-cased, stripped text,
**no τ cut-off** and against **one** reference (the first). It is offered only as a named option.

Levenshtein distances come from RapidFuzz (C++), which makes this faster than the pure-Python
`anls` package (``bench/bench_anls.py`` prints the ratio); tests check equality with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from rapidfuzz.distance import Levenshtein

__all__ = [
    "ANLS_THRESHOLD",
    "AnlsVariant",
    "anls",
    "anls_score",
    "normalize_answer",
    "normalized_levenshtein",
]

ANLS_THRESHOLD = 0.5
AnlsVariant = Literal["standard", "docval_repo"]


def normalize_answer(text: str) -> str:
    """Lower-case, strip, collapse inner white space (the standard ANLS normalisation)."""
    return " ".join(text.lower().split())


def normalized_levenshtein(a: str, b: str) -> float:
    """Lev(a, b) / max(|a|, |b|) on the strings as given (0 for two empty strings)."""
    longest = max(len(a), len(b))
    if longest == 0:
        return 0.0
    return Levenshtein.distance(a, b) / longest


def _check_references(references: Sequence[str] | str) -> list[str]:
    if isinstance(references, str):
        return [references]
    refs = list(references)
    if not refs:
        raise ValueError("ANLS needs at least one reference answer; got none")
    for i, ref in enumerate(refs):
        if not isinstance(ref, str):
            raise TypeError(f"reference answer {i} is {type(ref).__name__}, not str: {ref!r}")
    return refs


def anls_score(
    prediction: str | None,
    references: Sequence[str] | str,
    *,
    threshold: float = ANLS_THRESHOLD,
    variant: AnlsVariant = "standard",
) -> float:
    """ANLS of one prediction against its reference answers (a missing prediction scores as "")."""
    refs = _check_references(references)
    pred = prediction if isinstance(prediction, str) else ""
    if variant == "docval_repo":
        p, g = pred.lower().strip(), refs[0].lower().strip()
        return 1.0 - normalized_levenshtein(p, g)
    if variant != "standard":
        raise ValueError(f"unknown ANLS variant {variant!r}; expected 'standard' or 'docval_repo'")
    p = normalize_answer(pred)
    best = 0.0
    for ref in refs:
        nl = normalized_levenshtein(p, normalize_answer(ref))
        if nl < threshold:
            best = max(best, 1.0 - nl)
            if best == 1.0:
                break
    return best


def anls(
    predictions: Sequence[str | None],
    references: Sequence[Sequence[str] | str],
    *,
    threshold: float = ANLS_THRESHOLD,
    variant: AnlsVariant = "standard",
) -> float:
    """Mean ANLS over questions (nan for no questions)."""
    if len(predictions) != len(references):
        raise ValueError(
            f"{len(predictions)} predictions but {len(references)} reference lists; "
            "they must pair one to one"
        )
    if not predictions:
        return math.nan
    total = 0.0
    for pred, refs in zip(predictions, references, strict=True):
        total += anls_score(pred, refs, threshold=threshold, variant=variant)
    return total / len(predictions)
