"""The image path end to end on the locally built VLM (SmolLM2 text part, UNTRAINED vision
encoder): the page reaches the model as pixels; what it answers means nothing (untrained)."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ContentImage

from tasks.docval.task import docval

pytestmark = pytest.mark.embedded


def test_untrained_vlm_reads_the_page_image_in_process(embedded_dir, tmp_path) -> None:
    log = inspect_eval(
        docval(
            n_docs=1,
            questions_per_doc=1,
            ocr_engine="gold",
            model_input="image",
            max_new_tokens=24,
            split="all",
        ),
        model="harness/default-vlm",
        display="none",
        log_dir=str(tmp_path),
    )[0]
    assert log.status == "success", log.error
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(embedded_dir))
    for s in log.samples:
        first = s.messages[0].content
        assert isinstance(first, list) and any(isinstance(c, ContentImage) for c in first)
        assert "DETECTED TEXT REGIONS" not in s.messages[0].text
        assert s.output.completion
        score = s.scores["docval_scorer"]
        # untrained: any reply is fine, but it is scored (a miss with its reason if unusable)
        assert score.value["format_ok"] == 1.0 or score.metadata["failure"]
        # the image tokens were sent: the input is longer than the prompt's text by at least
        # one 16-token tile
        text_tokens = len(tokenizer(s.messages[0].text)["input_ids"])
        assert s.output.usage.input_tokens >= text_tokens + 16
