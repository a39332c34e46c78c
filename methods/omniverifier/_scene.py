"""Scene vocabulary, prompt specifications, drawn scenes and the exact consistency check.

A *spec* is what a prompt asks for (closed world: the scene holds exactly these objects); a
*scene* is what was drawn, with each object's exact pixel box. ``check_scene`` compares the two
and returns every violation with the box that shows it, the way the renderer's error boxes are
defined; it is the ground truth for TTS success and, applied to detected objects, the core of
the classical verifier.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

__all__ = [
    "COLOURS",
    "RELATIONS",
    "SHAPES",
    "SIZES",
    "WORDS",
    "EditAction",
    "ObjectGroup",
    "Relation",
    "Scene",
    "SceneFormatError",
    "SceneObject",
    "SceneSpec",
    "Violation",
    "check_scene",
    "scene_from_dict",
    "scene_from_json",
    "scene_to_json",
    "object_counts",
    "spec_from_dict",
]

SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "diamond")
#: Named colours and the RGB the renderer paints them with.
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30),
    "green": (30, 160, 50),
    "blue": (30, 70, 220),
    "yellow": (240, 210, 20),
    "purple": (140, 40, 170),
    "orange": (245, 130, 20),
}
#: Half the side of an object's box in pixels, per size word.
SIZES: dict[str, int] = {"small": 13, "large": 26}
RELATIONS: tuple[str, ...] = ("left of", "right of", "above", "below")
#: Words a sign may read (closed vocabulary, so a template reader can read them).
WORDS: tuple[str, ...] = (
    "OPEN",
    "STOP",
    "EXIT",
    "CAFE",
    "SALE",
    "PARK",
    "BANK",
    "TAXI",
    "HOTEL",
    "SHOP",
    "BAKE",
    "WEST",
)

Box = tuple[int, int, int, int]
Action = Literal["Add", "Delete", "Modify"]


class SceneFormatError(ValueError):
    """A scene description (JSON from a generator) that cannot be drawn; the message says why."""


@dataclass(frozen=True)
class EditAction:
    """M1-TTS's semantic action: an atomic edit the generator should make."""

    type: Action
    text: str


@dataclass(frozen=True)
class ObjectGroup:
    """``count`` objects of one shape, colour and size ("3 small red circles")."""

    shape: str
    colour: str
    size: str
    count: int = 1

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ValueError(f"unknown shape {self.shape!r}; expected one of {SHAPES}")
        if self.colour not in COLOURS:
            raise ValueError(f"unknown colour {self.colour!r}; expected one of {tuple(COLOURS)}")
        if self.size not in SIZES:
            raise ValueError(f"unknown size {self.size!r}; expected one of {tuple(SIZES)}")
        if not 1 <= self.count <= 12:
            raise ValueError(f"count must be 1..12, got {self.count}")

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.shape, self.colour, self.size)

    def phrase(self, count: int | None = None) -> str:
        n = self.count if count is None else count
        number = "a" if n == 1 else str(n)
        return f"{number} {self.size} {self.colour} {self.shape}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Relation:
    """Group ``a`` (a single object) lies ``rel`` group ``b`` (a single object), by centres."""

    a: int
    rel: str
    b: int

    def __post_init__(self) -> None:
        if self.rel not in RELATIONS:
            raise ValueError(f"unknown relation {self.rel!r}; expected one of {RELATIONS}")


@dataclass(frozen=True)
class SceneSpec:
    """What a prompt asks for: exactly these groups, these relations, and a sign (or none)."""

    groups: tuple[ObjectGroup, ...]
    relations: tuple[Relation, ...] = ()
    sign: str | None = None

    def __post_init__(self) -> None:
        keys = [g.key for g in self.groups]
        if len(set(keys)) != len(keys):
            raise ValueError(f"two groups share shape/colour/size: {keys}")
        for r in self.relations:
            for i in (r.a, r.b):
                if not 0 <= i < len(self.groups):
                    raise ValueError(f"relation {r} names group {i}, outside 0..{len(keys) - 1}")
                if self.groups[i].count != 1:
                    raise ValueError(f"relation {r}: group {i} must be a single object")
        if self.sign is not None and self.sign not in WORDS:
            raise ValueError(f"sign {self.sign!r} is not in the word list {WORDS}")

    def prompt(self) -> str:
        """The spec as an English prompt (closed world: nothing else is in the image)."""
        parts = [g.phrase() for g in self.groups]
        if self.sign is not None:
            parts.append(f"a sign that reads '{self.sign}'")
        listing = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        text = f"An image containing exactly {listing}, and nothing else."
        for r in self.relations:
            text += f" The {_noun(self.groups[r.a])} is {r.rel} the {_noun(self.groups[r.b])}."
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "groups": [
                {"shape": g.shape, "colour": g.colour, "size": g.size, "count": g.count}
                for g in self.groups
            ],
            "relations": [{"a": r.a, "rel": r.rel, "b": r.b} for r in self.relations],
            "sign": self.sign,
        }


def _noun(group: ObjectGroup) -> str:
    return f"{group.size} {group.colour} {group.shape}"


def spec_from_dict(data: Mapping[str, Any]) -> SceneSpec:
    """Inverse of ``SceneSpec.to_dict`` (raises ``ValueError`` naming the bad field)."""
    try:
        groups = tuple(ObjectGroup(**g) for g in data["groups"])
        relations = tuple(Relation(**r) for r in data.get("relations", []))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"scene spec: malformed groups/relations ({exc!r}) in {data!r}") from exc
    return SceneSpec(groups=groups, relations=relations, sign=data.get("sign"))


@dataclass(frozen=True)
class SceneObject:
    """A drawn object: a shape (shape, colour, size) or a sign (``text``), with its pixel box."""

    box: Box
    shape: str | None = None
    colour: str | None = None
    size: str | None = None
    text: str | None = None

    @property
    def is_sign(self) -> bool:
        return self.text is not None

    @property
    def key(self) -> tuple[str, str, str]:
        return (str(self.shape), str(self.colour), str(self.size))

    @property
    def centre(self) -> tuple[float, float]:
        x1, y1, x2, y2 = self.box
        return ((x1 + x2) / 2.0, (y1 + y2) / 2.0)

    def describe(self) -> str:
        if self.is_sign:
            return f"sign reading '{self.text}'"
        return f"{self.size} {self.colour} {self.shape}"


@dataclass(frozen=True)
class Scene:
    """What was drawn: canvas size, background name and the objects in drawing order."""

    width: int
    height: int
    objects: tuple[SceneObject, ...]
    background: str = "plain"
    style: Mapping[str, Any] = field(default_factory=dict)

    def with_objects(self, objects: Sequence[SceneObject]) -> Scene:
        return replace(self, objects=tuple(objects))

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-safe) that ``scene_from_dict`` turns back into the same scene."""
        return {
            "width": self.width,
            "height": self.height,
            "background": self.background,
            "style": {k: list(v) if isinstance(v, tuple) else v for k, v in self.style.items()},
            "objects": [
                {
                    k: v
                    for k, v in (
                        ("box", list(o.box)),
                        ("shape", o.shape),
                        ("colour", o.colour),
                        ("size", o.size),
                        ("text", o.text),
                    )
                    if v is not None
                }
                for o in self.objects
            ],
        }


def scene_from_dict(data: Mapping[str, Any]) -> Scene:
    """Inverse of ``Scene.to_dict`` (raises ``ValueError`` naming the bad field)."""
    try:
        objects = tuple(
            SceneObject(
                tuple(int(v) for v in o["box"]),  # type: ignore[arg-type]
                o.get("shape"),
                o.get("colour"),
                o.get("size"),
                o.get("text"),
            )
            for o in data["objects"]
        )
        style = {
            k: tuple(v) if isinstance(v, list) else v
            for k, v in dict(data.get("style", {})).items()
        }
        return Scene(
            int(data["width"]),
            int(data["height"]),
            objects,
            str(data.get("background", "plain")),
            style,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"scene: malformed record ({exc!r})") from exc


@dataclass(frozen=True)
class Violation:
    """One way a scene fails its spec, with the boxes that show it (empty: nothing to point at)."""

    kind: str  # missing, extra, count, relation, text
    detail: str
    boxes: tuple[Box, ...]
    action: EditAction


def _relation_holds(a: SceneObject, rel: str, b: SceneObject) -> bool:
    (ax, ay), (bx, by) = a.centre, b.centre
    return {
        "left of": ax < bx,
        "right of": ax > bx,
        "above": ay < by,
        "below": ay > by,
    }[rel]


def check_scene(
    scene: Scene | Sequence[SceneObject],
    spec: SceneSpec,
    *,
    visible: Sequence[float] | None = None,
    min_visible: float = 0.5,
) -> list[Violation]:
    """Every violation of ``spec`` by the scene's objects (empty list: the scene satisfies it).

    Exact rules (closed world): each group's (shape, colour, size) appears exactly ``count``
    times; no other shape appears; each relation holds between its two objects' centres
    (strictly: "left of" means centre x smaller); one sign reading ``spec.sign`` if the spec has
    a sign, none otherwise. With ``visible`` (the renderer's visible share of each object), an
    object less than ``min_visible`` visible counts as absent: an occluded object is not seen.
    """
    objects = list(scene.objects if isinstance(scene, Scene) else scene)
    if visible is not None:
        if len(visible) != len(objects):
            raise ValueError(f"visible has {len(visible)} entries for {len(objects)} objects")
        objects = [o for o, v in zip(objects, visible, strict=True) if v >= min_visible]
    shapes = [o for o in objects if not o.is_sign]
    signs = [o for o in objects if o.is_sign]
    by_key: dict[tuple[str, str, str], list[SceneObject]] = {}
    for o in shapes:
        by_key.setdefault(o.key, []).append(o)
    wanted = {g.key: g for g in spec.groups}
    out: list[Violation] = []
    for g in spec.groups:
        have = by_key.get(g.key, [])
        if len(have) == g.count:
            continue
        if not have:
            out.append(
                Violation(
                    "missing",
                    f"no {_noun(g)} (expected {g.count})",
                    (),
                    EditAction("Add", f"add {g.phrase()}"),
                )
            )
        elif len(have) > g.count:
            extra = len(have) - g.count
            out.append(
                Violation(
                    "count",
                    f"{len(have)} {_noun(g)}s, expected {g.count}",
                    tuple(o.box for o in have),
                    EditAction("Delete", f"delete {extra} {_noun(g)}{'s' if extra > 1 else ''}"),
                )
            )
        else:
            short = g.count - len(have)
            out.append(
                Violation(
                    "count",
                    f"{len(have)} {_noun(g)}{'s' if len(have) != 1 else ''}, expected {g.count}",
                    (),
                    EditAction("Add", f"add {short} {_noun(g)}{'s' if short > 1 else ''}"),
                )
            )
    for key, have in sorted(by_key.items()):
        if key not in wanted:
            for o in have:
                out.append(
                    Violation(
                        "extra",
                        f"unexpected {o.describe()}",
                        (o.box,),
                        EditAction("Delete", f"delete the {o.describe()}"),
                    )
                )
    for r in spec.relations:
        ga, gb = spec.groups[r.a], spec.groups[r.b]
        have_a, have_b = by_key.get(ga.key, []), by_key.get(gb.key, [])
        if len(have_a) != 1 or len(have_b) != 1:
            continue  # already a missing/count violation; the relation is undefined
        if not _relation_holds(have_a[0], r.rel, have_b[0]):
            out.append(
                Violation(
                    "relation",
                    f"the {_noun(ga)} is not {r.rel} the {_noun(gb)}",
                    (have_a[0].box,),
                    EditAction("Modify", f"move the {_noun(ga)} {r.rel} the {_noun(gb)}"),
                )
            )
    if spec.sign is None:
        for s in signs:
            out.append(
                Violation(
                    "extra",
                    f"unexpected {s.describe()}",
                    (s.box,),
                    EditAction("Delete", "delete the sign"),
                )
            )
    elif not signs:
        out.append(
            Violation(
                "missing",
                f"no sign reading '{spec.sign}'",
                (),
                EditAction("Add", f"add a sign that reads '{spec.sign}'"),
            )
        )
    else:
        right = [s for s in signs if s.text == spec.sign]
        for s in signs if not right else [s for s in signs if s.text != spec.sign]:
            out.append(
                Violation(
                    "text" if not right else "extra",
                    f"{s.describe()}, expected '{spec.sign}'",
                    (s.box,),
                    EditAction("Modify", f"make the sign read '{spec.sign}'")
                    if not right
                    else EditAction("Delete", f"delete the {s.describe()}"),
                )
            )
        if len(right) > 1:
            out.append(
                Violation(
                    "extra",
                    f"{len(right)} signs reading '{spec.sign}', expected 1",
                    tuple(s.box for s in right),
                    EditAction("Delete", "delete the duplicate sign"),
                )
            )
    return out


# --- scene descriptions as JSON (what a generator writes) ------------------------------------

_SCENE_JSON_HELP = (
    '{"objects": [{"shape": "circle", "colour": "red", "size": "large", "x": 120, "y": 80}], '
    '"sign": {"text": "OPEN", "x": 200, "y": 250}}'
)


def scene_to_json(scene: Scene) -> str:
    """A scene as the JSON description a generator writes (centres, not boxes)."""
    objects = []
    sign = None
    for o in scene.objects:
        cx, cy = o.centre
        if o.is_sign:
            sign = {"text": o.text, "x": round(cx), "y": round(cy)}
        else:
            objects.append(
                {
                    "shape": o.shape,
                    "colour": o.colour,
                    "size": o.size,
                    "x": round(cx),
                    "y": round(cy),
                }
            )
    return json.dumps({"objects": objects, "sign": sign})


def _number(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SceneFormatError(f"{where} must be a number, got {value!r}")
    return round(float(value))


def scene_from_json(
    text: str | Mapping[str, Any],
    *,
    width: int,
    height: int,
    sign_box: Any = None,
    background: str = "plain",
) -> Scene:
    """Parse a generator's scene description into a ``Scene`` (``SceneFormatError`` saying why not).

    Accepts the JSON object itself or text with one JSON object in it (code fences and prose
    around it are tolerated). Centres must lie on the canvas; ``sign_box(text, cx, cy)`` gives a
    sign's box (the renderer's text metrics), defaulting to 16 px per letter × 30 px.
    """
    data: Any = text
    if isinstance(text, str):
        data = _first_json_object(text)
        if data is None:
            raise SceneFormatError(
                f"no JSON object in the scene description; expected {_SCENE_JSON_HELP}"
            )
    if not isinstance(data, Mapping):
        raise SceneFormatError(
            f"scene description must be a JSON object, got {type(data).__name__}"
        )
    raw_objects = data.get("objects", [])
    if not isinstance(raw_objects, list):
        raise SceneFormatError("'objects' must be a list")
    if len(raw_objects) > 40:
        raise SceneFormatError(f"{len(raw_objects)} objects; at most 40 can be drawn")
    objects: list[SceneObject] = []
    for i, raw in enumerate(raw_objects):
        where = f"objects[{i}]"
        if not isinstance(raw, Mapping):
            raise SceneFormatError(f"{where} must be an object, got {raw!r}")
        shape, colour, size = raw.get("shape"), raw.get("colour", raw.get("color")), raw.get("size")
        if shape not in SHAPES:
            raise SceneFormatError(f"{where}.shape {shape!r} is not one of {SHAPES}")
        if colour not in COLOURS:
            raise SceneFormatError(f"{where}.colour {colour!r} is not one of {tuple(COLOURS)}")
        if size not in SIZES:
            raise SceneFormatError(f"{where}.size {size!r} is not one of {tuple(SIZES)}")
        cx, cy = _number(raw.get("x"), f"{where}.x"), _number(raw.get("y"), f"{where}.y")
        if not (0 <= cx < width and 0 <= cy < height):
            raise SceneFormatError(
                f"{where}: centre ({cx}, {cy}) is outside the {width}x{height} canvas"
            )
        r = SIZES[size]
        objects.append(SceneObject((cx - r, cy - r, cx + r, cy + r), shape, colour, size))
    raw_sign = data.get("sign")
    if raw_sign is not None:
        if not isinstance(raw_sign, Mapping):
            raise SceneFormatError(f"'sign' must be an object or null, got {raw_sign!r}")
        word = raw_sign.get("text")
        if not isinstance(word, str) or not word.strip():
            raise SceneFormatError(f"sign.text must be a non-empty string, got {word!r}")
        word = word.strip().upper()
        if len(word) > 12:
            raise SceneFormatError(f"sign.text {word!r} is longer than 12 letters")
        cx, cy = _number(raw_sign.get("x"), "sign.x"), _number(raw_sign.get("y"), "sign.y")
        if not (0 <= cx < width and 0 <= cy < height):
            raise SceneFormatError(
                f"sign centre ({cx}, {cy}) is outside the {width}x{height} canvas"
            )
        box = (
            sign_box(word, cx, cy)
            if sign_box
            else (cx - 8 * len(word), cy - 15, cx + 8 * len(word), cy + 15)
        )
        objects.append(SceneObject(tuple(int(v) for v in box), text=word))  # type: ignore[arg-type]
    return Scene(width=width, height=height, objects=tuple(objects), background=background)


def _first_json_object(text: str) -> Any:
    """The first decodable JSON object in ``text`` (None if there is none)."""
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch == "{":
            try:
                value, _ = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def object_counts(scene: Scene) -> Counter[tuple[str, str, str]]:
    """How many shapes of each (shape, colour, size) the scene holds."""
    return Counter(o.key for o in scene.objects if not o.is_sign)
