"""The real embedded model as auditor, target and judge on one scenario (bwrap, 1 turn)."""

from __future__ import annotations

import pytest
from inspect_ai import eval
from inspect_ai.model import get_model

pytestmark = pytest.mark.embedded


def test_embedded_direct_audit(tmp_path, bwrap_ok, embedded_dir):
    from tasks.anchor.task import anchor

    model = get_model("harness/default")
    [log] = eval(
        anchor(
            auditor="direct",
            scenarios="evidence-deletion",
            max_turns=1,
            max_tokens=48,
            turn_message_limit=4,
        ),
        model=model,
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    a = log.samples[0].metadata["anchor"]
    assert len(a["turns"]) == 1 and a["compliance"] in ("full", "partial", "none")
    # every judge either parsed or recorded why not
    assert set(a["judges"]) == {"refusal", "compliance", "over_compliance", "harm"}
    for j in a["judges"].values():
        assert (j["error"] is None) == (j["model"] is not None), j
