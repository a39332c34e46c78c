"""Verifiers that need no VLM: a classical-vision verifier (scikit-image) and "always true".

``ColourShapeDetector`` finds the scene vocabulary's objects in an RGB image:

1. colour segmentation: a pixel belongs to a palette colour when its CIE-Lab distance (ΔE76) to
   that colour is below ``colour_threshold`` and its chroma is high enough (grey backgrounds do
   not count); masks are opened, small specks removed;
2. touching objects of one colour are split by a watershed on the distance transform;
3. each region's shape comes from ``regionprops``: extent (area / box area) ≈ 1 square,
   ≈ π/4 circle, ≈ ½ triangle or diamond, told apart by where the mass sits (a triangle's
   centroid lies at ⅔ of its height); its size from the box side;
4. signs: near-white rectangular plates, read by matching the plate against every word of the
   vocabulary drawn the same way (normalised correlation; best word above ``read_threshold``).

``ClassicalVerifier`` runs the detector and the exact spec check (``check_scene``) on the detected
objects: no violation → True; otherwise False with the box(es) and action of the first
violation that has a box (extra > text > relation > count > missing). PyOD-style interface:
``fit`` (no training: returns self), ``decision_function`` (number of violations, higher = more
likely wrong), ``predict`` (1 = wrong).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from methods.omniverifier._parse import VerifierOutput, format_verifier_output
from methods.omniverifier._scene import (
    COLOURS,
    WORDS,
    SceneObject,
    SceneSpec,
    Violation,
    check_scene,
)
from methods.omniverifier._sign import sign_plate

__all__ = [
    "AlwaysTrueVerifier",
    "ClassicalVerifier",
    "ColourShapeDetector",
    "describe_detections",
]

_PRIORITY = {"extra": 0, "text": 1, "relation": 2, "count": 3, "missing": 4}


def _lab(rgb: np.ndarray) -> np.ndarray:
    from skimage.color import rgb2lab

    return rgb2lab(rgb.astype(np.float64) / 255.0)


@dataclass
class ColourShapeDetector:
    """Colour/shape segmentation of the scene vocabulary (steps in the module docstring)."""

    colour_threshold: float = 30.0
    min_chroma: float = 25.0
    min_area: int = 60
    size_threshold: float = 39.0  # box side separating small (26 px) from large (52 px)
    split_touching: bool = True
    min_solidity: float = 0.8
    min_side: int = 16
    max_side: int = 64
    read_threshold: float = 0.45

    def detect(self, image: np.ndarray) -> list[SceneObject]:
        """Objects found in an H × W × 3 uint8 image, shapes first, then signs."""
        if image.ndim != 3 or image.shape[2] < 3:
            raise ValueError(f"expected an H x W x 3 image, got shape {image.shape}")
        rgb = np.ascontiguousarray(image[..., :3])
        lab = _lab(rgb)
        return self._shapes(lab) + self._signs(rgb, lab)

    def _shapes(self, lab: np.ndarray) -> list[SceneObject]:
        from scipy import ndimage as ndi
        from skimage.measure import label, regionprops
        from skimage.morphology import disk, remove_small_objects

        chroma = np.hypot(lab[..., 1], lab[..., 2])
        names = list(COLOURS)
        refs = _lab(np.array([[COLOURS[n] for n in names]], dtype=np.uint8))[0]
        dist = np.stack([np.linalg.norm(lab - ref, axis=-1) for ref in refs], axis=-1)
        nearest = dist.argmin(axis=-1)
        ok = (dist.min(axis=-1) < self.colour_threshold) & (chroma >= self.min_chroma)
        found: list[SceneObject] = []
        for ci, name in enumerate(names):
            mask = ok & (nearest == ci)
            if not mask.any():
                continue
            mask = ndi.binary_opening(mask, structure=disk(2))
            mask = remove_small_objects(mask, max_size=self.min_area - 1)
            labels = self._split(mask) if self.split_touching else label(mask)
            for region in regionprops(labels):
                y1, x1, y2, x2 = region.bbox
                side = max(x2 - x1, y2 - y1)
                # Painted shapes are solid and of two known sizes; background blobs rarely are.
                if region.area < self.min_area or region.solidity < self.min_solidity:
                    continue
                if not self.min_side <= side <= self.max_side:
                    continue
                shape = _classify(region)
                size = "large" if side >= self.size_threshold else "small"
                found.append(SceneObject((int(x1), int(y1), int(x2), int(y2)), shape, name, size))
        return found

    def _split(self, mask: np.ndarray) -> np.ndarray:
        from scipy import ndimage as ndi
        from skimage.feature import peak_local_max
        from skimage.measure import label
        from skimage.segmentation import watershed

        distance = ndi.distance_transform_edt(mask)
        labels = label(mask)
        peaks = peak_local_max(
            distance, min_distance=9, threshold_abs=6.0, labels=labels, exclude_border=False
        )
        if len(peaks) <= labels.max():
            return labels
        markers = np.zeros(mask.shape, dtype=np.int32)
        for i, (r, c) in enumerate(peaks, start=1):
            markers[r, c] = i
        return watershed(-distance, markers, mask=mask)

    def _signs(self, rgb: np.ndarray, lab: np.ndarray) -> list[SceneObject]:
        from skimage.filters import gaussian
        from skimage.measure import label, regionprops

        # Smoothed, so that pixel noise does not break a plate into specks.
        light = gaussian(lab[..., 0], sigma=1.0, preserve_range=True)
        chroma = gaussian(np.hypot(lab[..., 1], lab[..., 2]), sigma=1.0, preserve_range=True)
        plate_like = (light > 95) & (chroma < 10)
        out: list[SceneObject] = []
        for region in regionprops(label(plate_like)):
            y1, x1, y2, x2 = region.bbox
            h, w = y2 - y1, x2 - x1
            if h < 14 or w < 1.5 * h or h > 50 or region.area < 0.25 * h * w:
                continue
            # The plate's black border lies just outside the white region; the letters inside.
            box = (
                max(0, x1 - 4),
                max(0, y1 - 4),
                min(rgb.shape[1], x2 + 4),
                min(rgb.shape[0], y2 + 4),
            )
            word, corr = self.read(rgb[y1:y2, x1:x2])
            if corr < self.read_threshold:
                continue
            out.append(SceneObject(box, text=word))
        return out

    def read(self, crop: np.ndarray) -> tuple[str, float]:
        """The vocabulary word whose letters best match the ink inside a plate's white area.

        Both sides are cut to the bounding box of their dark pixels before the correlation, so
        the match does not depend on where the plate's edge was found.
        """
        from skimage.transform import resize

        ink = _ink(crop[..., :3].astype(np.float64).mean(axis=-1))
        if ink is None:
            return "", 0.0
        best, best_corr = "", -1.0
        for word in WORDS:
            template = _word_ink(word)
            a = resize(ink, template.shape, anti_aliasing=True, preserve_range=True)
            corr = _ncc(a, template)
            if corr > best_corr:
                best, best_corr = word, corr
        return best, best_corr


def _ink(gray: np.ndarray) -> np.ndarray | None:
    """``gray`` cut to the bounding box of its dark (ink) pixels; None without ink."""
    dark = gray < 0.5 * (float(gray.max()) + float(gray.min()))
    rows, cols = np.flatnonzero(dark.any(axis=1)), np.flatnonzero(dark.any(axis=0))
    if rows.size < 4 or cols.size < 4:
        return None
    return gray[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


@lru_cache(maxsize=64)
def _word_ink(word: str) -> np.ndarray:
    plate = sign_plate(word).astype(np.float64).mean(axis=-1)
    inner = plate[4:-4, 4:-4]  # inside the border
    ink = _ink(inner)
    assert ink is not None
    return ink


def _ncc(a: np.ndarray, b: np.ndarray) -> float:
    a = a - a.mean()
    b = b - b.mean()
    denom = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / denom) if denom > 0 else 0.0


def _classify(region) -> str:  # region: skimage RegionProperties
    extent = float(region.extent)
    if extent >= 0.88:
        return "square"
    if extent >= 0.68:
        return "circle"
    y1, _, y2, _ = region.bbox
    cy = float(region.centroid[0])
    return "triangle" if (cy - y1) / max(1, y2 - y1) > 0.58 else "diamond"


def describe_detections(objects: Sequence[SceneObject], width: int, height: int) -> str:
    """The object list a text-only model gets instead of the image."""
    if not objects:
        return f"Detected objects in the {width}x{height} image: none."
    lines = [f"Detected objects in the {width}x{height} image (pixel boxes [x1, y1, x2, y2]):"]
    for i, o in enumerate(objects, start=1):
        lines.append(f"{i}. {o.describe()} at {list(o.box)}")
    return "\n".join(lines)


def _first_violation(violations: Sequence[Violation]) -> Violation:
    with_box = [v for v in violations if v.boxes]
    pool = with_box or list(violations)
    return min(pool, key=lambda v: _PRIORITY.get(v.kind, 9))


@dataclass
class ClassicalVerifier:
    """Detector + exact spec check; answers in the verifier reply format."""

    detector: ColourShapeDetector | None = None

    def __post_init__(self) -> None:
        if self.detector is None:
            self.detector = ColourShapeDetector()

    def fit(
        self,
        images: Sequence[np.ndarray] | None = None,  # noqa: ARG002 - scikit-learn interface
        specs: Sequence[SceneSpec] | None = None,  # noqa: ARG002 - scikit-learn interface
    ) -> ClassicalVerifier:
        """No training: the thresholds are fixed (returns self)."""
        return self

    def violations(
        self, image: np.ndarray, spec: SceneSpec
    ) -> tuple[list[SceneObject], list[Violation]]:
        assert self.detector is not None
        found = self.detector.detect(image)
        return found, check_scene(found, spec)

    def verify(self, image: np.ndarray, spec: SceneSpec) -> VerifierOutput:
        found, violations = self.violations(image, spec)
        think = f"{len(found)} objects detected; {len(violations)} violation(s)"
        if not violations:
            text = format_verifier_output(True, think=think)
            return _with_score(text, 0.0)
        v = _first_violation(violations)
        # One box per answer: a group with too many members gets its last-detected member.
        boxes = v.boxes[-1:] if v.kind == "count" else v.boxes
        point = None
        if boxes:
            x1, y1, x2, y2 = boxes[0]
            point = ((x1 + x2) / 2, (y1 + y2) / 2)
        text = format_verifier_output(
            False,
            think=think,
            boxes=list(boxes),
            point=point,
            action=v.action,
            explanation=v.detail,
        )
        return _with_score(text, float(len(violations)))

    def decision_function(
        self, images: Sequence[np.ndarray], specs: Sequence[SceneSpec]
    ) -> np.ndarray:
        """Number of violations per image (higher = more likely inconsistent)."""
        return np.array(
            [len(self.violations(i, s)[1]) for i, s in zip(images, specs, strict=True)], dtype=float
        )

    def predict(self, images: Sequence[np.ndarray], specs: Sequence[SceneSpec]) -> np.ndarray:
        """1 = inconsistent, 0 = consistent."""
        return (self.decision_function(images, specs) > 0).astype(int)


def _with_score(text: str, score: float) -> VerifierOutput:
    from dataclasses import replace

    from methods.omniverifier._parse import parse_verifier_output

    return replace(parse_verifier_output(text), score=score)


@dataclass
class AlwaysTrueVerifier:
    """Says every image is consistent (the majority-free floor: 0.5 accuracy on a 1:1 set)."""

    def fit(self, images=None, specs=None):  # noqa: ARG002 - scikit-learn interface
        return self

    def verify(self, image: np.ndarray, spec: SceneSpec) -> VerifierOutput:  # noqa: ARG002 - verifier interface
        return _with_score(format_verifier_output(True, think="always true"), 0.0)

    def decision_function(
        self,
        images: Sequence[np.ndarray],
        specs: Sequence[SceneSpec],  # noqa: ARG002 - verifier interface
    ) -> np.ndarray:
        return np.zeros(len(images))

    def predict(self, images: Sequence[np.ndarray], specs: Sequence[SceneSpec]) -> np.ndarray:
        return (self.decision_function(images, specs) > 0).astype(int)
