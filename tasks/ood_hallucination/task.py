"""ood_hallucination: NCI / fDBD hallucination detectors on the LM head, scored by AUROC.

Paper: "From Out-of-Distribution Detection to Hallucination Detection: A Geometric View"
(ICML 2026). One sample = one question; the model answers greedily through the white-box handle,
every detector scores the answer's tokens, and the answer's correctness is the label
(hallucinated = wrong final answer). One log holds every detector's score per sample.
"""

from __future__ import annotations

from typing import Literal

from inspect_ai import Task, task

from harness.records import task_metadata
from methods.ood import DEFAULT_DETECTORS, GREYBOX_DETECTORS, Aggregation, make_detector
from tasks.ood_hallucination.dataset import PromptStyle, load_dataset
from tasks.ood_hallucination.scorer import detector_metrics, hallucination_detection
from tasks.ood_hallucination.solver import FeatureMode, whitebox_answer

__all__ = ["RUN_ALL_ARGS", "TASK_VERSION", "ood_hallucination"]

TASK_VERSION = "1.0.0"

DatasetName = Literal["generated", "gsm8k", "csqa", "aqua"]  # = dataset.DATASETS (tested)

#: `make run`: 24 generated questions (short answers) on the embedded model, ≈ 1–2 min on CPU.
RUN_ALL_ARGS: dict = {"limit": 24, "n_boot": 200}

_DEFAULT_MAX_TOKENS = {"generated": 64, "gsm8k": 256, "csqa": 256, "aqua": 256}


@task
def ood_hallucination(
    dataset: DatasetName = "generated",
    n_generated: int = 500,
    seed: int = 0,
    detectors: str = ",".join(DEFAULT_DETECTORS),
    aggregation: Aggregation = "mean",
    last_k: int = 8,
    max_new_tokens: int | None = None,
    prompt_style: PromptStyle | None = None,
    features: FeatureMode = "generate",
    data_file: str | None = None,
    n_boot: int = 1000,
    system_prompt: str | None = None,
    batch_size: int = 8,
    top_logprobs: int = 20,
) -> Task:
    """NCI / fDBD hallucination detectors on the LM head (and baselines), scored by AUROC.

    Args:
    dataset: ``generated`` (seeded one-digit products + one-step word problems, the default),
        ``gsm8k`` (hub openai/gsm8k at a pinned commit, offline HARNESS_DATA_DIR/gsm8k/test.jsonl),
        ``csqa`` or ``aqua`` (``harness data list`` shows where each is found).
    n_generated: questions the generator makes (use ``limit`` to run fewer).
    seed: generator seed (also the bootstrap seed).
    detectors: comma-separated detector specs: nci, fdbd@<k>|fdbd@all, perplexity, msp,
        entropy, energy.
    aggregation: token pooling: ``mean`` (paper), ``min`` or ``last_k``.
    last_k: tokens pooled by ``last_k``.
    max_new_tokens: generation cap (default 64 for generated questions, 256 otherwise).
    prompt_style: ``cot`` (paper; default for gsm8k/csqa/aqua) or ``short`` (default for the
        generated set, where SmolLM2's CoT is weaker than its short answer).
    features: ``generate`` (paper: features recorded during white-box generation) or
        ``teacher_forced`` (answer from the model under test via inspect, features re-read by
        the white-box copy; for served models) or ``greybox`` (no weights: perplexity, MSP
        and truncated entropy from the top-k logprobs the model under test returns).
    data_file: read csqa/aqua/gsm8k from this local file (JSON lines, JSON, Parquet) or hub
        dataset (``hf://owner/name@revision``) instead of the default: the pinned hub dataset
        (HF cache, download, or its ``harness data pull`` copy), else HARNESS_DATA_DIR offline.
    n_boot: bootstrap resamples for the metric intervals.
    system_prompt: system turn (default: the chat template's own).
    batch_size: concurrent samples generated together by the white-box handle (left padding;
        1 = one prompt at a time, features free of padding effects).
    top_logprobs: k of the top-k logprobs requested with ``features=greybox``.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be ≥ 1; got {batch_size}")
    specs = [s.strip() for s in detectors.split(",") if s.strip()]
    if features == "greybox":
        if detectors == ",".join(DEFAULT_DETECTORS):
            specs = list(GREYBOX_DETECTORS)
        elif not set(specs) <= set(GREYBOX_DETECTORS):
            raise ValueError(
                f"features=greybox supports only {', '.join(GREYBOX_DETECTORS)}; got {specs}"
            )
    if not specs:
        raise ValueError("detectors is empty")
    if len(set(specs)) != len(specs):
        raise ValueError(f"detectors has duplicates: {specs}")
    dets = [make_detector(s, aggregation=aggregation, last_k=last_k) for s in specs]
    ds, info = load_dataset(
        dataset, n_generated=n_generated, seed=seed, prompt_style=prompt_style, data_file=data_file
    )
    max_tokens = max_new_tokens or _DEFAULT_MAX_TOKENS[dataset]

    deviations = []
    if dataset == "generated":
        deviations.append(
            "dataset=generated: seeded arithmetic questions stand in for "
            "CSQA/GSM8K/AQuA (the embedded 135M model is at ~3% on GSM8K)"
        )
    if info["prompt_style"] == "short":
        deviations.append(
            "prompt_style=short: 'End your reply with The answer is N' instead of "
            "the paper's chain-of-thought prompt"
        )
    if aggregation != "mean":
        deviations.append(f"aggregation={aggregation}: the paper averages over all tokens")
    if features == "teacher_forced":
        deviations.append(
            "features=teacher_forced: features re-read from the answer, not "
            "recorded during generation"
        )
    if features == "greybox":
        deviations.append(
            f"features=greybox: only baselines from the top-{top_logprobs} "
            "logprobs (no NCI/fDBD); entropy truncated to the top-k"
        )
    if any(s.startswith("fdbd@") for s in specs):
        deviations.append(
            "fdbd k fixed per detector (reported for each k) rather than chosen on a validation set"
        )

    return Task(
        dataset=ds,
        solver=whitebox_answer(
            dets,
            max_new_tokens=max_tokens,
            features=features,
            system_prompt=system_prompt,
            batch_size=batch_size,
            top_logprobs=top_logprobs,
        ),
        scorer=hallucination_detection(specs),
        metrics=detector_metrics(specs, n_boot=n_boot, seed=seed),
        version=TASK_VERSION,
        metadata=task_metadata(
            dataset_source=info["dataset_source"],
            dataset_hash=info["dataset_hash"],
            generated=info["generated"],
            deviations=deviations,
            detectors=specs,
            aggregation=aggregation,
            last_k=last_k,
            prompt_style=info["prompt_style"],
            features=features,
            max_new_tokens=max_tokens,
            batch_size=batch_size,
            score_orientation="score value per detector = -confidence (higher = hallucinated)",
        ),
    )
