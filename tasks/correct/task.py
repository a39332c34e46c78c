"""correct: error localisation in failed multi-agent trajectories (CORRECT, ICML 2026) beside
the Who&When baselines, on Who&When (both subsets) or injected GSM8K team failures."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Literal

from inspect_ai import Task, task

from harness.data import DatasetNotFoundError, content_hash, data_path
from harness.paths import cache_dir
from harness.records import task_metadata
from methods.correct import (
    PAPER_K,
    TRUNCATION_STRATEGY,
    CorrectLocaliser,
    ErrorSchema,
    LocaliserConfig,
    Trajectory,
    approx_tokens,
    distil_format,
    distil_schema,
    make_embedder,
    method_answer_formats,
    template_schema,
)
from scorers.localisation import localisation_scorer
from tasks.correct.dataset import (
    HOW_TO_GET,
    WHO_AND_WHEN_DIR,
    load_who_and_when,
    trajectory_to_record,
    trajectory_to_sample,
)
from tasks.correct.solver import Method, ModelGenerate, check_answer_formats, localise

TASK_VERSION = "1.1.0"
Subset = Literal["algorithm_generated", "hand_crafted", "both", "injected"]

# `make run`: three Algorithm-Generated trajectories, CORRECT with k=1 and short generations.
RUN_ALL_ARGS = {
    "method": "correct",
    "subset": "algorithm_generated",
    "limit_trajectories": 3,
    "max_prompt_tokens": 1024,
    "max_new_tokens": 96,
    "schema_max_tokens": 160,
}


def _token_counter(model_name: str):
    """The model's own tokenizer when its weights are local (the embedded model), else ~3 chars/token.

    The weights are found as the white-box handle finds them: `HARNESS_WHITEBOX_MODEL`, then the
    models the harness serves itself (`vllm/smollm2-135m-instruct` for `model=default`), then
    the name (an alias or a folder)."""
    try:
        from transformers import AutoTokenizer

        from harness.models import resolve_model_path
        from harness.models.aliases import served_models

        override = os.environ.get("HARNESS_WHITEBOX_MODEL", "").strip()
        folder = override or served_models().get(model_name) or model_name
        tok = AutoTokenizer.from_pretrained(str(resolve_model_path(folder)))
    except Exception:  # noqa: BLE001 - any non-local model: fall back to the estimate
        return approx_tokens, "approx_3_chars_per_token"
    return (lambda text: len(tok.encode(text, add_special_tokens=False))), f"tokenizer:{model_name}"


class _ModelTokenCounter:
    """Counts tokens with the active model's tokenizer, resolved on first use (inside the eval,
    when inspect's active model is known); ~3 chars/token for models without local weights."""

    def __init__(self) -> None:
        self._count = None
        self.name = "unresolved"

    def __call__(self, text: str) -> int:
        if self._count is None:
            try:
                from inspect_ai.model import get_model

                model_name = str(get_model())
            except Exception:  # noqa: BLE001 - outside an eval: no active model
                model_name = ""
            self._count, self.name = _token_counter(model_name)
        return self._count(text)


@task
def correct(
    method: Method = "correct",
    subset: Subset = "both",
    k: int | None = None,
    with_ground_truth: bool = True,
    max_prompt_tokens: int = 2048,
    max_new_tokens: int = 256,
    schema_source: Literal["distil", "template"] = "distil",
    schema_max_tokens: int = 1024,
    embedder: Literal["auto", "minilm", "tfidf"] = "auto",
    cache_capacity: int | None = None,
    merge_threshold: float | None = None,
    tolerance: int = 1,
    step_max_calls: int | None = None,
    limit_trajectories: int | None = None,
    injected_dir: str | None = None,
    who_and_when: str | None = None,
    strict_data: bool = False,
    seed: int = 0,
) -> Task:
    """Localise the decisive mistake (agent, step) of each failed trajectory.

    Args:
      method: correct (schema-guided all-at-once), all_at_once (= CORRECT's k=0 prompt),
        step_by_step, binary_search; baselines without a model: random, first_step (always
        step 0 and its speaker), most_frequent_agent (the agent with most turns, at its first).
      subset: Who&When algorithm_generated (126), hand_crafted (58), both (184), or injected
        (GSM8K team failures written by `python -m tasks.correct.inject`).
      k: schemata retrieved per trajectory; None = the paper's (AG 1, HC 10, injected 5).
      with_ground_truth: show the task's answer in the prompt (Who&When's "with ground truth").
      max_prompt_tokens: prompt budget; longer histories are fitted (strategy in the log).
      schema_source: distil (teacher model, conditioned on the gold labels, paper) or template
        (built from the gold annotation without a model: a CPU-budget stand-in).
      schema_max_tokens: teacher generation length (paper: 1,024).
      embedder: retrieval embedding: auto (MiniLM if installed, else TF-IDF), minilm, tfidf.
      cache_capacity / merge_threshold: dynamic cache management (off = the release's behaviour).
      tolerance: k of the step accuracy within ±k.
      step_max_calls: cap on step-by-step's calls per trajectory (None = no cap, as the paper).
      limit_trajectories: evaluate only the first N trajectories (file order) of each subset; the
        schema pool stays the whole subset.
      injected_dir: folder holding Injected/<n>.json (default: $HARNESS_CACHE_DIR/correct/injected).
      who_and_when: where Who&When comes from: a folder holding Algorithm-Generated/ and
        Hand-Crafted/, or a hub id ``hf://Kevin355/Who_and_When[@revision]`` read through
        `datasets` (default: the folder under HARNESS_DATA_DIR).
      strict_data: a record whose mistake_agent is no agent of its trajectory is an error (default:
        a warning, and the record ids listed in the log's `data_warnings`).
    """
    subsets = ["algorithm_generated", "hand_crafted"] if subset == "both" else [subset]
    pools: dict[str, list[Trajectory]] = {}
    if subset == "injected":
        root = Path(injected_dir) if injected_dir else cache_dir() / "correct" / "injected"
        if not (root / "Injected").is_dir():
            raise DatasetNotFoundError(
                f"no injected trajectories in {root / 'Injected'}; generate them with "
                f"`python -m tasks.correct.inject --model <model> --n 20 --out {root}`"
            )
        source_root = root
        dataset_source = f"generated: tasks.correct.inject ({root})"
    elif who_and_when is not None and who_and_when.startswith("hf://"):
        source_root = None
        dataset_source = f"Who&When from {who_and_when} via datasets"
    elif who_and_when is not None:
        source_root = Path(who_and_when)
        if not source_root.is_dir():
            raise DatasetNotFoundError(
                f"who_and_when={who_and_when}: no such folder (expected Algorithm-Generated/ "
                f"and Hand-Crafted/ inside, or a hub id hf://Kevin355/Who_and_When)"
            )
        dataset_source = f"Who&When from the folder {source_root.name}"
    else:
        source_root = data_path(WHO_AND_WHEN_DIR, how_to_get=HOW_TO_GET)
        dataset_source = "Who&When (ag2ai/Agents_Failure_Attribution f4d2b6d) via HARNESS_DATA_DIR"
    for name in subsets:
        pools[name] = load_who_and_when(
            source_root if source_root is not None else str(who_and_when), name, strict=strict_data
        )
    unknown_agents = [
        t.id for ts in pools.values() for t in ts if t.metadata.get("mistake_agent_unknown")
    ]

    evaluated = [
        t
        for name in subsets
        for t in (pools[name][:limit_trajectories] if limit_trajectories else pools[name])
    ]
    trajectories = {t.id: t for t in evaluated}

    count_tokens = _ModelTokenCounter()
    counter_name = "the model's tokenizer when its weights are local, else ~3 chars/token"
    config = LocaliserConfig(
        max_prompt_tokens=max_prompt_tokens,
        count_tokens=count_tokens,
        with_ground_truth=with_ground_truth,
        seed=seed,
        max_new_tokens=max_new_tokens,
    )

    formats = method_answer_formats(method, evaluated, config)
    if method == "correct" and schema_source == "distil":
        formats.append(distil_format(schema_max_tokens))
    check_answer_formats(formats)

    deviations = [
        "explicit_step_ids: turns shown as 'Step <original index> - <speaker>:' (Who&When's all-at-once counts turns)",
        f"truncation={TRUNCATION_STRATEGY}: prompts fitted to max_prompt_tokens={max_prompt_tokens} ({counter_name})",
        "step accuracy is exact integer match (CORRECT), not Who&When's substring test",
    ]
    localisers: dict[str, CorrectLocaliser] = {}
    schema_costs: dict[str, dict[str, float]] = {}
    extra: dict[str, object] = {}
    if method == "correct":
        from inspect_ai.model import get_model

        async def distil(t: Trajectory) -> ErrorSchema:
            if schema_source == "template":
                return template_schema(t)
            # role.teacher distils schemata; without it, the model under test does.
            teacher = ModelGenerate(
                get_model(role="teacher", default=get_model()), schema_max_tokens
            )
            start = time.perf_counter()
            schema = await distil_schema(
                t,
                teacher,
                max_prompt_tokens=max_prompt_tokens,
                count_tokens=count_tokens,
                max_new_tokens=schema_max_tokens,
            )
            schema_costs[t.id] = {
                "tokens": teacher.tokens,
                "seconds": round(time.perf_counter() - start, 3),
            }
            return schema

        emb = make_embedder(embedder)
        paper_k = {
            "algorithm_generated": PAPER_K["algorithm_generated"],
            "hand_crafted": PAPER_K["hand_crafted"],
            "injected": PAPER_K["correct_error"],
        }
        for name in subsets:
            kk = paper_k[name] if k is None else k
            localisers[name] = CorrectLocaliser(
                pools[name],
                emb if emb.name == "minilm" else make_embedder("tfidf"),
                distil,
                k=kk,
                capacity=cache_capacity,
                merge_threshold=merge_threshold,
            )
        deviations.append(
            f"embedder={emb.name}: all-MiniLM-L6-v2 / TF-IDF instead of BGE-M3 (weights not reachable)"
        )
        if schema_source == "template":
            deviations.append(
                "schema_source=template: schemata built from the gold annotation without a model"
            )
        elif schema_max_tokens != 1024:
            deviations.append(f"schema_max_tokens={schema_max_tokens} (paper's local path: 1,024)")
        deviations.append(
            "schema distillation greedy (paper's local path: temperature 0.7, top-p 0.95)"
        )
        if cache_capacity is not None or merge_threshold is not None:
            deviations.append(
                f"dynamic cache management on: capacity={cache_capacity}, merge_threshold={merge_threshold}"
            )
        extra["schema_pool"] = {
            n: {"size": len(pools[n]), "k": localisers[n].k_for(pools[n][0])} for n in subsets
        }
        extra["retrieval_protocol"] = (
            "leave-one-out: pool = all labelled trajectories of the same subset; self excluded"
        )
    if not with_ground_truth:
        deviations.append(
            "with_ground_truth=False: the task's answer is not shown (Who&When's second setting)"
        )
    if step_max_calls is not None and method == "step_by_step":
        deviations.append(
            f"step_max_calls={step_max_calls}: step-by-step stops early (last step predicted)"
        )
    if limit_trajectories:
        deviations.append(f"limit_trajectories={limit_trajectories} per subset (pool stays whole)")

    def pick(t: Trajectory) -> CorrectLocaliser:
        return localisers[t.id.split("/")[0]]

    data_hash = (
        _records_hash([t for name in subsets for t in pools[name]])
        if source_root is None
        else content_hash(
            *[
                source_root
                / (
                    "Injected"
                    if n == "injected"
                    else {
                        "algorithm_generated": "Algorithm-Generated",
                        "hand_crafted": "Hand-Crafted",
                    }[n]
                )
                for n in subsets
            ]
        )
    )
    return Task(
        dataset=[trajectory_to_sample(t) for t in evaluated],
        solver=localise(
            method,
            trajectories,
            config,
            pick if localisers else None,
            max_new_tokens=max_new_tokens,
            step_max_calls=step_max_calls,
            schema_costs=schema_costs,
        ),
        scorer=localisation_scorer(tolerance=tolerance),
        version=TASK_VERSION,
        metadata=task_metadata(
            dataset_source=dataset_source,
            dataset_hash=data_hash,
            deviations=deviations,
            generated=subset == "injected",
            method=method,
            subset=subset,
            truncation_strategy=TRUNCATION_STRATEGY,
            token_counter=counter_name,
            max_new_tokens=max_new_tokens,
            data_warnings={"mistake_agent_not_in_trajectory": unknown_agents},
            **extra,
        ),
    )


def _records_hash(trajectories: list[Trajectory]) -> str:
    """sha256 over the trajectories as records (a hub dataset has no folder to hash)."""
    digest = hashlib.sha256()
    for t in trajectories:
        digest.update(json.dumps(trajectory_to_record(t), sort_keys=True, default=str).encode())
    return f"sha256:{digest.hexdigest()}"
