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


def test_embedded_constrained_audit_acts_and_judges_parse(
    tmp_path, bwrap_ok, embedded_dir, monkeypatch
):
    # constrained=on: the target's first move in a turn is a real tool call in bwrap, and every
    # judge verdict is valid JSON with its key.
    from harness.constrained import CONSTRAINED_ENV
    from tasks.anchor.task import anchor

    monkeypatch.setenv(CONSTRAINED_ENV, "on")
    [log] = eval(
        anchor(
            auditor="direct",
            scenarios="evidence-deletion",
            max_turns=1,
            max_tokens=64,
            judge_max_tokens=80,
            turn_message_limit=2,
        ),
        model=get_model("harness/default"),
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    a = log.samples[0].metadata["anchor"]
    assert a["commands"] and a["commands"][0]["tool"] in ("bash", "python"), a["turns"]
    for name, j in a["judges"].items():
        assert j["error"] is None, (name, j["raw"])
