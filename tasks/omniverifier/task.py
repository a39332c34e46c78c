"""omniverifier: visual meta-verification with boxes (OmniVerifier-M1, ICML 2026).

mode=verify: one image + prompt per sample; the verifier answers true/false and, on false, the
error's box and an edit; scored by judgment accuracy (macro over subtasks, and micro),
localisation (IoU ≥ 0.6), and the rewards under joint vs decoupled composition.
mode=tts: one prompt per sample; M1-TTS (verify → edit the flagged region, ≤ 10 rounds) against
best-of-N with the same generation budget, success checked exactly against the scene spec.
"""

from __future__ import annotations

from typing import Literal

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Solver

from harness.data import content_hash, data_path, text_hash
from harness.records import task_metadata
from harness.splits import split_metadata
from methods.omniverifier import META_IOU_THRESHOLD, MultiBox
from scorers.boxes import BoxFormat
from tasks._config import deviations
from tasks.omniverifier.config import DEVIATIONS, OmniConfig
from tasks.omniverifier.dataset import (
    VIVERBENCH_DIR,
    VIVERBENCH_HOW_TO_GET,
    generated_samples,
    load_viverbench,
    load_viverbench_hub,
    quokka_samples,
)
from tasks.omniverifier.scenes import ERROR_TYPES
from tasks.omniverifier.scorer import tts_scorer, verification_scorer
from tasks.omniverifier.solver import (
    Observation,
    Rationale,
    ReplyFormat,
    VerifierName,
    tts_loop,
    verify_image,
)
from tasks.omniverifier.split import load_split
from tasks.omniverifier.tts import EditScope

__all__ = ["RUN_ALL_ARGS", "TASK_VERSION", "omniverifier"]

TASK_VERSION = "1.0.0"

#: `make run`: 14 generated samples (each error type once, true and false) verified by the
#: embedded model from the detector's object list, short replies.
RUN_ALL_ARGS: dict = {"mode": "verify", "n": 14, "max_tokens": 128}


@task
def omniverifier(
    mode: Literal["verify", "tts"] = "verify",
    verifier: VerifierName = "model",
    dataset: Literal["generated", "viverbench", "quokka"] = "generated",
    level: Literal["easy", "medium", "hard"] = "easy",
    split: str = "test",
    n: int = 140,
    seed: int | None = None,
    error_types: str = ",".join(ERROR_TYPES),
    observation: Observation = "objects",
    rationale: Rationale = "bbox",
    box_format: BoxFormat = "pixels",
    multi_box: MultiBox = "enclosing",
    max_tokens: int = 512,
    reply_format: ReplyFormat = "m1",
    generator: Literal["model", "simulated"] = "model",
    max_rounds: int = 10,
    edit_scope: EditScope = "region",
    p_error: float = 0.5,
    generator_max_tokens: int = 384,
    data_file: str | None = None,
) -> Task:
    """Visual verification with error boxes, or the M1-TTS loop.

    Args:
      mode: verify (judge images) or tts (M1-TTS vs best-of-N on prompts).
      verifier: model (the model under test), classical (scikit-image baseline), always_true,
        oracle (tts only: the exact check, the loop's ceiling).
      dataset: generated (seeded scenes), viverbench ($HARNESS_DATA_DIR/viverbench or data_file;
        needs observation=image), quokka (imgaug's photo with a human-drawn box; image only).
      level: scene difficulty: easy (plain), medium (textures), hard (photographs, up to 12).
      split: test (default), dev or all: generated scenes by seed range (dev: seeds 0-999, where
        the project chose everything it chose by looking at scenes; test: seeds from 1000;
        all: any seed; tasks/omniverifier/splits.yaml). ViVerBench and quokka were never looked
        at: all of them is test (dev is an error).
      n: generated samples (verify: pairs of true/false; tts: prompts).
      seed: generator seed (the dataset is reproducible from it); it must lie on the split's
        range; unset: the split's first seed (test 1000, dev and all 0).
      error_types: comma list of injected error types (taken in turn).
      observation: objects (text-only models: the detector's object list with boxes) or image
        (VLMs: the image as inspect ContentImage).
      rationale: bbox (IoU ≥ 0.6 meta reward) or point (point-in-box).
      box_format: how the model writes boxes: pixels, 0-1000 or 0-1 of the image.
      multi_box: several boxes → IoU of the enclosing boxes (enclosing) or best pair (best_match).
      max_tokens: verifier reply length.
      reply_format: m1 (<think>…</think> then JSON with answer, boxes, action; the paper) or
        yes_no (one word; judgment apart from the format, no box: for models that cannot
        write the M1 format).
      generator: tts: model (the model writes scene JSON, the renderer draws it) or simulated.
      max_rounds: tts: M1-TTS rounds and the best-of-N budget (paper: 10).
      edit_scope: tts: region (keep the scene outside the flagged boxes, paper) or free.
      p_error: tts, simulated generator: chance of an error per generation / edit.
      generator_max_tokens: tts: scene-description length.
      data_file: viverbench: a file or folder instead of $HARNESS_DATA_DIR/viverbench, or a hub
        dataset (hf://comin/ViVerBench[@revision], read through `datasets`).
    """
    cfg = OmniConfig.from_params(locals())
    samples, source, data_hash = _samples(cfg)
    solver, scorer = _verify(cfg) if cfg.mode == "verify" else _tts(cfg)
    if cfg.mode == "tts":
        samples = [
            s for s in samples if s.metadata and s.metadata["label"] == "true"
        ]  # one per prompt
    return Task(
        dataset=samples,
        solver=solver,
        scorer=scorer,
        version=TASK_VERSION,
        metadata=task_metadata(
            dataset_source=source,
            dataset_hash=data_hash,
            deviations=deviations(cfg, DEVIATIONS),
            generated=cfg.dataset == "generated",
            **split_metadata(cfg.split_name, load_split()),
            scene_seed=cfg.scene_seed if cfg.dataset == "generated" else None,
            mode=cfg.mode,
            verifier=cfg.verifier,
            level=cfg.level,
            observation=cfg.observation,
            rationale=cfg.rationale,
            box_format=cfg.box_format,
            multi_box=cfg.multi_box,
            reply_format=cfg.reply_format,
            meta_iou_threshold=META_IOU_THRESHOLD,
            max_rounds=cfg.max_rounds,
        ),
    )


def _samples(cfg: OmniConfig) -> tuple[list[Sample], str, str]:
    """The samples, where they come from and their content hash."""
    if cfg.dataset == "generated":
        # tts keeps one sample (the prompt) of each pair: draw 2n to get n prompts.
        count = 2 * cfg.n if cfg.mode == "tts" else cfg.n
        samples = generated_samples(
            count,
            seed=cfg.scene_seed,
            level=cfg.level,
            error_types=cfg.types,
            with_images=cfg.observation == "image",
        )
        source = (
            f"generated scenes (tasks.omniverifier.scenes, seed={cfg.scene_seed}, "
            f"level={cfg.level})"
        )
        return samples, source, _samples_hash(samples)
    if cfg.dataset == "viverbench" and cfg.data_file and cfg.data_file.startswith("hf://"):
        return load_viverbench_hub(cfg.data_file)
    if cfg.dataset == "viverbench":
        root = (
            data_path(VIVERBENCH_DIR, how_to_get=VIVERBENCH_HOW_TO_GET)
            if cfg.data_file is None
            else _path(cfg.data_file)
        )
        return load_viverbench(root), f"ViVerBench records from {root}", content_hash(root)
    samples, files = quokka_samples()
    source = f"imgaug 0.4.0 quokka photograph with its human-drawn box ({files})"
    return samples, source, _samples_hash(samples)


def _verify(cfg: OmniConfig) -> tuple[Solver, Scorer]:
    solver = verify_image(
        verifier=cfg.verifier,
        observation=cfg.observation,
        rationale=cfg.rationale,
        box_format=cfg.box_format,
        max_tokens=cfg.max_tokens,
        reply_format=cfg.reply_format,
    )
    scorer = verification_scorer(
        rationale=cfg.rationale,
        box_format=cfg.box_format,
        multi_box=cfg.multi_box,
        reply_format=cfg.reply_format,
    )
    return solver, scorer


def _tts(cfg: OmniConfig) -> tuple[Solver, Scorer]:
    solver = tts_loop(
        verifier=cfg.verifier,
        generator=cfg.generator,
        observation=cfg.observation,
        max_rounds=cfg.max_rounds,
        edit_scope=cfg.edit_scope,
        p_error=cfg.p_error,
        max_tokens=cfg.max_tokens,
        generator_max_tokens=cfg.generator_max_tokens,
        seed=cfg.scene_seed,
    )
    return solver, tts_scorer()


def _path(value: str):
    from pathlib import Path

    path = Path(value)
    if not path.exists():
        raise FileNotFoundError(f"data_file {path} does not exist ({VIVERBENCH_HOW_TO_GET})")
    return path


def _samples_hash(samples) -> str:
    """sha256 over the samples' ids, inputs, targets and metadata (generated data has no file)."""
    import json

    return text_hash(
        json.dumps(
            [[s.id, s.input, s.target, s.metadata] for s in samples], sort_keys=True, default=str
        )
    )
