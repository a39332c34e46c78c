"""Samples for the omniverifier task: generated scenes, ViVerBench records, the annotated quokka.

- ``generated``: seeded scene pairs (``scenes.make_pair``): one prompt, a consistent scene
  (y = True) and the same scene with one injected error (y = False, with its exact box).
- ``viverbench``: records of the ViVerBench release (fields ``task``, ``question``, ``answer``,
  ``explanation``, ``image``) from ``$HARNESS_DATA_DIR/viverbench/`` (jsonl/json/parquet). The
  image is a path relative to the file, or ``{"bytes": …}`` / ``{"path": …}`` as HF parquet
  stores it. No boxes: judgment accuracy only (the release has none).
- ``quokka``: a real photograph with a box drawn by a person — ``imgaug``'s ``quokka.jpg`` and
  ``quokka_annotations.json`` (MIT; bounding box labelled "animal"). Each variant (scale, flip,
  crop — the human box transformed exactly with the image) gives a true claim ("an animal") and
  a false one ("no animal"), whose error box is the animal's box. The only registry package
  found with human-drawn boxes on a real photograph; see the README.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample

from harness.hub import DatasetFormatError, DataSpec, HubDataset, read_json_records, read_records
from tasks.omniverifier.render import render
from tasks.omniverifier.scenes import ERROR_TYPES, make_pair

__all__ = [
    "DATA",
    "QUOKKA_SUBTASK",
    "VIVERBENCH_DIR",
    "VIVERBENCH_HOW_TO_GET",
    "DatasetFormatError",
    "generated_samples",
    "load_viverbench",
    "load_viverbench_hub",
    "png_data_uri",
    "quokka_samples",
    "viverbench_record_to_sample",
]

VIVERBENCH_DIR = "viverbench"
VIVERBENCH_HOW_TO_GET = (
    "export the HF dataset comin/ViVerBench (3,594 records: task, question, answer, explanation, "
    "image) to $HARNESS_DATA_DIR/viverbench/ as .jsonl/.json/.parquet, images as paths relative "
    "to the file or inline bytes"
)
QUOKKA_SUBTASK = "Real Photo: Object (quokka)"
#: the benchmark's hub release; no commit verified offline: read as `main` (logged as unpinned)
VIVERBENCH_HUB = HubDataset("comin/ViVerBench", "main")
DATA: tuple[DataSpec, ...] = (
    DataSpec(
        "ViVerBench (3,594)",
        "dataset=viverbench",
        VIVERBENCH_DIR,
        VIVERBENCH_HUB,
        VIVERBENCH_HOW_TO_GET,
    ),
)


def png_data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


# --- generated scenes ------------------------------------------------------------------------


def generated_samples(
    n: int,
    *,
    seed: int,
    level: str,
    error_types: Sequence[str] = ERROR_TYPES,
    with_images: bool = False,
) -> list[Sample]:
    """``n`` samples: pairs (consistent, erroneous) with error types taken in turn.

    ``with_images``: the PNG also travels in metadata ``image`` as a data URI (VLM prompts);
    otherwise the solver draws it again from the scene (byte-identical).
    """
    if n < 1:
        raise ValueError(f"n must be ≥ 1, got {n}")
    unknown = set(error_types) - set(ERROR_TYPES)
    if unknown or not error_types:
        raise ValueError(
            f"error_types must be a non-empty subset of {ERROR_TYPES}; got {list(error_types)}"
        )
    out: list[Sample] = []
    for pair_index in range((n + 1) // 2):
        error_type = error_types[pair_index % len(error_types)]
        pair = make_pair(seed, pair_index, level, error_type)
        for label, scene in ((True, pair.consistent), (False, pair.erroneous)):
            if len(out) == n:
                break
            rendered = render(scene)
            metadata: dict[str, Any] = {
                "source": "generated",
                "subtask": pair.subtask,
                "error_type": error_type if not label else "none",
                "pair_error_type": error_type,
                "level": level,
                "seed": seed,
                "pair_index": pair_index,
                "label": "true" if label else "false",
                "width": scene.width,
                "height": scene.height,
                "spec": pair.spec.to_dict(),
                "scene": scene.to_dict(),
                "visible": list(rendered.visible),
                "error_boxes": [] if label else [list(pair.error_box)],
                "error_detail": "" if label else pair.error_detail,
            }
            if with_images:
                metadata["image"] = png_data_uri(rendered.png)
            out.append(
                Sample(
                    id=f"{level}-{pair_index:04d}-{'t' if label else 'f'}",
                    input=pair.spec.prompt(),
                    target="true" if label else "false",
                    metadata=metadata,
                )
            )
    return out


# --- ViVerBench --------------------------------------------------------------------------------


def _bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise DatasetFormatError(f"{where}: field 'answer' must be true/false, got {value!r}")


def _image_bytes(value: Any, root: Path, where: str) -> bytes:
    if isinstance(value, Mapping):
        if value.get("bytes"):
            raw = value["bytes"]
            return raw if isinstance(raw, bytes) else base64.b64decode(raw)
        value = value.get("path")
    if not isinstance(value, str) or not value:
        raise DatasetFormatError(
            f"{where}: field 'image' must be a path or {{bytes|path}}, got {type(value).__name__}"
        )
    path = (root / value) if not Path(value).is_absolute() else Path(value)
    if not path.is_file():
        raise DatasetFormatError(f"{where}: image file {path} does not exist")
    return path.read_bytes()


def viverbench_record_to_sample(
    record: Mapping[str, Any], *, where: str, root: Path, index: int
) -> Sample:
    """One ViVerBench record → a Sample (image as a PNG data URI in metadata ``image``)."""
    from PIL import Image, UnidentifiedImageError

    for key in ("task", "question", "answer", "image"):
        if key not in record:
            raise DatasetFormatError(f"{where}: missing field {key!r} (fields: {sorted(record)})")
    task, question = record["task"], record["question"]
    if not isinstance(task, str) or not task.strip():
        raise DatasetFormatError(f"{where}: field 'task' must be a non-empty string, got {task!r}")
    if not isinstance(question, str) or not question.strip():
        raise DatasetFormatError(f"{where}: field 'question' must be a non-empty string")
    label = _bool(record["answer"], where)
    raw = _image_bytes(record["image"], root, where)
    try:
        image = Image.open(io.BytesIO(raw))
        image.load()
    except (UnidentifiedImageError, OSError) as exc:
        raise DatasetFormatError(f"{where}: field 'image' is not a readable image ({exc})") from exc
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG")
    return Sample(
        id=str(record.get("id", f"viverbench-{index:05d}")),
        input=question,
        target="true" if label else "false",
        metadata={
            "source": "viverbench",
            "subtask": task.strip(),
            "label": "true" if label else "false",
            "explanation": str(record.get("explanation") or ""),
            "width": image.width,
            "height": image.height,
            "error_boxes": [],
            "image": png_data_uri(buf.getvalue()),
        },
    )


def _read_records(path: Path) -> Sequence[tuple[str, Mapping[str, Any]]]:
    if path.suffix == ".parquet":
        import pandas as pd

        frame = pd.read_parquet(path)
        return [(f"{path} row {i}", row) for i, row in enumerate(frame.to_dict(orient="records"))]
    return read_json_records(path)


def load_viverbench(root: Path) -> list[Sample]:
    """Every record under ``root`` (a file or a folder of .jsonl/.json/.parquet files)."""
    files = (
        [root]
        if root.is_file()
        else sorted(p for p in root.rglob("*") if p.suffix in (".jsonl", ".json", ".parquet"))
    )
    if not files:
        raise DatasetFormatError(
            f"{root}: no .jsonl/.json/.parquet files ({VIVERBENCH_HOW_TO_GET})"
        )
    samples: list[Sample] = []
    for f in files:
        for where, rec in _read_records(f):
            samples.append(
                viverbench_record_to_sample(rec, where=where, root=f.parent, index=len(samples))
            )
    return samples


def load_viverbench_hub(source: str) -> tuple[list[Sample], str, str]:
    """ViVerBench from a hub dataset (``hf://comin/ViVerBench[@revision][?split=]``) read through
    `datasets`, images embedded in the rows: (samples, source, content hash)."""
    records = read_records(source, default=VIVERBENCH_HUB)
    samples = [
        viverbench_record_to_sample(rec, where=where, root=Path("/"), index=i)
        for i, (where, rec) in enumerate(records.numbered())
    ]
    if not samples:
        raise DatasetFormatError(f"{records.source}: no records")
    return samples, records.source, records.content_hash


# --- the annotated quokka (imgaug) -------------------------------------------------------------

_QUOKKA_VARIANTS: tuple[tuple[str, float, bool, tuple[float, float, float, float]], ...] = (
    # name, scale of the long side to 512 px, horizontal flip, crop (fractions x1, y1, x2, y2)
    ("full", 1.0, False, (0.0, 0.0, 1.0, 1.0)),
    ("full-flip", 1.0, True, (0.0, 0.0, 1.0, 1.0)),
    ("small", 0.6, False, (0.0, 0.0, 1.0, 1.0)),
    ("small-flip", 0.6, True, (0.0, 0.0, 1.0, 1.0)),
    ("crop-left", 1.0, False, (0.05, 0.0, 0.75, 1.0)),
    ("crop-right", 1.0, True, (0.2, 0.0, 0.95, 1.0)),
)
QUOKKA_TRUE = "A photograph of an animal resting on the ground."
QUOKKA_FALSE = "A photograph of empty ground with no animal in it."


def _imgaug_dir() -> Path:
    spec = importlib.util.find_spec("imgaug")  # located, not imported (imgaug needs old deps)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "dataset=quokka needs the imgaug package's data files: pip install --no-deps imgaug==0.4.0"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def quokka_samples() -> tuple[list[Sample], str]:
    """Real-photo grounding samples from imgaug's annotated quokka, and the files' paths."""
    from PIL import Image, ImageOps

    folder = _imgaug_dir()
    image_path, ann_path = folder / "quokka.jpg", folder / "quokka_annotations.json"
    ann = json.loads(ann_path.read_text())
    boxes = [b for b in ann.get("bounding_boxes", []) if b.get("label") == "animal"]
    if len(boxes) != 1:
        raise DatasetFormatError(
            f"{ann_path}: expected one 'animal' bounding box, found {len(boxes)}"
        )
    b = boxes[0]
    box = (float(b["x1"]), float(b["y1"]), float(b["x2"]), float(b["y2"]))
    original = Image.open(image_path).convert("RGB")
    out: list[Sample] = []
    for name, scale, flip, crop in _QUOKKA_VARIANTS:
        w, h = original.size
        cx1, cy1, cx2, cy2 = (
            round(crop[0] * w),
            round(crop[1] * h),
            round(crop[2] * w),
            round(crop[3] * h),
        )
        img = original.crop((cx1, cy1, cx2, cy2))
        x1, y1, x2, y2 = box[0] - cx1, box[1] - cy1, box[2] - cx1, box[3] - cy1
        x1, y1 = max(0.0, x1), max(0.0, y1)
        x2, y2 = min(float(img.width), x2), min(float(img.height), y2)
        if flip:
            img = ImageOps.mirror(img)
            x1, x2 = img.width - x2, img.width - x1
        factor = scale * 512 / max(img.size)
        size = (round(img.width * factor), round(img.height * factor))
        img = img.resize(size, Image.Resampling.BILINEAR)
        sx, sy = size[0] / (cx2 - cx1), size[1] / (cy2 - cy1)
        gold = [round(x1 * sx, 1), round(y1 * sy, 1), round(x2 * sx, 1), round(y2 * sy, 1)]
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        uri = png_data_uri(buf.getvalue())
        for label, claim in ((True, QUOKKA_TRUE), (False, QUOKKA_FALSE)):
            out.append(
                Sample(
                    id=f"quokka-{name}-{'t' if label else 'f'}",
                    input=claim,
                    target="true" if label else "false",
                    metadata={
                        "source": "imgaug quokka (human-drawn box)",
                        "subtask": QUOKKA_SUBTASK,
                        "label": "true" if label else "false",
                        "variant": name,
                        "width": size[0],
                        "height": size[1],
                        "error_boxes": [] if label else [gold],
                        "image": uri,
                    },
                )
            )
    return out, f"{image_path}, {ann_path}"


def rendered_pixels(metadata: Mapping[str, Any]):
    """The generated sample's image, drawn again from its scene (byte-identical to the dataset's)."""
    from methods.omniverifier import scene_from_dict

    return render(scene_from_dict(metadata["scene"])).pixels
