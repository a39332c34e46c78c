"""Generators for the M1-TTS loop on drawn scenes, and the exact truth of a candidate.

- ``ModelSceneGenerator``: a (text-only or multimodal) model writes a scene description (JSON);
  the renderer draws it. On feedback it gets its previous JSON, the flagged boxes (spatial
  action) and the edit (semantic action) and writes the JSON again. With ``edit_scope="region"``
  (the paper: the generator edits the flagged region) only objects whose centres lie inside a
  flagged box are taken from the new JSON; the rest of the previous scene is kept (an ``Add``
  action may also add objects elsewhere). Without boxes the whole scene is rewritten.
- ``SimulatedGenerator``: no model. It lays out a scene that satisfies the prompt and, with
  probability ``p_error``, injects one random error (the renderer's error types); an edit
  removes the objects touching the flagged boxes and redraws what the prompt then lacks, again
  with probability ``p_error`` of a new error. Errors outside the flagged region stay. It stands
  in for an image generator whose edits are local, so that the verifier's judgment and
  localisation decide the loop's outcome.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from methods.omniverifier import (
    COLOURS,
    SHAPES,
    SIZES,
    Candidate,
    Scene,
    SceneFormatError,
    SceneObject,
    SceneSpec,
    VerifierOutput,
    check_scene,
    scene_from_json,
    scene_to_json,
)
from scorers.boxes import enclosing_box
from tasks.omniverifier.render import sign_box, visibility
from tasks.omniverifier.scenes import (
    ERROR_TYPES,
    HEIGHT,
    LEVELS,
    WIDTH,
    NoRoom,
    inject_error,
    layout,
    place_box,
)

__all__ = [
    "EditScope",
    "ModelSceneGenerator",
    "SimulatedGenerator",
    "candidate_truth",
    "generator_prompt",
]

EditScope = Literal["region", "free"]
Complete = Callable[[str], Awaitable[str]]


def candidate_truth(scene: Scene, spec: SceneSpec) -> bool:
    """Whether the drawn scene truly satisfies the prompt (exact check, occlusion counted)."""
    return not check_scene(scene, spec, visible=visibility(scene))


def _scene_candidate(scene: Scene, text: str) -> Candidate:
    return Candidate(payload=scene, text=text)


_FORMAT = (
    '{"objects": [{"shape": "circle", "colour": "red", "size": "large", "x": 120, "y": 80}, ...], '
    '"sign": {"text": "OPEN", "x": 200, "y": 250} or null}'
)


def generator_prompt(prompt: str) -> str:
    return (
        f'Write a scene description as JSON for this image prompt:\n"{prompt}"\n\n'
        f"The canvas is {WIDTH}x{HEIGHT} pixels. Shapes: {', '.join(SHAPES)}. Colours: "
        f"{', '.join(COLOURS)}. Sizes: small ({2 * SIZES['small']} px) or large "
        f"({2 * SIZES['large']} px). x, y is an object's centre in pixels. One entry per object "
        "(three circles = three entries). Put objects apart so that they do not hide each other.\n"
        f"Answer with the JSON only, in this form:\n{_FORMAT}"
    )


def _edit_prompt(prompt: str, previous: Candidate, feedback: VerifierOutput | None) -> str:
    if feedback is None or (not feedback.boxes and feedback.action is None):
        issue = "A verifier found that the image does not match the prompt."
    else:
        issue = "A verifier found an error"
        if feedback.boxes:
            issue += " in the region " + ", ".join(
                str([round(v) for v in b]) for b in feedback.boxes
            )
        if feedback.action is not None:
            issue += f". Suggested edit: {feedback.action.type}: {feedback.action.text}"
        issue += "."
    return (
        f"{generator_prompt(prompt)}\n\nYour previous scene:\n{previous.text or '(none)'}\n\n{issue} "
        "Rewrite the scene JSON, changing only what is needed there."
    )


def _inside(obj: SceneObject, boxes) -> bool:
    cx, cy = obj.centre
    return any(b[0] <= cx <= b[2] and b[1] <= cy <= b[3] for b in boxes)


def merge_region_edit(previous: Scene, new: Scene, feedback: VerifierOutput | None) -> Scene:
    """Keep the previous scene outside the flagged boxes; take the new one inside them."""
    if feedback is None or not feedback.boxes:
        return new
    boxes = feedback.boxes
    kept = [o for o in previous.objects if not _inside(o, boxes)]
    taken = [o for o in new.objects if _inside(o, boxes)]
    if feedback.action is not None and feedback.action.type == "Add":
        old = {(o.key, o.text, o.centre) for o in previous.objects}
        taken += [
            o for o in new.objects if not _inside(o, boxes) and (o.key, o.text, o.centre) not in old
        ]
    return replace(previous, objects=tuple(kept + taken))


@dataclass
class ModelSceneGenerator:
    """A model writes the scene JSON (``complete(prompt) -> text``); the renderer draws it."""

    complete: Complete
    edit_scope: EditScope = "region"
    background: str = "plain"

    def _parse(self, text: str) -> Candidate:
        try:
            scene = scene_from_json(
                text, width=WIDTH, height=HEIGHT, sign_box=sign_box, background=self.background
            )
        except SceneFormatError as exc:
            return Candidate(payload=None, failure=f"unusable scene description: {exc}", text=text)
        return Candidate(payload=scene, text=scene_to_json(scene))

    async def generate(self, prompt: str) -> Candidate:
        return self._parse(await self.complete(generator_prompt(prompt)))

    async def edit(
        self, prompt: str, previous: Candidate, feedback: VerifierOutput | None
    ) -> Candidate:
        new = self._parse(await self.complete(_edit_prompt(prompt, previous, feedback)))
        if new.failure is not None or self.edit_scope == "free":
            return new
        merged = merge_region_edit(previous.payload, new.payload, feedback)
        return _scene_candidate(merged, scene_to_json(merged))


@dataclass
class SimulatedGenerator:
    """Prompt-following layouts with random single errors (no model; see the module docstring)."""

    spec: SceneSpec
    level: str
    p_error: float
    rng: np.random.Generator

    def _maybe_error(self, scene: Scene) -> Scene:
        if self.rng.uniform() >= self.p_error:
            return scene
        for error_type in self.rng.permutation(np.array(ERROR_TYPES)):
            try:
                objects, _, _ = inject_error(
                    scene, self.spec, str(error_type), self.rng, LEVELS[self.level]
                )
            except (NoRoom, StopIteration, IndexError, ValueError):
                continue  # this error type does not apply to the prompt
            return replace(scene, objects=tuple(objects))
        return scene

    async def generate(self, prompt: str) -> Candidate:  # noqa: ARG002 - generator interface
        for _ in range(50):
            try:
                scene = layout(self.spec, self.rng, LEVELS[self.level])
            except NoRoom:
                continue
            scene = self._maybe_error(scene)
            return _scene_candidate(scene, scene_to_json(scene))
        return Candidate(payload=None, failure="no layout found in 50 draws")

    async def edit(
        self, prompt: str, previous: Candidate, feedback: VerifierOutput | None
    ) -> Candidate:
        if feedback is None or not feedback.boxes:
            return await self.generate(prompt)
        scene: Scene = previous.payload
        region = enclosing_box(feedback.boxes)
        kept = [o for o in scene.objects if not _touches(o.box, region)]
        try:
            repaired = self._fill(scene, kept)
        except NoRoom:
            return await self.generate(prompt)
        repaired = self._maybe_error(repaired)
        return _scene_candidate(repaired, scene_to_json(repaired))

    def _fill(self, scene: Scene, kept: list[SceneObject]) -> Scene:
        """Draw what the prompt lacks after the flagged objects were removed."""
        overlap = LEVELS[self.level].overlap
        objects = list(kept)
        for g in self.spec.groups:
            have = sum(1 for o in objects if not o.is_sign and o.key == g.key)
            for _ in range(max(0, g.count - have)):
                r = SIZES[g.size]
                box = place_box(
                    self.rng,
                    lambda cx, cy, r=r: (cx - r, cy - r, cx + r, cy + r),
                    [o.box for o in objects],
                    overlap,
                )
                objects.append(SceneObject(box, g.shape, g.colour, g.size))
        if self.spec.sign is not None and not any(o.is_sign for o in objects):
            word = self.spec.sign
            box = place_box(
                self.rng, lambda cx, cy: sign_box(word, cx, cy), [o.box for o in objects], 0.0
            )
            objects.append(SceneObject(box, text=word))
        return replace(scene, objects=tuple(objects))


def _touches(box, region) -> bool:
    return box[0] < region[2] and region[0] < box[2] and box[1] < region[3] and region[1] < box[3]
