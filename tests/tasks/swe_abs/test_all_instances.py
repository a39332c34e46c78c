"""Over every bundled instance, the model-free strengthening with the task's default settings:
the gold patch resolves its instance and the base does not, and no correct candidate patch is
ever rejected — by the original tests or by the strengthened ones."""

from __future__ import annotations

from .conftest import run_swe_abs


def test_no_correct_candidate_is_ever_rejected(tmp_path, swe_abs_ready):
    from inspect_ai.model import get_model

    from tasks.swe_abs.dataset import BUNDLED, load_instances

    n = len(load_instances(BUNDLED))
    log, samples = run_swe_abs(tmp_path, get_model("mockllm/model"), solver="none", max_samples=2)
    assert len(samples) == n and all(s.error is None for s in samples)
    problems = []
    for s in samples:
        out = s.metadata["swe_abs"]["outcome"]
        if not out["gold_resolved"] or not out["base_fails_f2p"]:
            problems.append((s.id, "gold/base", out["notes"]))
        for c in out["candidates"]:
            if c["kind"] == "correct" and not (c["resolved_original"] and c["resolved_abs"]):
                problems.append(
                    (s.id, c["system"], c["new_failed"], c["f2p_failed"], c["p2p_failed"])
                )
    assert problems == []
    metrics = log.results.scores[0].metrics
    assert metrics["correct_rejected"].value == 0.0
    assert metrics["strengthened"].value > 0  # the strengthening does reject wrong patches
