"""Degradation levels applied after drawing: blur, noise, rotation (boxes rotated with the
page), low resolution and JPEG."""

from __future__ import annotations

import io
import math
import random
from typing import Any, Literal

from methods.docval import Word
from scorers.boxes import Box

Degradation = Literal["none", "low", "medium", "high"]
DEGRADATIONS: tuple[Degradation, ...] = ("none", "low", "medium", "high")
_LEVELS: dict[str, dict[str, float]] = {
    "none": {"blur": 0.0, "noise": 0.0, "rotate": 0.0, "scale": 1.0, "jpeg": 0},
    "low": {"blur": 0.5, "noise": 8.0, "rotate": 0.7, "scale": 0.8, "jpeg": 80},
    "medium": {"blur": 1.0, "noise": 18.0, "rotate": 1.5, "scale": 0.6, "jpeg": 45},
    "high": {"blur": 1.5, "noise": 30.0, "rotate": 2.5, "scale": 0.45, "jpeg": 25},
}


# --------------------------------------------------------------------------- degradation


def _rotate_box(box: Box, angle_deg: float, center: tuple[float, float]) -> Box:
    """The enclosing box of ``box`` rotated like ``Image.rotate(angle_deg)`` (counter-clockwise
    on screen) about ``center``."""
    cx, cy = center
    t = math.radians(angle_deg)
    c, s = math.cos(t), math.sin(t)
    pts = []
    for x, y in ((box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3])):
        dx, dy = x - cx, y - cy
        pts.append((cx + dx * c + dy * s, cy - dx * s + dy * c))
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return (min(xs), min(ys), max(xs), max(ys))


def degrade(
    image: Any, words: list[Word], level: Degradation, rng: random.Random
) -> tuple[Any, list[Word], float]:
    """Apply ``level``'s blur, noise, rotation, low resolution and JPEG; returns the image, the
    words with boxes moved by the rotation (clipped to the page) and the angle used."""
    import numpy as np
    from PIL import Image, ImageFilter

    p = _LEVELS[level]
    if level == "none":
        return image, words, 0.0
    w, h = image.size
    angle = p["rotate"] * rng.choice([-1.0, 1.0]) * rng.uniform(0.6, 1.0)
    image = image.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor="white")
    moved = []
    for word in words:
        x1, y1, x2, y2 = _rotate_box(word.box, angle, (w / 2, h / 2))
        moved.append(
            Word(
                word.text,
                (max(0.0, x1), max(0.0, y1), min(float(w), x2), min(float(h), y2)),
                word.conf,
                word.line,
            )
        )
    if p["scale"] < 1.0:
        small = image.resize(
            (max(1, int(w * p["scale"])), max(1, int(h * p["scale"]))), Image.Resampling.BILINEAR
        )
        image = small.resize((w, h), Image.Resampling.BILINEAR)
    if p["blur"] > 0:
        image = image.filter(ImageFilter.GaussianBlur(p["blur"]))
    if p["noise"] > 0:
        nrng = np.random.default_rng(rng.randint(0, 2**31))
        arr = np.asarray(image, dtype=np.float32)
        noisy = arr + nrng.normal(0.0, p["noise"], size=arr.shape[:2])[..., None]
        image = Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))
    if p["jpeg"]:
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=int(p["jpeg"]))
        buffer.seek(0)
        image = Image.open(buffer).convert("RGB")
    return image, moved, angle
