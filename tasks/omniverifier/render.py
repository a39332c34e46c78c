"""Draw a ``Scene`` to pixels: background, shapes, signs; every random choice from the scene's seed.

``render(scene)`` is a pure function of the scene (its ``style`` holds the seed, the colour
jitter, alpha, noise and the background crop), so the same scene gives byte-identical PNGs on
every run. It also returns how much of each object stays visible after later objects are drawn
over it (the exact consistency check counts a mostly hidden object as absent).

Backgrounds: ``plain`` (light grey); textures and photographs bundled with scikit-image
(``skimage.data``: brick, grass, gravel — grey textures; astronaut, coffee, chelsea, rocket,
immunohistochemistry, hubble_deep_field — colour photographs), cropped and scaled per scene.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from methods.omniverifier import COLOURS, Scene, SceneObject, sign_plate, sign_size

__all__ = [
    "BACKGROUNDS",
    "PHOTOS",
    "TEXTURES",
    "Rendered",
    "object_mask",
    "render",
    "sign_box",
    "visibility",
]

TEXTURES: tuple[str, ...] = ("brick", "grass", "gravel")
PHOTOS: tuple[str, ...] = (
    "astronaut",
    "coffee",
    "chelsea",
    "rocket",
    "immunohistochemistry",
    "hubble_deep_field",
)
BACKGROUNDS: tuple[str, ...] = ("plain", *TEXTURES, *PHOTOS)


@dataclass(frozen=True)
class Rendered:
    """A drawn scene: RGB pixels, the PNG bytes, and each object's visible share."""

    pixels: np.ndarray  # H × W × 3 uint8
    png: bytes
    visible: tuple[float, ...]


def sign_box(word: str, cx: float, cy: float) -> tuple[int, int, int, int]:
    """The box of a sign reading ``word`` centred at (cx, cy)."""
    w, h = sign_size(word)
    x1, y1 = round(cx - w / 2), round(cy - h / 2)
    return (x1, y1, x1 + w, y1 + h)


@lru_cache(maxsize=16)
def _source(name: str) -> np.ndarray:
    import skimage.data

    img = getattr(skimage.data, name)()
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    return np.ascontiguousarray(img[..., :3]).astype(np.uint8)


def _background(scene: Scene) -> np.ndarray:
    w, h = scene.width, scene.height
    name = scene.background
    if name == "plain":
        return np.full((h, w, 3), 226, dtype=np.uint8)
    if name not in BACKGROUNDS:
        raise ValueError(f"unknown background {name!r}; expected one of {BACKGROUNDS}")
    src = _source(name)
    scale = float(scene.style.get("bg_scale", 1.0))
    sh, sw = src.shape[:2]
    factor = max(w / sw, h / sh) * scale
    size = (max(w, round(sw * factor)), max(h, round(sh * factor)))
    big = np.asarray(Image.fromarray(src).resize(size, Image.Resampling.BILINEAR))
    fx, fy = scene.style.get("bg_offset", (0.0, 0.0))
    x0 = round(float(fx) * (size[0] - w))
    y0 = round(float(fy) * (size[1] - h))
    crop = big[y0 : y0 + h, x0 : x0 + w].astype(np.float32)
    if name in TEXTURES:  # grey textures: lightened so painted colours stand out
        crop = 110.0 + 0.55 * crop
    return np.clip(crop, 0, 255).astype(np.uint8)


def object_mask(obj: SceneObject, width: int, height: int) -> np.ndarray:
    """Boolean mask of the pixels ``obj`` paints (before occlusion)."""
    mask = Image.new("L", (width, height), 0)
    draw = ImageDraw.Draw(mask)
    x1, y1, x2, y2 = obj.box
    if obj.is_sign or obj.shape == "square":
        draw.rectangle([x1, y1, x2 - 1, y2 - 1], fill=255)
    elif obj.shape == "circle":
        draw.ellipse([x1, y1, x2 - 1, y2 - 1], fill=255)
    elif obj.shape == "triangle":
        cx = (x1 + x2 - 1) / 2
        draw.polygon([(cx, y1), (x2 - 1, y2 - 1), (x1, y2 - 1)], fill=255)
    elif obj.shape == "diamond":
        cx, cy = (x1 + x2 - 1) / 2, (y1 + y2 - 1) / 2
        draw.polygon([(cx, y1), (x2 - 1, cy), (cx, y2 - 1), (x1, cy)], fill=255)
    else:
        raise ValueError(f"cannot draw shape {obj.shape!r}")
    return np.asarray(mask) > 0


def visibility(scene: Scene) -> tuple[float, ...]:
    """Visible share of each object once the objects drawn after it cover it."""
    owner = np.full((scene.height, scene.width), -1, dtype=np.int32)
    areas = []
    for i, obj in enumerate(scene.objects):
        mask = object_mask(obj, scene.width, scene.height)
        areas.append(int(mask.sum()))
        owner[mask] = i
    counts = np.bincount(owner[owner >= 0].ravel(), minlength=len(scene.objects))
    return tuple(float(c / a) if a else 0.0 for c, a in zip(counts, areas, strict=True))


def _code(obj: SceneObject) -> int:
    return 7 * list(COLOURS).index(str(obj.colour)) + (
        "circle",
        "square",
        "triangle",
        "diamond",
    ).index(str(obj.shape))


def render(scene: Scene) -> Rendered:
    """Draw ``scene`` (deterministic: all randomness comes from ``scene.style['seed']``)."""
    style = scene.style
    rng = np.random.default_rng(int(style.get("seed", 0)))
    jitter = float(style.get("jitter", 0.0))
    alpha = float(style.get("alpha", 1.0))
    noise = float(style.get("noise", 0.0))
    canvas = _background(scene).astype(np.float32)
    for obj in scene.objects:
        mask = object_mask(obj, scene.width, scene.height)
        if obj.is_sign:
            x1, y1, x2, y2 = obj.box
            plate = sign_plate(str(obj.text)).astype(np.float32)
            # Paste the part of the plate that lies on the canvas.
            cx1, cy1 = max(x1, 0), max(y1, 0)
            cx2, cy2 = min(x2, scene.width), min(y2, scene.height)
            if cx2 > cx1 and cy2 > cy1:
                canvas[cy1:cy2, cx1:cx2] = plate[cy1 - y1 : cy2 - y1, cx1 - x1 : cx2 - x1]
            continue
        base = np.array(COLOURS[str(obj.colour)], dtype=np.float32)
        # Each object's jitter comes from its own seed (scene seed + where and what it is), so an
        # injected error changes the pixels of the erroneous object only.
        own = np.random.default_rng(
            [int(style.get("seed", 0)), *(v + 10_000 for v in obj.box), _code(obj)]
        )
        colour = np.clip(base + own.uniform(-jitter, jitter, size=3), 0, 255)
        canvas[mask] = alpha * colour + (1.0 - alpha) * canvas[mask]
    if noise > 0:
        canvas += rng.normal(0.0, noise, size=canvas.shape).astype(np.float32)
    pixels = np.clip(np.rint(canvas), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG", compress_level=6)
    return Rendered(pixels=pixels, png=buf.getvalue(), visible=visibility(scene))
