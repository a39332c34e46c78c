"""ood_hallucination: NCI / fDBD hallucination detectors on the LM head, scored by AUROC.

Paper: "From Out-of-Distribution Detection to Hallucination Detection: A Geometric View"
(ICML 2026). One sample = one question; the model answers greedily through the white-box handle,
every detector scores the answer's tokens, and the answer's correctness is the label
(hallucinated = wrong final answer). One log holds every detector's score per sample.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset

from harness.records import task_metadata
from harness.splits import SourceSplit, SplitName, load_source_split, split_metadata
from methods.ood import DEFAULT_DETECTORS, Aggregation, make_detector
from tasks._config import deviations
from tasks.ood_hallucination.config import DEVIATIONS, DatasetName, OodConfig
from tasks.ood_hallucination.dataset import PromptStyle, load_dataset, question_source
from tasks.ood_hallucination.scorer import detector_metrics, hallucination_detection
from tasks.ood_hallucination.solver import FeatureMode, whitebox_answer

__all__ = ["RUN_ALL_ARGS", "TASK_VERSION", "ood_hallucination"]

TASK_VERSION = "1.0.0"

#: `make run`: 24 generated questions (short answers) on the embedded model, ≈ 1–2 min on CPU.
RUN_ALL_ARGS: dict = {"limit": 24, "n_boot": 200}


def _questions(cfg: OodConfig) -> tuple[MemoryDataset, dict[str, Any], SourceSplit]:
    """The dataset's questions on `cfg.split`, what the dataset is, and the frozen split; no
    question on the split is an error naming both."""
    ds, info = load_dataset(
        cfg.dataset,
        n_generated=cfg.n_generated,
        seed=cfg.seed,
        prompt_style=cfg.prompt_style,
        data_file=cfg.data_file,
    )
    frozen = load_source_split("ood_hallucination")
    kept = frozen.select(list(ds), question_source, cfg.split)
    if not kept:
        raise ValueError(
            f"ood_hallucination: no question of {info['dataset_source']} is on split={cfg.split}"
        )
    return MemoryDataset(kept, name=ds.name), info, frozen


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
    split: SplitName = "test",
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
    split: ``test`` (default), ``dev`` or ``all``: the questions whose source (the generator's
        arithmetic problem, CSQA's concept, else the question; ``splits.yaml``) is on that side
        of the frozen split; the generator makes ``n_generated`` and keeps its side's share.
    """
    cfg = OodConfig.from_params(locals())
    dets = [make_detector(s, aggregation=cfg.aggregation, last_k=cfg.last_k) for s in cfg.specs]
    ds, info, frozen = _questions(cfg)
    return Task(
        dataset=ds,
        solver=whitebox_answer(
            dets,
            max_new_tokens=cfg.max_tokens,
            features=cfg.features,
            system_prompt=cfg.system_prompt,
            batch_size=cfg.batch_size,
            top_logprobs=cfg.top_logprobs,
        ),
        scorer=hallucination_detection(cfg.specs),
        metrics=detector_metrics(cfg.specs, n_boot=cfg.n_boot, seed=cfg.seed),
        version=TASK_VERSION,
        metadata=task_metadata(
            dataset_source=info["dataset_source"],
            dataset_hash=info["dataset_hash"],
            generated=info["generated"],
            deviations=deviations(cfg, DEVIATIONS, prompt_style=info["prompt_style"]),
            detectors=cfg.specs,
            aggregation=cfg.aggregation,
            last_k=cfg.last_k,
            prompt_style=info["prompt_style"],
            features=cfg.features,
            max_new_tokens=cfg.max_tokens,
            batch_size=cfg.batch_size,
            score_orientation="score value per detector = -confidence (higher = hallucinated)",
            split_questions=len(ds),
            **split_metadata(cfg.split, frozen),
        ),
    )
