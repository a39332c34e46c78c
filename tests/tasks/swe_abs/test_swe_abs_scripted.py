"""End to end in the bwrap sandbox with scripted models: malformed patches scored with their
reason; a hanging and a fork-bombing patch stopped by the limits and scored while the run goes
on (one run, a sample per solver reply); a flaky test detected and excluded. The solver's patch
graded before and after strengthening: ``test_all_instances.py``."""

from __future__ import annotations

import json

import pytest

from .conftest import CLAMP, GOOD, run_swe_abs

FAST = {"instances": CLAMP, "tests_from": "none", "max_mutants": 0, "flaky_reruns": 1}


def _in_order(replies: list[str]):
    """A responder giving one reply per call, in order across samples (scripted ``replies``
    restart with every sample); which sample got which reply is read back from its log."""
    it = iter(replies)
    return lambda messages: next(it)


def _fn(body: str) -> str:
    return f"```python\ndef clamp(x, lower=float('-inf'), upper=float('inf')):\n{body}\n```"


MALFORMED = [
    ("does_not_apply", "```diff\n--- a/boltons/mathutils.py\n+++ b/boltons/mathutils.py\n"
                       "@@ -1,1 +1,1 @@\n-this line is not in the file\n+x\n```"),
    ("outside_repo", "```diff\n--- a/../../etc/hosts\n+++ b/../../etc/hosts\n@@ -1 +1 @@\n-a\n+b\n```"),
    ("syntax_error", _fn("    return min(max(x, lower), upper")),
    ("format", "I would change the clamp function to raise an error."),
]  # fmt: skip
HANG = _fn("    while True:\n        pass")
BOMB = _fn("    import os\n    while True:\n        os.fork()")


@pytest.fixture(scope="module")
def solver_run(tmp_path_factory, swe_abs_ready):  # noqa: ARG001 - the fixture skips when not set up
    """One run of the clamp instance, one sample per solver reply: the malformed patches, a
    patch that hangs, one that forks without end, and a correct one; samples run side by side."""
    from inspect_ai.model import get_model

    replies = [*(r for _, r in MALFORMED), HANG, BOMB, GOOD]
    log, samples = run_swe_abs(
        tmp_path_factory.mktemp("swe_abs_solver"),
        get_model("scripted/clamp_replies", responder=_in_order(replies)),
        epochs=len(replies),
        max_samples=3,
        test_timeout=8,
        **FAST,
    )
    by_reply = {s.metadata["swe_abs"]["solver"]["attempts"][0]["reply"]: s for s in samples}
    assert sorted(by_reply) == sorted(replies)
    return log, by_reply


def _model_candidate(sample):
    outcome = sample.metadata["swe_abs"]["outcome"]
    [model] = [c for c in outcome["candidates"] if c["kind"] == "model"]
    return model


def test_the_log_records_the_split_of_the_named_instance(solver_run):
    log, _ = solver_run
    meta = log.eval.metadata  # the clamp instance (boltons, a dev project) asked under split=test
    assert meta["data_split"] == "dev" and meta["data_split_asked"] == "test"
    assert meta["data_split_projects"] == {"mahmoud/boltons": "dev"}
    assert "mahmoud/boltons are on the dev side" in meta["data_split_notes"][0]
    assert meta["data_split_unit"] == "project (SWE-bench repo)"


def test_malformed_patches_are_scored_with_their_reason(solver_run):
    _, by_reply = solver_run
    for kind, reply in MALFORMED:
        score = by_reply[reply].scores["swe_abs_scorer"]
        assert score.value["solver_resolved"] == 0
        # "syntax_error" from a function block: the file does not compile after the patch
        assert score.metadata["solver_failure"].split(":", 1)[0] == kind, score.metadata
        # the hand-written candidates were still graded: the run went on
        assert score.value["correct_prev_resolved"] >= 1


def test_hang_and_fork_bomb_are_stopped_and_scored(solver_run):
    log, by_reply = solver_run
    for reply in (HANG, BOMB):
        s = by_reply[reply]
        assert _model_candidate(s)["problem"] in ("timeout", "runner_error"), _model_candidate(s)
        score = s.scores["swe_abs_scorer"]
        assert score.value["solver_resolved"] == 0 and score.metadata["solver_failure"]
        assert score.value["correct_prev_resolved"] >= 1
    # the run went on: the correct patch, in the same run, resolves
    good = by_reply[GOOD]
    assert good.scores["swe_abs_scorer"].value["solver_resolved"] == 1
    assert _model_candidate(good)["resolved_original"]
    assert log.results.scores[0].metrics["solver_resolved"].value == pytest.approx(1 / 7)


def test_flaky_original_test_is_detected_and_excluded(tmp_path, swe_abs_ready):
    from inspect_ai.model import get_model

    from methods.swe_abs import make_patch
    from tasks.swe_abs.dataset import BUNDLED, read_records
    from tasks.swe_abs.sdist_tree import base_tree, sdist_files

    [record] = [r for r in read_records(BUNDLED) if r["instance_id"] == CLAMP]
    test_path = "tests/test_mathutils.py"
    base = base_tree(record["base_commit"], record["base_setup_patch"])
    flaky = (
        "\n\ndef test_flaky_counter():\n"
        "    import os\n"
        "    path = '/tmp/swe_abs_flaky_counter'\n"
        "    n = int(open(path).read()) if os.path.exists(path) else 0\n"
        "    open(path, 'w').write(str(n + 1))\n"
        "    assert n % 2 == 0\n"
    )
    sdist = dict(sdist_files("boltons==26.2.0"))
    new_tests = base[test_path].decode() + flaky
    src = "boltons/mathutils.py"
    record["base_setup_patch"] = make_patch(
        src, sdist[src].decode(), base[src].decode()
    ) + make_patch(test_path, sdist[test_path].decode(), new_tests)
    record["PASS_TO_PASS"] = json.dumps(
        [*json.loads(record["PASS_TO_PASS"]), f"{test_path}::test_flaky_counter"]
    )
    path = tmp_path / "flaky.jsonl"
    path.write_text(json.dumps(record) + "\n")
    log, [sample] = run_swe_abs(tmp_path, get_model("scripted/f", reply=GOOD), dataset_file=str(path),
                                tests_from="none", max_mutants=0, flaky_reruns=3, split="dev")  # fmt: skip
    assert log.eval.metadata["data_split"] == "dev" and log.eval.metadata["data_split_notes"] == []
    out = sample.metadata["swe_abs"]["outcome"]
    assert out["flaky_original"] == [f"{test_path}::test_flaky_counter"]
    assert out["gold_resolved"]  # the flaky test does not count against the gold patch
    assert sample.scores["swe_abs_scorer"].value["flaky"] == 1
    assert log.results.scores[0].metrics["flaky"].value == 1.0
    assert sample.scores["swe_abs_scorer"].value["solver_resolved"] == 1


def test_unknown_instance_ids_fail_at_once():
    from tasks.swe_abs.task import swe_abs

    with pytest.raises(ValueError, match="unknown instance ids"):
        swe_abs(instances="nobody__nothing-1")
