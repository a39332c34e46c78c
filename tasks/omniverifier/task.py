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

from harness.data import content_hash, data_path, text_hash
from harness.records import task_metadata
from methods.omniverifier import META_IOU_THRESHOLD, MultiBox
from scorers.boxes import BoxFormat
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
    n: int = 140,
    seed: int = 0,
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
      n: generated samples (verify: pairs of true/false; tts: prompts).
      seed: generator seed (the dataset is reproducible from it).
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
    types = [t.strip() for t in error_types.split(",") if t.strip()]
    unknown = sorted(set(types) - set(ERROR_TYPES))
    if unknown or not types:
        raise ValueError(
            f"error_types: unknown {unknown or 'empty'}; choose from {', '.join(ERROR_TYPES)}"
        )
    if n < 1:
        raise ValueError(f"n must be ≥ 1, got {n}")
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be ≥ 1, got {max_rounds}")
    if not 0.0 <= p_error <= 1.0:
        raise ValueError(f"p_error must lie in [0, 1], got {p_error}")
    if mode == "tts" and dataset != "generated":
        raise ValueError("mode=tts draws generated scenes; use dataset=generated")
    if dataset != "generated":
        if observation != "image" and verifier == "model":
            raise ValueError(
                f"dataset={dataset} has real images: use observation=image with a VLM (the "
                "object detector only knows the generated scenes' vocabulary)"
            )
        if verifier in ("classical", "oracle"):
            raise ValueError(f"verifier={verifier} needs generated scenes (dataset=generated)")

    deviations: list[str] = []
    generated = dataset == "generated"
    if dataset == "generated":
        # tts keeps one sample (the prompt) of each pair: draw 2n to get n prompts.
        count = 2 * n if mode == "tts" else n
        samples = generated_samples(
            count, seed=seed, level=level, error_types=types, with_images=observation == "image"
        )
        source = f"generated scenes (tasks.omniverifier.scenes, seed={seed}, level={level})"
        data_hash = _samples_hash(samples)
        deviations.append(
            "dataset=generated: seeded synthetic scenes with one injected error stand in for "
            "ViVerBench (not reachable offline); subtasks mapped to ViVerBench names where they fit"
        )
    elif dataset == "viverbench" and data_file and data_file.startswith("hf://"):
        samples, source, data_hash = load_viverbench_hub(data_file)
        deviations.append("viverbench: rule-based score only (no GPT-4.1 explanation judge)")
    elif dataset == "viverbench":
        root = (
            data_path(VIVERBENCH_DIR, how_to_get=VIVERBENCH_HOW_TO_GET)
            if data_file is None
            else _path(data_file)
        )
        samples = load_viverbench(root)
        source = f"ViVerBench records from {root}"
        data_hash = content_hash(root)
        deviations.append("viverbench: rule-based score only (no GPT-4.1 explanation judge)")
    else:
        samples, files = quokka_samples()
        source = f"imgaug 0.4.0 quokka photograph with its human-drawn box ({files})"
        data_hash = _samples_hash(samples)
    if observation == "objects" and verifier == "model":
        deviations.append(
            "observation=objects: the text-only model reads the classical detector's object list "
            "with pixel boxes instead of the image"
        )
    if reply_format == "yes_no":
        if mode == "tts":
            raise ValueError("reply_format=yes_no gives no box to edit: use mode=verify")
        deviations.append(
            "reply_format=yes_no: one-word judgment instead of <think>+JSON (no box, R_f = R_meta = 0)"
        )
    if rationale == "point":
        deviations.append("rationale=point: meta reward = point inside the annotated box")
    if multi_box != "enclosing":
        deviations.append(f"multi_box={multi_box}: several boxes compared by their best pair")

    if mode == "verify":
        solver = verify_image(
            verifier=verifier,
            observation=observation,
            rationale=rationale,
            box_format=box_format,
            max_tokens=max_tokens,
            reply_format=reply_format,
        )
        scorer = verification_scorer(
            rationale=rationale,
            box_format=box_format,
            multi_box=multi_box,
            reply_format=reply_format,
        )
    else:
        samples = [
            s for s in samples if s.metadata and s.metadata["label"] == "true"
        ]  # one per prompt
        if generator == "simulated":
            deviations.append(
                f"generator=simulated: prompt-following layouts with a random error (p={p_error}) "
                "stand in for an image generator; edits redraw only the flagged region"
            )
        else:
            deviations.append(
                "generator=model: the model writes a scene description (JSON) that the renderer "
                "draws, instead of an image generator"
            )
        if edit_scope == "free":
            deviations.append("edit_scope=free: the generator may rewrite the whole scene")
        solver = tts_loop(
            verifier=verifier,
            generator=generator,
            observation=observation,
            max_rounds=max_rounds,
            edit_scope=edit_scope,
            p_error=p_error,
            max_tokens=max_tokens,
            generator_max_tokens=generator_max_tokens,
            seed=seed,
        )
        scorer = tts_scorer()

    return Task(
        dataset=samples,
        solver=solver,
        scorer=scorer,
        version=TASK_VERSION,
        metadata=task_metadata(
            dataset_source=source,
            dataset_hash=data_hash,
            deviations=deviations,
            generated=generated,
            mode=mode,
            verifier=verifier,
            level=level,
            observation=observation,
            rationale=rationale,
            box_format=box_format,
            multi_box=multi_box,
            reply_format=reply_format,
            meta_iou_threshold=META_IOU_THRESHOLD,
            max_rounds=max_rounds,
        ),
    )


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
