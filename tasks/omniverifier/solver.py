"""Solvers: the verifier under test judges one image (verify), or runs inside M1-TTS (tts).

Verifiers: ``model`` (the model under test; a VLM sees the image as inspect ``ContentImage``, a
text-only model sees the classical detector's object list with pixel boxes — never the
renderer's ground truth), ``classical`` (scikit-image segmentation + exact spec check),
``always_true``, and in TTS ``oracle`` (the exact check itself: the ceiling of the loop).
Built-in verifiers write their verdict in the same reply format as a model, so one parser and
one scorer serve all of them.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from inspect_ai.model import (
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from harness.constrained import constrained_enabled, generate_args
from methods.omniverifier import (
    YES_NO_FORMAT,
    AlwaysTrueVerifier,
    Candidate,
    ClassicalVerifier,
    ColourShapeDetector,
    SceneSpec,
    VerifierOutput,
    best_of_n,
    check_scene,
    describe_detections,
    format_verifier_output,
    m1_tts,
    parse_verifier_output,
    spec_from_dict,
    verifier_reply_format,
)
from scorers.boxes import BoxFormat
from tasks.omniverifier.dataset import png_data_uri, rendered_pixels
from tasks.omniverifier.render import render, visibility
from tasks.omniverifier.tts import (
    EditScope,
    ModelSceneGenerator,
    SimulatedGenerator,
    candidate_truth,
)

__all__ = [
    "Observation",
    "Rationale",
    "ReplyFormat",
    "TTS_KEY",
    "VerifierName",
    "tts_loop",
    "verifier_prompt",
    "verify_image",
]

VerifierName = Literal["model", "classical", "always_true", "oracle"]
Observation = Literal["objects", "image"]
Rationale = Literal["bbox", "point"]
ReplyFormat = Literal["m1", "yes_no"]
TTS_KEY = "omniverifier_tts"

_BOX_WORDS = {
    "pixels": "pixel coordinates",
    "0-1000": "coordinates scaled to 0-1000 of the image width and height",
    "0-1": "coordinates as fractions 0-1 of the image width and height",
}


def verifier_prompt(
    claim: str,
    width: int,
    height: int,
    *,
    rationale: Rationale,
    box_format: BoxFormat,
    objects: str | None = None,
    reply_format: ReplyFormat = "m1",
) -> str:
    """The verification prompt (the image, or the detector's object list, goes with it)."""
    seen = "the image" if objects is None else "the image, described by an object detector below"
    if reply_format == "yes_no":
        text = f'Does {seen} match the prompt?\nPrompt: "{claim}"\n'
        if objects is not None:
            text += f"\n{objects}\n"
        return text + "\nAnswer with one word: yes or no."
    if rationale == "bbox":
        wrong = (
            '{"answer": false, "boxes": [[x1, y1, x2, y2]], "action": {"type": "Add" | "Delete" '
            '| "Modify", "text": "<the edit that would fix it>"}}'
        )
        where = f"boxes: the error's box in {_BOX_WORDS[box_format]} of the {width}x{height} image"
    else:
        wrong = '{"answer": false, "point": [x, y], "action": {"type": "Add" | "Delete" | "Modify", "text": "<the edit that would fix it>"}}'
        where = (
            f"point: a point on the error in {_BOX_WORDS[box_format]} of the {width}x{height} image"
        )
    text = (
        f'You are a visual verifier. Decide whether {seen} matches the prompt.\nPrompt: "{claim}"\n'
    )
    if objects is not None:
        text += f"\n{objects}\n"
    text += (
        "\nFirst think inside <think></think>. Then write one JSON object and nothing else:\n"
        '- if the image matches the prompt: {"answer": true}\n'
        f"- if it does not: {wrong}\n"
        f"({where}.)"
    )
    return text


def _spec(state: TaskState) -> SceneSpec:
    return spec_from_dict(state.metadata["spec"])


def _builtin_reply(name: str, pixels: np.ndarray, spec: SceneSpec) -> str:
    verifier = ClassicalVerifier() if name == "classical" else AlwaysTrueVerifier()
    return verifier.verify(pixels, spec).raw


def _user_message(
    state: TaskState,
    claim: str,
    rationale: Rationale,
    box_format: BoxFormat,
    observation: Observation,
    reply_format: ReplyFormat = "m1",
) -> ChatMessageUser:
    width, height = int(state.metadata["width"]), int(state.metadata["height"])
    objects = None
    if observation == "objects":
        if "scene" not in state.metadata:
            raise ValueError(
                f"sample {state.sample_id}: observation=objects needs a generated scene (the "
                "detector reads the scene vocabulary); use observation=image with a VLM for this "
                "dataset"
            )
        found = ColourShapeDetector().detect(rendered_pixels(state.metadata))
        objects = describe_detections(found, width, height)
    prompt = verifier_prompt(
        claim,
        width,
        height,
        rationale=rationale,
        box_format=box_format,
        objects=objects,
        reply_format=reply_format,
    )
    if observation == "image":
        image = state.metadata.get("image") or png_data_uri(render_scene_png(state.metadata))
        return ChatMessageUser(content=[ContentImage(image=image), ContentText(text=prompt)])
    return ChatMessageUser(content=prompt)


def render_scene_png(metadata: dict[str, Any]) -> bytes:
    from methods.omniverifier import scene_from_dict

    return render(scene_from_dict(metadata["scene"])).png


@solver
def verify_image(
    *,
    verifier: VerifierName,
    observation: Observation,
    rationale: Rationale,
    box_format: BoxFormat,
    max_tokens: int,
    reply_format: ReplyFormat,
) -> Solver:
    """One verdict per sample, left in ``state.output`` in the reply format (with
    ``constrained=on``, decoded under it: ``verifier_reply_format`` / ``YES_NO_FORMAT``, checked
    here at task load). The settings come from the task, which owns their defaults."""
    constraint: dict[str, Any] = {}
    if verifier == "model" and constrained_enabled():
        fmt = (
            YES_NO_FORMAT
            if reply_format == "yes_no"
            else verifier_reply_format(rationale, box_format, max_tokens)
        )
        constraint = generate_args(fmt)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        claim = state.input_text
        if verifier == "model":
            state.messages = [
                _user_message(state, claim, rationale, box_format, observation, reply_format)
            ]
            return await generate(state, max_tokens=max_tokens, **constraint)
        if verifier == "oracle":
            raise ValueError(
                "verifier=oracle is for mode=tts only (in verify it would read the answer)"
            )
        if "scene" not in state.metadata:
            raise ValueError(
                f"sample {state.sample_id}: verifier={verifier} needs generated scenes"
            )
        reply = _builtin_reply(verifier, rendered_pixels(state.metadata), _spec(state))
        state.output = ModelOutput.from_content(model=f"builtin/{verifier}", content=reply)
        state.messages.append(state.output.message)
        return state

    return solve


# --- TTS ---------------------------------------------------------------------------------------


def _oracle_reply(spec: SceneSpec, scene) -> str:
    violations = check_scene(scene, spec, visible=visibility(scene))
    if not violations:
        return format_verifier_output(True, think="exact check")
    v = next((x for x in violations if x.boxes), violations[0])
    return format_verifier_output(
        False, think="exact check", boxes=list(v.boxes[-1:]), action=v.action
    )


class _Counts:
    def __init__(self) -> None:
        self.tp = self.fp = self.fn = self.tn = self.no_verdict = 0

    def add(self, verdict: VerifierOutput | None, truly_right: bool) -> None:
        if verdict is None or verdict.answer is None:
            self.no_verdict += 1
        elif verdict.answer is False:
            if truly_right:
                self.fp += 1
            else:
                self.tp += 1
        elif truly_right:
            self.tn += 1
        else:
            self.fn += 1


@solver
def tts_loop(
    verifier: VerifierName = "model",
    generator: Literal["model", "simulated"] = "model",
    observation: Observation = "objects",
    max_rounds: int = 10,
    edit_scope: EditScope = "region",
    p_error: float = 0.5,
    max_tokens: int = 512,
    generator_max_tokens: int = 384,
    seed: int = 0,
) -> Solver:
    """M1-TTS and best-of-N (N = ``max_rounds``) on one prompt; results in metadata[TTS_KEY].
    With ``constrained=on`` a model verifier's calls are decoded under the M1 reply format they
    are parsed with (bbox rationale, pixel boxes; checked here at task load)."""
    verify_config = GenerateConfig(max_tokens=max_tokens)
    if verifier == "model" and constrained_enabled():
        fmt = verifier_reply_format("bbox", "pixels", max_tokens)
        verify_config = verify_config.merge(GenerateConfig(**generate_args(fmt)))

    async def solve(state: TaskState, generate: Generate) -> TaskState:  # noqa: ARG001 - loops call models directly
        spec = _spec(state)
        level = str(state.metadata.get("level", "easy"))
        index = int(state.metadata.get("pair_index", 0))
        verifier_model: Model = get_model()
        generator_model: Model = get_model(role="generator", default=get_model())
        counts = _Counts()

        async def complete(prompt: str) -> str:
            out = await generator_model.generate(
                [ChatMessageUser(content=prompt)],
                config=GenerateConfig(max_tokens=generator_max_tokens),
            )
            return out.completion

        async def verify(claim: str, candidate: Candidate) -> VerifierOutput:
            scene = candidate.payload
            pixels = render(scene).pixels
            if verifier == "model":
                width, height = scene.width, scene.height
                if observation == "image":
                    msg = ChatMessageUser(
                        content=[
                            ContentImage(image=png_data_uri(render(scene).png)),
                            ContentText(
                                text=verifier_prompt(
                                    claim, width, height, rationale="bbox", box_format="pixels"
                                )
                            ),
                        ]
                    )
                else:
                    objects = describe_detections(
                        ColourShapeDetector().detect(pixels), width, height
                    )
                    msg = ChatMessageUser(
                        content=verifier_prompt(
                            claim,
                            width,
                            height,
                            rationale="bbox",
                            box_format="pixels",
                            objects=objects,
                        )
                    )
                out = await verifier_model.generate([msg], config=verify_config)
                reply = out.completion
            elif verifier == "oracle":
                reply = _oracle_reply(spec, scene)
            else:
                reply = _builtin_reply(verifier, pixels, spec)
            verdict = parse_verifier_output(reply, image_size=(scene.width, scene.height))
            counts.add(verdict, candidate_truth(scene, spec))
            return verdict

        def make_generator(stream: int):
            if generator == "simulated":
                rng = np.random.default_rng([seed, index, stream])
                return SimulatedGenerator(spec, level, p_error, rng)
            return ModelSceneGenerator(complete, edit_scope=edit_scope)

        claim = spec.prompt()
        tts = await m1_tts(claim, make_generator(1), verify, max_rounds=max_rounds)
        tts_counts = vars(counts).copy()
        bon = await best_of_n(claim, make_generator(2), verify, n=max_rounds)

        def truth(result) -> bool:
            return result.final.payload is not None and candidate_truth(result.final.payload, spec)

        first = tts.rounds[0].candidate
        state.metadata[TTS_KEY] = {
            "tts_success": truth(tts),
            "bon_success": truth(bon),
            "initial_success": first.payload is not None and candidate_truth(first.payload, spec),
            "tts_accepted": tts.accepted,
            "bon_accepted": bon.accepted,
            "tts_rounds": len(tts.rounds),
            "tts_calls": tts.generator_calls,
            "bon_calls": bon.generator_calls,
            "generation_failures": sum(
                r.candidate.failure is not None for r in tts.rounds + bon.rounds
            ),
            "first_generation_failure": next(
                (r.candidate.failure for r in tts.rounds if r.candidate.failure), None
            ),
            "verifier": vars(counts).copy(),
            "verifier_tts": tts_counts,
            "final_scene": tts.final.text,
        }
        state.output = ModelOutput.from_content(model="tts", content=tts.final.text or "(no scene)")
        return state

    return solve
