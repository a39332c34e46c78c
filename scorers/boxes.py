"""Box metrics on axis-aligned pixel boxes ``[x1, y1, x2, y2]`` (plain tuples and numpy arrays).

Conventions (shared by docval and omniverifier):

- A box is four numbers ``(x1, y1, x2, y2)`` with ``x1 < x2`` and ``y1 < y2``, in continuous
  pixel coordinates: its area is ``(x2 - x1) * (y2 - y1)`` (no "+1" pixel-count convention, as
  in COCO and torchvision). A box may use float coordinates.
- ``iou`` of two boxes is intersection area / union area; boxes that only touch have IoU 0.
  IoU is unchanged when both boxes are scaled by the same (W, H), so normalising by the image
  size (as DLaVA's mAP@IoU script does) gives the same value as pixels.
- ``acc_at_iou(ious, t)`` is the share of questions with IoU ≥ t; ``map_50_95`` is the mean of
  ``acc_at_iou`` over the ten thresholds 0.50, 0.55, …, 0.95 — DocVAL/DLaVA's "mAP@[.50:.95]"
  (one box per question, a mean accuracy@IoU, not COCO's ranked AP). A question without a usable
  predicted box enters with IoU 0.
- Several predicted boxes for one answer are merged into their enclosing box
  (``enclosing_box``) before IoU, as DLaVA's script does.
- ``validate_box`` returns the reason a box cannot be used (``None`` if it can); ``check_box``
  raises ``InvalidBoxError`` with that reason. Callers decide whether a bad box is bad input data
  (raise) or a model failure (score it as a miss with the reason).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

import numpy as np

__all__ = [
    "BOX_FORMATS",
    "MAP_THRESHOLDS",
    "Box",
    "BoxFormat",
    "InvalidBoxError",
    "acc_at_iou",
    "box_area",
    "check_box",
    "clip_box",
    "enclosing_box",
    "from_pixels",
    "iou",
    "iou_matrix",
    "map_50_95",
    "pairwise_iou",
    "point_in_box",
    "to_pixels",
    "validate_box",
]

Box = tuple[float, float, float, float]
BoxFormat = Literal["pixels", "0-1000", "0-1"]
BOX_FORMATS: tuple[BoxFormat, ...] = ("pixels", "0-1000", "0-1")
# 0.50, 0.55, ..., 0.95 (rounded so that 0.55 is 0.55, not 0.5500000000000002).
MAP_THRESHOLDS: tuple[float, ...] = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))


class InvalidBoxError(ValueError):
    """A box that cannot be used: wrong shape, non-finite, degenerate or outside the image."""


def _as_box(box: Sequence[float] | np.ndarray) -> Box | str:
    """The box as four floats, or the reason it is not four finite numbers."""
    if isinstance(box, str | bytes):
        return f"expected 4 numbers [x1, y1, x2, y2], got a string {box!r}"
    try:
        values = [float(v) for v in box]
    except (TypeError, ValueError):
        return f"expected 4 numbers [x1, y1, x2, y2], got {box!r}"
    if len(values) != 4:
        return f"expected 4 numbers [x1, y1, x2, y2], got {len(values)}: {list(box)!r}"
    if not all(math.isfinite(v) for v in values):
        return f"non-finite coordinate in {values!r}"
    return values[0], values[1], values[2], values[3]


def validate_box(
    box: Sequence[float] | np.ndarray,
    image_size: tuple[float, float] | None = None,
    *,
    tolerance: float = 0.0,
) -> str | None:
    """Why ``box`` is not a usable pixel box, or ``None`` when it is.

    Checks: four finite numbers; ``x1 < x2`` and ``y1 < y2`` (a zero-width/height or inverted
    box is degenerate); with ``image_size=(width, height)``: the box lies inside
    ``[0, width] × [0, height]`` (within ``tolerance`` pixels), with separate reasons for a box
    wholly outside the image and one that crosses its edge.
    """
    parsed = _as_box(box)
    if isinstance(parsed, str):
        return parsed
    x1, y1, x2, y2 = parsed
    if x2 <= x1 or y2 <= y1:
        what = []
        if x2 <= x1:
            what.append(f"x2={x2:g} <= x1={x1:g}")
        if y2 <= y1:
            what.append(f"y2={y2:g} <= y1={y1:g}")
        return f"degenerate box {list(parsed)!r}: " + " and ".join(what)
    if image_size is not None:
        width, height = float(image_size[0]), float(image_size[1])
        if not (width > 0 and height > 0):
            raise ValueError(f"image_size must be positive (width, height), got {image_size!r}")
        if x2 <= 0 or y2 <= 0 or x1 >= width or y1 >= height:
            return f"box {list(parsed)!r} lies outside the {width:g}x{height:g} image"
        t = tolerance
        if x1 < -t or y1 < -t or x2 > width + t or y2 > height + t:
            return f"box {list(parsed)!r} crosses the edge of the {width:g}x{height:g} image"
    return None


def check_box(
    box: Sequence[float] | np.ndarray,
    image_size: tuple[float, float] | None = None,
    *,
    tolerance: float = 0.0,
    where: str = "",
) -> Box:
    """The box as a float tuple, or ``InvalidBoxError`` with the reason (prefixed by ``where``)."""
    reason = validate_box(box, image_size, tolerance=tolerance)
    if reason is not None:
        raise InvalidBoxError(f"{where}: {reason}" if where else reason)
    parsed = _as_box(box)
    assert not isinstance(parsed, str)
    return parsed


def clip_box(box: Sequence[float], image_size: tuple[float, float]) -> Box:
    """The box clipped to ``[0, width] × [0, height]`` (may become degenerate; validate after)."""
    width, height = float(image_size[0]), float(image_size[1])
    x1, y1, x2, y2 = (float(v) for v in box)
    return (
        min(max(x1, 0.0), width),
        min(max(y1, 0.0), height),
        min(max(x2, 0.0), width),
        min(max(y2, 0.0), height),
    )


def box_area(box: Sequence[float]) -> float:
    """``(x2 - x1) * (y2 - y1)``, 0 for a degenerate box."""
    x1, y1, x2, y2 = (float(v) for v in box)
    return max(0.0, x2 - x1) * max(0.0, y2 - y1)


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two boxes (0 when the union has no area)."""
    ax1, ay1, ax2, ay2 = (float(v) for v in a)
    bx1, by1, bx2, by2 = (float(v) for v in b)
    iw = min(ax2, bx2) - max(ax1, bx1)
    ih = min(ay2, by2) - max(ay1, by1)
    inter = iw * ih if iw > 0 and ih > 0 else 0.0
    union = box_area(a) + box_area(b) - inter
    return inter / union if union > 0 else 0.0


def _as_array(boxes: Iterable[Sequence[float]] | np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(boxes if isinstance(boxes, np.ndarray) else list(boxes), dtype=float)
    if arr.size == 0:
        return arr.reshape(0, 4)
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise ValueError(f"{name}: expected an (n, 4) array of boxes, got shape {arr.shape}")
    return arr


def iou_matrix(
    a: Iterable[Sequence[float]] | np.ndarray, b: Iterable[Sequence[float]] | np.ndarray
) -> np.ndarray:
    """IoU of every box in ``a`` (n×4) with every box in ``b`` (m×4): an n×m array."""
    aa, bb = _as_array(a, "a"), _as_array(b, "b")
    iw = np.minimum(aa[:, None, 2], bb[None, :, 2]) - np.maximum(aa[:, None, 0], bb[None, :, 0])
    ih = np.minimum(aa[:, None, 3], bb[None, :, 3]) - np.maximum(aa[:, None, 1], bb[None, :, 1])
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    area_a = np.clip(aa[:, 2] - aa[:, 0], 0, None) * np.clip(aa[:, 3] - aa[:, 1], 0, None)
    area_b = np.clip(bb[:, 2] - bb[:, 0], 0, None) * np.clip(bb[:, 3] - bb[:, 1], 0, None)
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def pairwise_iou(
    preds: Iterable[Sequence[float]] | np.ndarray, golds: Iterable[Sequence[float]] | np.ndarray
) -> np.ndarray:
    """IoU of ``preds[i]`` with ``golds[i]`` for each i (two n×4 arrays → n values)."""
    p, g = _as_array(preds, "preds"), _as_array(golds, "golds")
    if p.shape != g.shape:
        raise ValueError(f"preds and golds differ in shape: {p.shape} vs {g.shape}")
    iw = np.minimum(p[:, 2], g[:, 2]) - np.maximum(p[:, 0], g[:, 0])
    ih = np.minimum(p[:, 3], g[:, 3]) - np.maximum(p[:, 1], g[:, 1])
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    area_p = np.clip(p[:, 2] - p[:, 0], 0, None) * np.clip(p[:, 3] - p[:, 1], 0, None)
    area_g = np.clip(g[:, 2] - g[:, 0], 0, None) * np.clip(g[:, 3] - g[:, 1], 0, None)
    union = area_p + area_g - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def enclosing_box(boxes: Iterable[Sequence[float]] | np.ndarray) -> Box:
    """The smallest box enclosing all ``boxes`` (how several predicted boxes become one)."""
    arr = _as_array(boxes, "boxes")
    if arr.shape[0] == 0:
        raise ValueError("enclosing_box of no boxes")
    return (
        float(arr[:, 0].min()),
        float(arr[:, 1].min()),
        float(arr[:, 2].max()),
        float(arr[:, 3].max()),
    )


def point_in_box(point: Sequence[float], box: Sequence[float], *, inclusive: bool = True) -> bool:
    """Whether ``(x, y)`` lies in the box (on its edge counts when ``inclusive``)."""
    x, y = (float(v) for v in point)
    x1, y1, x2, y2 = (float(v) for v in box)
    if inclusive:
        return x1 <= x <= x2 and y1 <= y <= y2
    return x1 < x < x2 and y1 < y < y2


def acc_at_iou(ious: Sequence[float] | np.ndarray, threshold: float) -> float:
    """Share of questions whose IoU is ≥ ``threshold`` (nan for no questions)."""
    arr = np.asarray(ious, dtype=float).reshape(-1)
    if arr.size == 0:
        return math.nan
    if not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1:
        raise ValueError("IoUs must be finite and in [0, 1]; enter a missing box as IoU 0")
    # A tiny slack so that an IoU computed as 0.7499999999 from a 3:4 overlap meets t = 0.75.
    return float(np.mean(arr >= threshold - 1e-12))


def map_50_95(
    ious: Sequence[float] | np.ndarray, thresholds: Sequence[float] = MAP_THRESHOLDS
) -> float:
    """DocVAL/DLaVA mAP@[.50:.95]: mean over thresholds of ``acc_at_iou`` (nan for no questions)."""
    arr = np.asarray(ious, dtype=float).reshape(-1)
    if arr.size == 0:
        return math.nan
    return float(np.mean([acc_at_iou(arr, t) for t in thresholds]))


def to_pixels(box: Sequence[float], fmt: BoxFormat, image_size: tuple[float, float]) -> Box:
    """Convert a box given in ``fmt`` (pixels, 0–1000 or 0–1 of the image size) to pixels."""
    return _convert(box, fmt, image_size, lambda v, side, scale: v / scale * side)


def from_pixels(box: Sequence[float], fmt: BoxFormat, image_size: tuple[float, float]) -> Box:
    """Convert a pixel box to ``fmt`` (the inverse of ``to_pixels``)."""
    return _convert(box, fmt, image_size, lambda v, side, scale: v / side * scale)


def _convert(
    box: Sequence[float],
    fmt: BoxFormat,
    image_size: tuple[float, float],
    along: Callable[[float, float, float], float],
) -> Box:
    """Each coordinate mapped by ``along(value, image side, fmt's units per side)``."""
    x1, y1, x2, y2 = (float(v) for v in box)
    width, height = float(image_size[0]), float(image_size[1])
    if fmt == "pixels":
        return x1, y1, x2, y2
    scale = {"0-1000": 1000.0, "0-1": 1.0}.get(fmt)
    if scale is None:
        raise ValueError(f"unknown box format {fmt!r}; expected one of {BOX_FORMATS}")
    return (
        along(x1, width, scale),
        along(y1, height, scale),
        along(x2, width, scale),
        along(y2, height, scale),
    )
