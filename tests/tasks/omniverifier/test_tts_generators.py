"""The TTS generators: region-restricted edits of a model's scene, the simulated generator."""

from __future__ import annotations

import asyncio

import numpy as np

from methods.omniverifier import (
    Candidate,
    EditAction,
    Scene,
    SceneObject,
    VerifierOutput,
    check_scene,
)
from tasks.omniverifier.scenes import make_pair
from tasks.omniverifier.tts import (
    ModelSceneGenerator,
    SimulatedGenerator,
    candidate_truth,
    merge_region_edit,
)


def _o(x, y, colour="red"):
    return SceneObject((x - 13, y - 13, x + 13, y + 13), "circle", colour, "small")


def test_region_edit_keeps_everything_outside_the_flagged_boxes() -> None:
    previous = Scene(320, 320, (_o(50, 50), _o(200, 200, "blue")))
    new = Scene(320, 320, (_o(60, 60, "green"), _o(200, 200, "red"), _o(300, 300)))
    flagged = VerifierOutput(answer=False, boxes=((180.0, 180.0, 220.0, 220.0),))
    merged = merge_region_edit(previous, new, flagged)
    # (50, 50) kept although the model moved and recoloured it; the flagged object replaced;
    # the object added outside the region dropped (the action is not Add)
    assert merged.objects == (_o(50, 50), _o(200, 200, "red"))
    add = VerifierOutput(answer=False, boxes=flagged.boxes, action=EditAction("Add", "add one"))
    assert _o(300, 300) in merge_region_edit(previous, new, add).objects
    assert merge_region_edit(previous, new, VerifierOutput(answer=False)) is new  # no box


def test_model_generator_reports_unusable_json_as_a_failed_candidate() -> None:
    async def complete(prompt: str) -> str:
        assert "320x320" in prompt
        return '{"objects": [{"shape": "hexagon"}]}'

    cand = asyncio.run(
        ModelSceneGenerator(complete).generate("An image containing exactly a small red circle.")
    )
    assert cand.payload is None and "shape" in cand.failure


def test_simulated_generator_edits_only_the_flagged_region() -> None:
    pair = make_pair(0, 1, "easy", "extra_object")
    gen = SimulatedGenerator(pair.spec, "easy", p_error=0.0, rng=np.random.default_rng(0))
    wrong = Candidate(pair.erroneous)
    assert not candidate_truth(pair.erroneous, pair.spec)
    hit = asyncio.run(
        gen.edit(
            "p", wrong, VerifierOutput(answer=False, boxes=(tuple(map(float, pair.error_box)),))
        )
    )
    assert candidate_truth(hit.payload, pair.spec)  # the extra object was in the region: fixed
    far = (0.0, 0.0, 1.0, 1.0)
    missed = asyncio.run(gen.edit("p", wrong, VerifierOutput(answer=False, boxes=(far,))))
    assert check_scene(missed.payload, pair.spec)  # the error lies outside the region: it stays
