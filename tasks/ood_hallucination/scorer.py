"""Scorer: is the final answer right, and every detector's hallucination score for the sample."""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from scorers.detection import detection_metrics
from tasks.ood_hallucination.answers import answers_match, extract_choice, extract_number
from tasks.ood_hallucination.solver import OOD_KEY

__all__ = ["detector_metrics", "hallucination_detection"]


def detector_metrics(detector_names: list[str], n_boot: int, seed: int) -> list[Any]:
    """AUROC/AUPR/FPR@95 (+ bootstrap bounds) per detector and the model's accuracy."""
    return [
        detection_metrics(
            detector_names,
            label_key="hallucinated",
            accuracy_key="correct",
            n_boot=n_boot,
            seed=seed,
        )
    ]


@scorer(metrics=[])  # metrics are given per task (they depend on the detector list)
def hallucination_detection(detector_names: list[str]) -> Scorer:
    """Score value: ``correct`` (0/1), ``hallucinated`` (1 − correct, the positive class) and, per
    detector, its hallucination score = −confidence (higher = more likely hallucinated), or NaN
    when the detector could not score the answer (the reason is in the explanation). NaN, not
    None: inspect's epoch reducer turns None into 0.0 but keeps NaN as "no value"."""

    async def score(state: TaskState, target: Target) -> Score:
        answer_type = state.metadata.get("answer_type")
        if answer_type not in ("number", "choice"):
            raise ValueError(
                f"sample {state.sample_id}: metadata answer_type must be 'number' or "
                f"'choice'; got {answer_type!r}"
            )
        output = state.output.completion if state.output else ""
        extracted = (extract_number if answer_type == "number" else extract_choice)(output)
        correct = answers_match(extracted.value, target.text, answer_type)
        ood = state.metadata.get(OOD_KEY)
        if not isinstance(ood, dict):
            raise RuntimeError(
                f"sample {state.sample_id}: the white-box solver left no detector "
                f"results (state.metadata[{OOD_KEY!r}] missing)"
            )
        conf = ood.get("confidence", {})
        value: dict[str, float] = {"correct": float(correct), "hallucinated": float(not correct)}
        for name in detector_names:
            c = conf.get(name)
            value[name] = float("nan") if c is None else -float(c)
        how = extracted.how if extracted.value is not None else f"{extracted.how} (counted wrong)"
        explanation = f"extracted {extracted.value!r} via {how}; target {target.text!r}"
        if ood.get("error"):
            explanation += f"; detectors not scored: {ood['error']}"
        return Score(
            value=value,
            answer=extracted.value,
            explanation=explanation,
            metadata={
                "extraction": extracted.how,
                "n_tokens": ood.get("n_tokens"),
                "finish_reason": ood.get("finish_reason"),
                "confidence": conf,
            },
        )

    return score
