"""The real embedded model as the agent (agent=model) on one sample: the run completes and the
sample is scored — the 135M model rarely makes the calls as asked, which is a scored failure of
the agent, never an error."""

from __future__ import annotations

import pytest
from inspect_ai import eval
from inspect_ai.model import get_model

pytestmark = pytest.mark.embedded


def test_embedded_model_as_agent(tmp_path, bwrap_ok, embedded_dir) -> None:  # noqa: ARG001
    from tasks.agent_stress import agent_stress

    [log] = eval(
        agent_stress(
            agent="model",
            samples=1,
            workloads="network",
            concurrency=1,
            max_tokens=48,
            sample_time_limit=150,
        ),
        model=get_model("harness/default"),
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    [sample] = log.samples
    score = next(iter(sample.scores.values()))
    assert score.value["ok"] in (0, 1)
    if not score.value["ok"]:
        assert score.metadata["failure"], score  # the reason is recorded
    metrics = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
    assert metrics["leaked_total"] == 0
