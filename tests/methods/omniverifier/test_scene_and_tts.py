"""The exact scene check, scene JSON, and the M1-TTS / best-of-N loops with fake parts."""

from __future__ import annotations

import asyncio

import pytest

from methods.omniverifier import (
    Candidate,
    ObjectGroup,
    Relation,
    Scene,
    SceneFormatError,
    SceneObject,
    SceneSpec,
    VerifierOutput,
    best_of_n,
    check_scene,
    m1_tts,
    scene_from_dict,
    scene_from_json,
    scene_to_json,
)

SPEC = SceneSpec(
    groups=(ObjectGroup("circle", "red", "large", 1), ObjectGroup("square", "blue", "small", 2)),
    sign="OPEN",
)


def _obj(x: int, y: int, shape="circle", colour="red", size="large") -> SceneObject:
    r = 26 if size == "large" else 13
    return SceneObject((x - r, y - r, x + r, y + r), shape, colour, size)


def _good() -> list[SceneObject]:
    return [
        _obj(50, 50),
        _obj(150, 50, "square", "blue", "small"),
        _obj(250, 50, "square", "blue", "small"),
        SceneObject((100, 200, 160, 230), text="OPEN"),
    ]


def test_consistent_scene_has_no_violation() -> None:
    assert check_scene(_good(), SPEC) == []


def test_each_violation_and_its_box() -> None:
    objs = _good()
    missing = check_scene(objs[1:], SPEC)
    assert [(v.kind, v.boxes, v.action.type) for v in missing] == [("missing", (), "Add")]
    extra = check_scene([*objs, _obj(200, 200, "triangle", "green")], SPEC)
    assert [(v.kind, v.boxes) for v in extra] == [("extra", (_obj(200, 200).box,))]
    too_many = check_scene([*objs, _obj(120, 150, "square", "blue", "small")], SPEC)
    assert (
        too_many[0].kind == "count"
        and len(too_many[0].boxes) == 3
        and too_many[0].action.type == "Delete"
    )
    too_few = check_scene([o for i, o in enumerate(objs) if i != 2], SPEC)
    assert too_few[0].kind == "count" and too_few[0].boxes == () and too_few[0].action.type == "Add"
    text = check_scene([*objs[:3], SceneObject((100, 200, 160, 230), text="STOP")], SPEC)
    assert [(v.kind, v.action.type) for v in text] == [("text", "Modify")]


def test_relation_by_centres_strictly() -> None:
    spec = SceneSpec(
        groups=(ObjectGroup("circle", "red", "large"), ObjectGroup("square", "blue", "large")),
        relations=(Relation(0, "above", 1),),
    )
    above = [_obj(100, 50), _obj(100, 150, "square", "blue")]
    assert check_scene(above, spec) == []
    level = [_obj(100, 100), _obj(200, 100, "square", "blue")]  # same centre y: not above
    v = check_scene(level, spec)
    assert [x.kind for x in v] == ["relation"] and v[0].boxes == (level[0].box,)


def test_occluded_object_counts_as_absent() -> None:
    objs = _good()
    assert check_scene(objs, SPEC, visible=[1, 1, 0.4, 1])[0].kind == "count"
    assert check_scene(objs, SPEC, visible=[1, 1, 0.5, 1]) == []
    with pytest.raises(ValueError, match="visible"):
        check_scene(objs, SPEC, visible=[1.0])


def test_spec_validation_and_prompt() -> None:
    assert SPEC.prompt() == (
        "An image containing exactly a large red circle, 2 small blue squares and a sign that "
        "reads 'OPEN', and nothing else."
    )
    with pytest.raises(ValueError, match="count"):
        ObjectGroup("circle", "red", "large", 13)
    with pytest.raises(ValueError, match="single object"):
        SceneSpec(groups=SPEC.groups, relations=(Relation(0, "above", 1),))
    with pytest.raises(ValueError, match="word list"):
        SceneSpec(groups=SPEC.groups, sign="HELLO")


def test_scene_json_round_trip_and_errors() -> None:
    scene = Scene(320, 320, tuple(_good()))
    back = scene_from_json(
        scene_to_json(scene), width=320, height=320, sign_box=lambda w, x, y: (100, 200, 160, 230)
    )
    assert back.objects == scene.objects
    assert scene_from_dict(scene.to_dict()) == scene
    wrapped = scene_from_json(
        "Here it is:\n```json\n" + scene_to_json(scene) + "\n```", width=320, height=320
    )
    assert len(wrapped.objects) == 4
    for text, match in [
        ("no json here", "no JSON object"),
        (
            '{"objects": [{"shape": "star", "colour": "red", "size": "large", "x": 1, "y": 1}]}',
            "shape",
        ),
        (
            '{"objects": [{"shape": "circle", "colour": "red", "size": "large", "x": 999, "y": 1}]}',
            "outside",
        ),
        (
            '{"objects": [{"shape": "circle", "colour": "red", "size": "large", "x": "a", "y": 1}]}',
            "number",
        ),
        ('{"objects": {"a": 1}}', "list"),
        ('{"sign": {"text": "", "x": 1, "y": 1}}', "non-empty"),
    ]:
        with pytest.raises(SceneFormatError, match=match):
            scene_from_json(text, width=320, height=320)


# --- loops -------------------------------------------------------------------------------------


class FakeGenerator:
    """Candidates are integers; an edit adds 1; ``fail`` lists calls whose generation fails."""

    def __init__(self, start: int = 0, fail: tuple[int, ...] = ()) -> None:
        self.calls = 0
        self.start = start
        self.fail = fail
        self.feedback: list[VerifierOutput | None] = []

    async def generate(self, prompt: str) -> Candidate:
        self.calls += 1
        if self.calls in self.fail:
            return Candidate(None, failure="bad json")
        return Candidate(self.start + self.calls - 1)

    async def edit(
        self, prompt: str, previous: Candidate, feedback: VerifierOutput | None
    ) -> Candidate:
        self.calls += 1
        self.feedback.append(feedback)
        if self.calls in self.fail:
            return Candidate(None, failure="bad json")
        return Candidate(previous.payload + 1)


def _accept_at(k: int):
    async def verify(prompt: str, c: Candidate) -> VerifierOutput:
        return VerifierOutput(
            answer=c.payload >= k, boxes=((0.0, 0.0, 1.0, 1.0),), score=float(abs(k - c.payload))
        )

    return verify


def test_tts_stops_at_the_first_accepted_candidate() -> None:
    gen = FakeGenerator()
    result = asyncio.run(m1_tts("p", gen, _accept_at(3), max_rounds=10))
    assert result.accepted and result.final.payload == 3 and result.generator_calls == 4
    assert [r.kind for r in result.rounds] == ["generate", "edit", "edit", "edit"]
    assert all(f is not None and f.boxes for f in gen.feedback)


def test_tts_never_exceeds_max_rounds() -> None:
    result = asyncio.run(m1_tts("p", FakeGenerator(), _accept_at(100), max_rounds=10))
    assert not result.accepted and result.generator_calls == 10 == result.verifier_calls
    assert result.final.payload == 9
    with pytest.raises(ValueError):
        asyncio.run(m1_tts("p", FakeGenerator(), _accept_at(1), max_rounds=0))


def test_failed_generation_counts_as_a_round_and_is_not_verified() -> None:
    result = asyncio.run(m1_tts("p", FakeGenerator(fail=(1, 3)), _accept_at(2), max_rounds=10))
    # generate fails; generate → 1 (rejected); edit fails; edit of 1 → 2 (accepted)
    assert [r.verdict is None for r in result.rounds] == [True, False, True, False]
    assert [r.kind for r in result.rounds] == ["generate", "generate", "edit", "edit"]
    assert result.accepted and result.final.payload == 2 and result.verifier_calls == 2


def test_best_of_n_draws_fresh_samples_and_picks_the_lowest_score() -> None:
    gen = FakeGenerator(start=0)
    accepted = asyncio.run(best_of_n("p", gen, _accept_at(2), n=10))
    assert accepted.accepted and accepted.final.payload == 2 and accepted.generator_calls == 3
    none = asyncio.run(best_of_n("p", FakeGenerator(start=0), _accept_at(7), n=3))
    assert not none.accepted and none.final.payload == 2  # closest to 7 among 0, 1, 2
    all_failed = asyncio.run(best_of_n("p", FakeGenerator(fail=(1, 2)), _accept_at(0), n=2))
    assert not all_failed.accepted and all_failed.final.failure == "bad json"
