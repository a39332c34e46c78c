"""End to end through inspect with the scripted model and the built-in verifiers (offline)."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ContentImage, get_model

from methods.omniverifier import (
    ClassicalVerifier,
    sample_rewards,
    scene_from_dict,
    scene_to_json,
    spec_from_dict,
)
from tasks.omniverifier.render import render
from tasks.omniverifier.task import RUN_ALL_ARGS, omniverifier

_COUNTER = iter(range(10_000))


def _run(task, model="scripted/x", **model_args):
    # A fresh name per call: inspect memoizes models by name, which would reuse a script.
    m = (
        get_model(f"{model}-{next(_COUNTER)}", **model_args)
        if model.startswith("scripted/")
        else model
    )
    log = inspect_eval(task, model=m, display="none", log_dir=None)[0]
    assert log.status == "success", log.error
    return log


def _metrics(log, scorer: str) -> dict[str, float]:
    return {
        k: v.value
        for k, v in next(s for s in log.results.scores if s.name == scorer).metrics.items()
    }


def test_text_only_model_gets_the_detector_list_and_is_scored() -> None:
    seen: list[str] = []

    def responder(messages):
        seen.append(messages[-1].text)
        return '<think>looks wrong</think>{"answer": false, "boxes": [[0, 0, 320, 320]]}'

    log = _run(omniverifier(n=6, max_tokens=64), responder=responder)
    assert all("Detected objects in the 320x320 image" in t and "Prompt:" in t for t in seen)
    m = _metrics(log, "verification_scorer")
    assert m["micro_accuracy"] == 0.5 and m["macro_accuracy"] == 0.5 and m["format"] == 1.0
    assert m["localisation"] == 0.0  # a whole-image box never reaches IoU 0.6
    for s in log.samples:
        v = s.scores["verification_scorer"].value
        assert v["judgment"] == (1.0 if s.target == "false" else 0.0)
        assert (
            v["joint"] == 1.0 + (0.0 if s.target == "true" else v["localised"]) * v["judgment"]
            or v["joint"] == 1.0
        )
    meta = log.eval.metadata
    assert meta["dataset_generated"] and any("observation=objects" in d for d in meta["deviations"])


def test_image_reaches_the_model_as_content_image() -> None:
    hashes: list[str] = []

    def responder(messages):
        images = [c for c in messages[-1].content if isinstance(c, ContentImage)]
        assert len(images) == 1
        header, data = images[0].image.split(",", 1)
        assert header == "data:image/png;base64"
        hashes.append(hashlib.sha256(base64.b64decode(data)).hexdigest())
        return "no verdict here"

    log = _run(omniverifier(n=4, observation="image"), responder=responder)
    expected = {
        hashlib.sha256(render(scene_from_dict(s.metadata["scene"])).png).hexdigest()
        for s in log.samples
    }
    assert set(hashes) == expected and len(hashes) == 4
    for s in log.samples:  # unusable replies are scored failures, not errors
        score = s.scores["verification_scorer"]
        assert score.metadata["failure"] and score.value["judgment"] == 0.0


def test_classical_verifier_in_the_task_matches_the_method() -> None:
    log = _run(
        omniverifier(n=8, verifier="classical", level="medium"), model="scripted/x", reply="unused"
    )
    verifier = ClassicalVerifier()
    for s in log.samples:
        spec = spec_from_dict(s.metadata["spec"])
        out = verifier.verify(render(scene_from_dict(s.metadata["scene"])).pixels, spec)
        r = sample_rewards(out, s.target == "true", [tuple(b) for b in s.metadata["error_boxes"]])
        v = s.scores["verification_scorer"].value
        assert (v["judgment"], v["localised"], v["joint"]) == (r.r_acc, r.r_meta, r.joint)


def test_run_all_args_build() -> None:
    task = omniverifier(**RUN_ALL_ARGS)
    assert len(task.dataset) == RUN_ALL_ARGS["n"]


def test_tts_end_to_end_with_a_text_only_generator() -> None:
    task = omniverifier(mode="tts", n=3, verifier="classical", generator="model", max_rounds=3)
    # The scripted generator writes the right scene for each prompt, after one broken reply.
    truth = {}
    for s in task.dataset:
        pair_scene = scene_from_dict(s.metadata["scene"])
        truth[s.input] = scene_to_json(pair_scene)
    calls: dict[str, int] = {}

    def responder(messages):
        text = messages[-1].text
        prompt = next(p for p in truth if p in text)
        calls[prompt] = calls.get(prompt, 0) + 1
        return "{not json" if calls[prompt] == 1 else "Here:\n" + truth[prompt]

    log = _run(task, responder=responder)
    m = _metrics(log, "tts_scorer")
    assert m["tts_success"] == 1.0 and m["bon_success"] == 1.0
    for s in log.samples:
        v = s.scores["tts_scorer"].value
        assert v["tts_calls"] == 2 and v["generation_failures"] == 1  # broken, then right
        assert v["verifier_tn"] == 2 and v["verifier_fp"] == v["verifier_fn"] == 0
    assert m["verifier_precision"] != m["verifier_precision"]  # nan: the verifier never said False


def test_tts_always_true_verifier_accepts_a_wrong_scene() -> None:
    task = omniverifier(mode="tts", n=2, verifier="always_true", generator="model", max_rounds=4)
    wrong = '{"objects": [{"shape": "circle", "colour": "red", "size": "small", "x": 30, "y": 30}], "sign": null}'
    log = _run(task, reply=wrong)
    for s in log.samples:
        v = s.scores["tts_scorer"].value
        assert v["tts_success"] == 0.0 and v["tts_calls"] == 1 and v["verifier_fn"] == 2


def test_tts_simulated_generator_with_oracle_accepts_exactly_the_right_scenes() -> None:
    # With the exact check as verifier, a loop accepts a scene iff it truly satisfies the prompt
    # and the verifier is never wrong. (Success itself is not certain: on the test seed 1000 one
    # of these 4 medium prompts is not repaired in 10 rounds, since a region edit redraws objects
    # without their relation and p_error re-injects errors; seed 0 had reached 4 of 4.)
    log = _run(
        omniverifier(
            mode="tts", n=4, verifier="oracle", generator="simulated", p_error=0.6, level="medium"
        ),
        reply="unused",
    )
    for s in log.samples:
        tts = s.metadata["omniverifier_tts"]
        assert (tts["tts_accepted"], tts["bon_accepted"]) == (
            tts["tts_success"],
            tts["bon_success"],
        )
        assert tts["verifier"]["fp"] == tts["verifier"]["fn"] == 0
    m = _metrics(log, "tts_scorer")
    assert m["verifier_precision"] == 1.0 and m["verifier_recall"] == 1.0
    assert m["tts_success"] >= 0.5


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"error_types": "wrong_shape"}, "error_types"),
        ({"mode": "tts", "dataset": "quokka"}, "dataset=generated"),
        ({"dataset": "quokka", "observation": "objects"}, "observation=image"),
        (
            {"dataset": "quokka", "observation": "image", "verifier": "classical"},
            "generated scenes",
        ),
        ({"p_error": 1.5}, "p_error"),
    ],
)
def test_bad_arguments_fail_clearly(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        omniverifier(**kwargs)


def test_oracle_is_refused_in_verify_mode() -> None:
    log = inspect_eval(
        omniverifier(n=2, verifier="oracle"),
        model=get_model("scripted/x", reply="x"),
        display="none",
        log_dir=None,
    )[0]
    assert log.status == "error" and "tts only" in str(log.error)


def test_viverbench_data_file(tmp_path) -> None:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (16, 16), (0, 0, 255)).save(buf, format="PNG")
    (tmp_path / "b.png").write_bytes(buf.getvalue())
    rec = {
        "task": "Concept Existence: Attribute",
        "question": "Is it red?",
        "answer": False,
        "image": "b.png",
    }
    (tmp_path / "v.json").write_text(
        json.dumps([rec, {**rec, "answer": True, "question": "Is it blue?"}])
    )
    log = _run(
        omniverifier(dataset="viverbench", data_file=str(tmp_path / "v.json"), observation="image"),
        reply='<think>blue</think>{"answer": false}',
    )
    m = _metrics(log, "verification_scorer")
    assert m["micro_accuracy"] == 0.5 and m["localisation"] != m["localisation"]  # no boxes: nan
