"""Seeded scenes: prompt-consistent layouts and single injected errors with their exact boxes.

``make_pair(seed, index, level, error_type)`` draws a spec (the prompt), lays out a scene that
satisfies it, and injects exactly one error of ``error_type`` into a copy, returning the error's
box (where the wrong, extra, moved or removed object is or was). Everything comes from
``numpy.random.default_rng([seed, index])``, so a dataset is reproducible from its seed alone.

Error types and the ViVerBench subtask each is reported under (the mapping is ours):

| error type | what changes | error box | subtask |
|---|---|---|---|
| missing_object | a single object is removed | where it was | Concept Existence: Object |
| extra_object | an object of a kind not in the prompt is added | the added object | Concept Existence: Object |
| wrong_colour | one object is repainted in another colour | the object | Concept Existence: Attribute |
| wrong_size | one object becomes small↔large (same centre) | the resized object | Concept Existence: Attribute |
| wrong_count | a group of ≥ 2 gets one object more or fewer | the added / removed one | Image Annotation: Count |
| wrong_relation | an object of a relation moves to the other side | the moved object | Object Relationship: Spatial |
| wrong_text | the sign reads another word | the sign | Scene Text (no ViVerBench counterpart) |

Levels: ``easy`` (plain background, ≤ 3 per group, no overlap, exact colours), ``medium``
(grey textures, ≤ 6 per group, touching/overlapping objects, colour jitter, pixel noise),
``hard`` (colour photographs, ≤ 12 per group, heavier overlap, jitter, translucency, noise).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, get_args

import numpy as np

from methods.omniverifier import (
    COLOURS,
    RELATIONS,
    SHAPES,
    SIZES,
    WORDS,
    ObjectGroup,
    Relation,
    Scene,
    SceneObject,
    SceneSpec,
    check_scene,
)
from tasks.omniverifier.render import PHOTOS, TEXTURES, sign_box, visibility

__all__ = [
    "ERROR_TYPES",
    "HEIGHT",
    "WIDTH",
    "NoRoom",
    "inject_error",
    "place_box",
    "LEVELS",
    "SUBTASK_OF",
    "ErrorType",
    "Level",
    "LevelName",
    "ScenePair",
    "layout",
    "make_pair",
]

ErrorType = Literal[
    "missing_object",
    "extra_object",
    "wrong_colour",
    "wrong_size",
    "wrong_count",
    "wrong_relation",
    "wrong_text",
]
ERROR_TYPES: tuple[ErrorType, ...] = get_args(ErrorType)
SUBTASK_OF: dict[str, str] = {
    "missing_object": "Concept Existence: Object",
    "extra_object": "Concept Existence: Object",
    "wrong_colour": "Concept Existence: Attribute",
    "wrong_size": "Concept Existence: Attribute",
    "wrong_count": "Image Annotation: Count",
    "wrong_relation": "Object Relationship: Spatial",
    "wrong_text": "Scene Text",
}
LevelName = Literal["easy", "medium", "hard"]
WIDTH = HEIGHT = 320
_MARGIN = 6  # keep objects this far inside the canvas
_RELATION_GAP = 24  # consistent relations hold by at least this many pixels between centres


@dataclass(frozen=True)
class Level:
    name: str
    backgrounds: tuple[str, ...]
    max_count: int
    max_groups: int
    overlap: float  # max share of the smaller box another box may cover (0: 4 px apart)
    jitter: float
    alpha: float
    noise: float
    small_share: float


LEVELS: dict[str, Level] = {
    "easy": Level("easy", ("plain",), 3, 3, 0.0, 0.0, 1.0, 0.0, 0.3),
    "medium": Level("medium", TEXTURES, 6, 3, 0.2, 22.0, 0.9, 5.0, 0.45),
    "hard": Level("hard", PHOTOS, 12, 3, 0.3, 30.0, 0.85, 8.0, 0.5),
}


@dataclass(frozen=True)
class ScenePair:
    """A prompt, a scene that satisfies it and one with a single injected error."""

    spec: SceneSpec
    consistent: Scene
    erroneous: Scene
    error_type: str
    error_box: tuple[int, int, int, int]
    error_detail: str
    level: str
    seed: int
    index: int

    @property
    def subtask(self) -> str:
        return SUBTASK_OF[self.error_type]


class NoRoom(RuntimeError):
    """Rejection sampling found no place; the caller redraws."""


def _box(cx: int, cy: int, size: str) -> tuple[int, int, int, int]:
    r = SIZES[size]
    return (cx - r, cy - r, cx + r, cy + r)


def _inside(box: tuple[int, int, int, int]) -> bool:
    x1, y1, x2, y2 = box
    return x1 >= _MARGIN and y1 >= _MARGIN and x2 <= WIDTH - _MARGIN and y2 <= HEIGHT - _MARGIN


def _fits(box, others, overlap: float) -> bool:
    x1, y1, x2, y2 = box
    area = (x2 - x1) * (y2 - y1)
    for o in others:
        ox1, oy1, ox2, oy2 = o
        if overlap <= 0:
            if x1 < ox2 + 4 and ox1 < x2 + 4 and y1 < oy2 + 4 and oy1 < y2 + 4:
                return False
            continue
        iw, ih = min(x2, ox2) - max(x1, ox1), min(y2, oy2) - max(y1, oy1)
        if iw > 0 and ih > 0:
            smaller = min(area, (ox2 - ox1) * (oy2 - oy1))
            if iw * ih > overlap * smaller:
                return False
    return True


def place_box(rng, size_box, others, overlap, region=None, tries: int = 400):
    """A box (from ``size_box(cx, cy)``) on the canvas that fits among ``others``."""
    for _ in range(tries):
        if region is None:
            cx, cy = int(rng.integers(0, WIDTH)), int(rng.integers(0, HEIGHT))
        else:
            rx1, ry1, rx2, ry2 = region
            if rx2 <= rx1 or ry2 <= ry1:
                raise NoRoom("empty region")
            cx, cy = int(rng.integers(rx1, rx2)), int(rng.integers(ry1, ry2))
        box = size_box(cx, cy)
        if _inside(box) and _fits(box, others, overlap):
            return box
    raise NoRoom("no free place")


def _style(rng, level: Level) -> tuple[str, dict]:
    background = str(level.backgrounds[int(rng.integers(len(level.backgrounds)))])
    style = {
        "seed": int(rng.integers(2**31)),
        "jitter": level.jitter,
        "alpha": level.alpha,
        "noise": level.noise,
        "bg_scale": round(float(rng.uniform(1.0, 1.6)), 3),
        "bg_offset": (round(float(rng.uniform()), 3), round(float(rng.uniform()), 3)),
    }
    return background, style


def _sample_spec(rng, level: Level, error_type: str) -> SceneSpec:
    n_groups = int(rng.integers(1, level.max_groups + 1))
    if error_type == "wrong_relation":
        n_groups = max(n_groups, 2)
    keys: list[tuple[str, str, str]] = []
    while len(keys) < n_groups:
        key = (
            str(rng.choice(SHAPES)),
            str(rng.choice(list(COLOURS))),
            "small" if rng.uniform() < level.small_share else "large",
        )
        if key not in keys:
            keys.append(key)
    counts = [int(rng.integers(1, level.max_count + 1)) for _ in keys]
    if error_type in ("missing_object", "wrong_relation"):
        counts[0] = 1
    if error_type == "wrong_relation":
        counts[1] = 1
    if error_type == "wrong_count" and max(counts) < 2:
        counts[0] = int(rng.integers(2, max(3, level.max_count + 1)))
    groups = tuple(ObjectGroup(*k, count=c) for k, c in zip(keys, counts, strict=True))
    singles = [i for i, g in enumerate(groups) if g.count == 1]
    relations: tuple[Relation, ...] = ()
    if error_type == "wrong_relation" or (len(singles) >= 2 and rng.uniform() < 0.4):
        a, b = (
            (0, 1)
            if error_type == "wrong_relation"
            else tuple(rng.choice(singles, 2, replace=False))
        )
        relations = (Relation(int(a), str(rng.choice(RELATIONS)), int(b)),)
    sign = None
    if error_type == "wrong_text" or rng.uniform() < 0.3:
        sign = str(rng.choice(WORDS))
    return SceneSpec(groups=groups, relations=relations, sign=sign)


def _relation_region(
    rel: str, anchor: tuple[int, int, int, int], gap: int
) -> tuple[int, int, int, int]:
    """Centres satisfying ``rel`` with respect to the anchor box's centre, by ≥ ``gap`` px."""
    ax, ay = (anchor[0] + anchor[2]) // 2, (anchor[1] + anchor[3]) // 2
    return {
        "left of": (0, 0, ax - gap, HEIGHT),
        "right of": (ax + gap + 1, 0, WIDTH, HEIGHT),
        "above": (0, 0, WIDTH, ay - gap),
        "below": (0, ay + gap + 1, WIDTH, HEIGHT),
    }[rel]


def _opposite(rel: str) -> str:
    return {"left of": "right of", "right of": "left of", "above": "below", "below": "above"}[rel]


def layout(spec: SceneSpec, rng, level: Level) -> Scene:
    """A scene satisfying ``spec`` (objects ≥ 60 % visible); raises ``NoRoom`` when crowded."""
    background, style = _style(rng, level)
    boxes: list[tuple[int, int, int, int]] = []
    objects: list[SceneObject] = []
    placed: dict[int, tuple[int, int, int, int]] = {}
    related_a = {r.a: r for r in spec.relations}
    order = sorted(range(len(spec.groups)), key=lambda i: i in related_a)  # anchors first
    for gi in order:
        g = spec.groups[gi]
        for _ in range(g.count):
            region = None
            if gi in related_a:
                r = related_a[gi]
                region = _relation_region(r.rel, placed[r.b], _RELATION_GAP)
            box = place_box(
                rng, lambda cx, cy, s=g.size: _box(cx, cy, s), boxes, level.overlap, region
            )
            boxes.append(box)
            placed[gi] = box
            objects.append(SceneObject(box, g.shape, g.colour, g.size))
    if spec.sign is not None:
        word = spec.sign
        box = place_box(rng, lambda cx, cy: sign_box(word, cx, cy), boxes, 0.0)
        boxes.append(box)
        objects.append(SceneObject(box, text=word))
    # Draw order shuffled (signs last so that text stays legible).
    shapes = [o for o in objects if not o.is_sign]
    perm = rng.permutation(len(shapes))
    ordered = [shapes[i] for i in perm] + [o for o in objects if o.is_sign]
    scene = Scene(WIDTH, HEIGHT, tuple(ordered), background=background, style=style)
    if min(visibility(scene), default=1.0) < 0.6:
        raise NoRoom("an object is mostly hidden")
    return scene


def _others(scene: Scene, skip: SceneObject | None = None) -> list[tuple[int, int, int, int]]:
    return [o.box for o in scene.objects if o is not skip]


def inject_error(scene: Scene, spec: SceneSpec, error_type: str, rng, level: Level):
    objs = list(scene.objects)
    shapes = [o for o in objs if not o.is_sign]
    spec_keys = {g.key for g in spec.groups}
    if error_type == "missing_object":
        singles = [g.key for g in spec.groups if g.count == 1]
        key = singles[int(rng.integers(len(singles)))]
        victim = next(o for o in shapes if o.key == key)
        objs.remove(victim)
        return objs, victim.box, f"removed the {victim.describe()}"
    if error_type == "extra_object":
        while True:
            key = (
                str(rng.choice(SHAPES)),
                str(rng.choice(list(COLOURS))),
                str(rng.choice(list(SIZES))),
            )
            if key not in spec_keys:
                break
        box = place_box(rng, lambda cx, cy: _box(cx, cy, key[2]), _others(scene), level.overlap)
        new = SceneObject(box, *key)
        objs.insert(int(rng.integers(len(shapes) + 1)), new)
        return objs, box, f"added a {new.describe()}"
    if error_type in ("wrong_colour", "wrong_size"):
        for victim in rng.permutation(np.array(shapes, dtype=object)):
            if error_type == "wrong_colour":
                choices = [c for c in COLOURS if (victim.shape, c, victim.size) not in spec_keys]
                new = replace(victim, colour=str(rng.choice(choices)))
            else:
                other = "small" if victim.size == "large" else "large"
                if (victim.shape, victim.colour, other) in spec_keys:
                    continue
                cx, cy = (round(c) for c in victim.centre)
                new = replace(victim, size=other, box=_box(cx, cy, other))
                if not (_inside(new.box) and _fits(new.box, _others(scene, victim), level.overlap)):
                    continue
            objs[objs.index(victim)] = new
            return objs, new.box, f"{victim.describe()} drawn as {new.describe()}"
        raise NoRoom(f"no object can take {error_type}")
    if error_type == "wrong_count":
        groups = [g for g in spec.groups if g.count >= 2]
        g = groups[int(rng.integers(len(groups)))]
        members = [o for o in shapes if o.key == g.key]
        if rng.uniform() < 0.5 or g.count >= 12:
            victim = members[int(rng.integers(len(members)))]
            objs.remove(victim)
            return (
                objs,
                victim.box,
                f"one {victim.describe()} fewer ({g.count - 1} instead of {g.count})",
            )
        box = place_box(rng, lambda cx, cy: _box(cx, cy, g.size), _others(scene), level.overlap)
        new = SceneObject(box, g.shape, g.colour, g.size)
        objs.insert(int(rng.integers(len(shapes) + 1)), new)
        return objs, box, f"one {new.describe()} more ({g.count + 1} instead of {g.count})"
    if error_type == "wrong_relation":
        r = spec.relations[0]
        a_obj = next(o for o in shapes if o.key == spec.groups[r.a].key)
        b_obj = next(o for o in shapes if o.key == spec.groups[r.b].key)
        region = _relation_region(_opposite(r.rel), b_obj.box, _RELATION_GAP)
        size = str(a_obj.size)
        box = place_box(
            rng, lambda cx, cy: _box(cx, cy, size), _others(scene, a_obj), level.overlap, region
        )
        moved = replace(a_obj, box=box)
        objs[objs.index(a_obj)] = moved
        return objs, box, f"the {a_obj.describe()} is now {_opposite(r.rel)} the {b_obj.describe()}"
    if error_type == "wrong_text":
        sign = next(o for o in objs if o.is_sign)
        word = str(rng.choice([w for w in WORDS if w != sign.text]))
        cx, cy = sign.centre
        box = sign_box(word, cx, cy)
        new = replace(sign, text=word, box=box)
        if not (_inside(box) and _fits(box, _others(scene, sign), 0.0)):
            raise NoRoom("the new word does not fit")
        objs[objs.index(sign)] = new
        return objs, box, f"the sign reads '{word}' instead of '{sign.text}'"
    raise ValueError(f"unknown error type {error_type!r}; expected one of {ERROR_TYPES}")


def make_pair(seed: int, index: int, level: LevelName | str, error_type: str) -> ScenePair:
    """A spec, a consistent scene and one with a single ``error_type`` error (seeded)."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; expected one of {tuple(LEVELS)}")
    if error_type not in ERROR_TYPES:
        raise ValueError(f"unknown error type {error_type!r}; expected one of {ERROR_TYPES}")
    lv = LEVELS[level]
    rng = np.random.default_rng([seed, index])
    for _ in range(200):
        try:
            spec = _sample_spec(rng, lv, error_type)
            consistent = layout(spec, rng, lv)
            objs, box, detail = inject_error(consistent, spec, error_type, rng, lv)
        except NoRoom:
            continue
        erroneous = replace(consistent, objects=tuple(objs))
        vis = visibility(erroneous)
        if check_scene(consistent, spec, visible=visibility(consistent)):
            continue  # cannot happen by construction; guards the invariant
        if min(vis, default=1.0) < 0.6 or not check_scene(erroneous, spec, visible=vis):
            continue
        return ScenePair(
            spec, consistent, erroneous, error_type, box, detail, str(level), seed, index
        )
    raise RuntimeError(
        f"no {error_type} scene after 200 draws (seed={seed}, index={index}, {level})"
    )
