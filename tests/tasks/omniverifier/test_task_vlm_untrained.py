"""The image path end to end on the locally built VLM (SmolLM2 text part, UNTRAINED vision
encoder): images reach the model as pixels; what it answers is not meaningful (untrained)."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ContentImage

from tasks.omniverifier.task import omniverifier

pytestmark = pytest.mark.embedded


def test_untrained_vlm_verifies_images_in_process(embedded_dir) -> None:
    pytest.importorskip("harness.models.vlm", reason="the locally built VLM has not landed")
    log = inspect_eval(
        omniverifier(n=2, observation="image", max_tokens=24),
        model="harness/default-vlm",
        display="none",
        log_dir=None,
    )[0]
    assert log.status == "success", log.error
    for s in log.samples:
        assert any(isinstance(c, ContentImage) for c in s.messages[0].content)
        assert s.output.completion
        score = s.scores["verification_scorer"]
        assert score.answer in ("true", "false") or score.metadata["failure"]
