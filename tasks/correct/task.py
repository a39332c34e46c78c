"""correct: error localisation in failed multi-agent trajectories (CORRECT, ICML 2026) beside
the Who&When baselines, on Who&When (both subsets) or injected GSM8K team failures."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from inspect_ai import Task, task

from harness.records import task_metadata
from harness.splits import SourceSplit, split_metadata
from methods.correct import (
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
from tasks._config import deviations
from tasks.correct.config import (
    COUNTER_NAME,
    DEVIATIONS,
    CorrectConfig,
    DataSource,
    Subset,
    load_split,
)
from tasks.correct.dataset import load_who_and_when, trajectory_to_sample
from tasks.correct.solver import Method, ModelGenerate, check_answer_formats, localise

TASK_VERSION = "1.1.0"

# `make run`: three Algorithm-Generated trajectories, CORRECT with k=1 and short generations.
RUN_ALL_ARGS = {
    "method": "correct",
    "subset": "algorithm_generated",
    "limit_trajectories": 3,
    "max_prompt_tokens": 1024,
    "max_new_tokens": 96,
    "schema_max_tokens": 160,
}


def _token_counter(model_name: str) -> tuple[Callable[[str], int], str]:
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
        self._count: Callable[[str], int] | None = None
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
    split: str = "test",
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
      split: test (default: the trajectories whose question is on the test side of the frozen
        split by question, tasks/correct/splits.yaml), dev (where choices are made) or all (the
        paper's set). The schema pool stays the whole subset (leave-one-out, as the paper).
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
      limit_trajectories: evaluate only the first N trajectories (file order) of each subset's
        split; the schema pool stays the whole subset.
      injected_dir: folder holding Injected/<n>.json (default: $HARNESS_CACHE_DIR/correct/injected).
      who_and_when: where Who&When comes from: a folder holding Algorithm-Generated/ and
        Hand-Crafted/, or a hub id ``hf://Kevin355/Who_and_When[@revision]`` read through
        `datasets` (default: the folder under HARNESS_DATA_DIR).
      strict_data: a record whose mistake_agent is no agent of its trajectory is an error (default:
        a warning, and the record ids listed in the log's `data_warnings`).
    """
    cfg = CorrectConfig.from_params(locals())
    source = cfg.source()
    pools = {
        n: load_who_and_when(source.location(), n, strict=cfg.strict_data) for n in cfg.subsets
    }
    source_split = load_split()
    evaluated = cfg.evaluated(pools, source_split)
    count_tokens = _ModelTokenCounter()
    config = cfg.localiser_config(count_tokens)
    _check_formats(cfg, evaluated, config)
    schema_costs: dict[str, dict[str, float]] = {}
    built = _correct_localisers(cfg, pools, count_tokens, schema_costs)
    return Task(
        dataset=[trajectory_to_sample(t) for t in evaluated],
        solver=localise(
            cfg.method,
            {t.id: t for t in evaluated},
            config,
            built.pick if built.localisers else None,
            max_new_tokens=cfg.max_new_tokens,
            step_max_calls=cfg.step_max_calls,
            schema_costs=schema_costs,
        ),
        scorer=localisation_scorer(tolerance=cfg.tolerance),
        version=TASK_VERSION,
        metadata=_metadata(cfg, source, pools, evaluated, built, source_split),
    )


def _metadata(
    cfg: CorrectConfig,
    source: DataSource,
    pools: dict[str, list[Trajectory]],
    evaluated: list[Trajectory],
    built: _Localisers,
    source_split: SourceSplit,
) -> dict[str, Any]:
    """The task's log metadata: data, deviations, split, method and the localisers' own."""
    return task_metadata(
        dataset_source=source.description,
        dataset_hash=cfg.data_hash(source, pools),
        deviations=deviations(
            cfg,
            DEVIATIONS,
            embedder_used=built.embedder_name,
            n_evaluated=len(evaluated),
            n_pool=sum(len(pools[n]) for n in cfg.subsets),
        ),
        **split_metadata(cfg.split_name, source_split),
        generated=cfg.subset == "injected",
        method=cfg.method,
        subset=cfg.subset,
        truncation_strategy=TRUNCATION_STRATEGY,
        token_counter=COUNTER_NAME,
        max_new_tokens=cfg.max_new_tokens,
        data_warnings={"mistake_agent_not_in_trajectory": _unknown_agents(pools)},
        **built.metadata(cfg, pools),
    )


def _check_formats(
    cfg: CorrectConfig, evaluated: list[Trajectory], config: LocaliserConfig
) -> None:
    """Every answer format the run decodes under, checked at task load (one per trajectory;
    the teacher's too when it distils)."""
    formats = method_answer_formats(cfg.method, evaluated, config)
    if cfg.method == "correct" and cfg.schema_source == "distil":
        formats.append(distil_format(cfg.schema_max_tokens))
    check_answer_formats(formats)


def _unknown_agents(pools: dict[str, list[Trajectory]]) -> list[str]:
    """Records whose mistake_agent is no agent of their trajectory (the log's data warning)."""
    return [t.id for ts in pools.values() for t in ts if t.metadata.get("mistake_agent_unknown")]


@dataclass(frozen=True)
class _Localisers:
    """CORRECT's localiser per subset (none for the other methods) and what the log says of it."""

    localisers: dict[str, CorrectLocaliser]
    embedder_name: str | None

    def pick(self, t: Trajectory) -> CorrectLocaliser:
        return self.localisers[t.id.split("/")[0]]

    def metadata(self, cfg: CorrectConfig, pools: dict[str, list[Trajectory]]) -> dict[str, Any]:
        if not self.localisers:
            return {}
        return {
            "schema_pool": {
                n: {"size": len(pools[n]), "k": self.localisers[n].k_for(pools[n][0])}
                for n in cfg.subsets
            },
            "retrieval_protocol": (
                "leave-one-out: pool = all labelled trajectories of the same subset; self excluded"
            ),
        }


def _correct_localisers(
    cfg: CorrectConfig,
    pools: dict[str, list[Trajectory]],
    count_tokens: Callable[[str], int],
    schema_costs: dict[str, dict[str, float]],
) -> _Localisers:
    """CORRECT's schema caches over each subset's pool (leave-one-out), for method=correct."""
    if cfg.method != "correct":
        return _Localisers({}, None)
    from inspect_ai.model import get_model

    async def distil(t: Trajectory) -> ErrorSchema:
        if cfg.schema_source == "template":
            return template_schema(t)
        # role.teacher distils schemata; without it, the model under test does.
        teacher = ModelGenerate(
            get_model(role="teacher", default=get_model()), cfg.schema_max_tokens
        )
        start = time.perf_counter()
        schema = await distil_schema(
            t,
            teacher,
            max_prompt_tokens=cfg.max_prompt_tokens,
            count_tokens=count_tokens,
            max_new_tokens=cfg.schema_max_tokens,
        )
        schema_costs[t.id] = {
            "tokens": teacher.tokens,
            "seconds": round(time.perf_counter() - start, 3),
        }
        return schema

    emb = make_embedder(cfg.embedder)
    localisers = {
        name: CorrectLocaliser(
            pools[name],
            emb if emb.name == "minilm" else make_embedder("tfidf"),
            distil,
            k=cfg.k_for(name),
            capacity=cfg.cache_capacity,
            merge_threshold=cfg.merge_threshold,
        )
        for name in cfg.subsets
    }
    return _Localisers(localisers, emb.name)
