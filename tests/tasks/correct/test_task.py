"""End-to-end: the inspect task against the scripted model (every method) and the embedded model."""

import pytest
from inspect_ai import eval
from inspect_ai.model import get_model

from tasks.correct.task import RUN_ALL_ARGS, correct


def responder(messages):
    text = messages[-1].text
    if "ERROR SCHEMA that helps" in text:
        return "Error Signatures: s\nError Context: c\nDetection Heuristics: h"
    if "Yes/No" in text:
        return "1. Yes.\n2. Reason: r" if "(step 1)" in text else "1. No."
    if "upper half" in text:
        return "upper half"
    return "Agent Name: Excel_Expert\nStep Number: 0\nReason for Mistake: r"


def _run(log_dir, **kwargs):
    log = eval(
        correct(**kwargs),
        model=get_model("scripted/c", responder=responder),
        display="none",
        log_dir=log_dir,
    )[0]
    assert log.status == "success", log.error
    return log


def _metric(log, key):
    return {s.name: s for s in log.results.scores}[key].metrics["mean"].value


@pytest.mark.parametrize(
    "method",
    [
        "correct",
        "all_at_once",
        "step_by_step",
        "binary_search",
        "random",
        "first_step",
        "most_frequent_agent",
    ],
)
def test_every_method_scripted_data(data_dir, tmp_path, method):
    log = _run(
        str(tmp_path),
        method=method,
        subset="algorithm_generated",
        split="all",  # files 1-3, whichever side their questions are on
        limit_trajectories=3,
        embedder="tfidf",
    )
    samples = {s.id: s for s in log.samples}
    assert set(samples) == {
        "algorithm_generated/1",
        "algorithm_generated/2",
        "algorithm_generated/3",
    }
    loc = samples["algorithm_generated/1"].metadata["localisation"]
    gold1 = samples["algorithm_generated/1"].metadata
    assert (gold1["mistake_agent"], gold1["mistake_step"]) == ("Excel_Expert", 0)
    if method in ("correct", "all_at_once"):
        # the script always answers Excel_Expert@0: right on file 1 only (gold of 2 and 3 differ)
        assert (loc["agent"], loc["step"]) == ("Excel_Expert", 0)
        assert _metric(log, "step") == pytest.approx(1 / 3)
        bad = samples["algorithm_generated/2"].scores["localisation_scorer"]
        assert "unknown agent" in bad.explanation  # Excel_Expert is not in file 2's team
    if method == "correct":
        assert loc["retrieved"] and "algorithm_generated/1" not in loc["retrieved"]
        assert "leave-one-out" in log.eval.metadata["retrieval_protocol"]
    if method == "step_by_step":
        assert loc["step"] == 1 and loc["calls"] == 2
    if method == "binary_search":
        assert loc["step"] == 0
    if method == "first_step":  # file 1's gold is step 0: right there, and no model call
        assert (loc["step"], loc["calls"], _metric(log, "step")) == (0, 0, pytest.approx(1 / 3))
    if method == "most_frequent_agent":
        steps = [s for s in samples.values() if s.metadata["localisation"]["calls"] == 0]
        assert len(steps) == 3 and loc["agent"] in gold1["agents"]
    assert any("truncation" in d for d in log.eval.metadata["deviations"])
    assert _metric(log, "tokens") >= 0


def test_hand_crafted_long_trajectories_fit_the_budget_data(data_dir, tmp_path):
    log = _run(
        str(tmp_path),
        method="all_at_once",
        subset="hand_crafted",
        limit_trajectories=2,
        max_prompt_tokens=1024,
    )
    for s in log.samples:
        tr = s.metadata["localisation"]["truncation"][0]
        assert tr["tokens"] <= 1024 and tr["steps_cut"] > 0


def test_injected_subset_without_files_names_the_generator(tmp_path):
    from harness.data import DatasetNotFoundError

    with pytest.raises(DatasetNotFoundError, match="tasks.correct.inject"):
        correct(subset="injected", injected_dir=str(tmp_path))


@pytest.mark.embedded
def test_embedded_model_data(data_dir, embedded_dir, tmp_path):
    args = dict(
        RUN_ALL_ARGS,
        limit_trajectories=2,
        max_new_tokens=48,
        schema_max_tokens=64,
        max_prompt_tokens=768,
    )
    log = eval(correct(**args), model="harness/default", display="none", log_dir=str(tmp_path))[0]
    assert log.status == "success", log.error
    assert len(log.samples) == 2
    for s in log.samples:
        loc = s.metadata["localisation"]
        assert loc["token_counter"].startswith("tokenizer:")
        assert loc["truncation"][0]["tokens"] <= 768
        assert loc["tokens"] > 0 and loc["retrieved"]


@pytest.mark.embedded
def test_embedded_model_constrained_replies_parse_data(
    data_dir, embedded_dir, tmp_path, monkeypatch
):
    # constrained=on: every all-at-once / binary-search reply of the real model is in its format.
    from harness.constrained import CONSTRAINED_ENV

    monkeypatch.setenv(CONSTRAINED_ENV, "on")
    for method in ("all_at_once", "binary_search"):
        log = eval(
            correct(
                method=method,
                subset="algorithm_generated",
                limit_trajectories=2,
                max_prompt_tokens=384,
                max_new_tokens=48,
            ),
            model="harness/default",
            display="none",
            log_dir=str(tmp_path / method),
        )[0]
        assert log.status == "success", log.error
        for s in log.samples:
            loc = s.metadata["localisation"]
            assert loc["step_error"] is None and loc["agent_error"] is None, loc["reason"]
            assert "format_failure" not in loc["reply_status"], loc["reply_status"]
            assert sum(loc["reply_status"].values()) == loc["calls"]


def test_malformed_answer_format_is_an_error_at_task_load_data(data_dir, monkeypatch):
    """A format the decoding engine cannot compile fails when the task is built, naming it."""
    import tasks.correct.task as task_module
    from harness.constrained import AnswerFormatError
    from methods.common import AnswerFormat

    # A lookahead: valid for Python's re, refused by the grammar engine.
    bad = AnswerFormat("localisation", regex="(?=Agent)Agent Name: .*")
    monkeypatch.setattr(task_module, "method_answer_formats", lambda *a: [bad])
    with pytest.raises(AnswerFormatError, match="localisation.*regex cannot be compiled"):
        correct(method="all_at_once", subset="algorithm_generated", limit_trajectories=1)


def test_every_trajectory_format_is_checked_at_task_load_data(data_dir, monkeypatch):
    import tasks.correct.task as task_module

    seen: list[int] = []
    real = task_module.check_answer_formats
    monkeypatch.setattr(
        task_module, "check_answer_formats", lambda f: seen.append(len(f)) or real(f)
    )
    correct(method="all_at_once", subset="algorithm_generated", limit_trajectories=3)
    correct(method="correct", subset="algorithm_generated", limit_trajectories=2)
    correct(method="binary_search", subset="algorithm_generated", limit_trajectories=2)
    # one localisation format per trajectory; + the teacher's format when it distils; one half.
    assert seen == [3, 3, 1]


def test_token_counter_finds_the_weights_of_a_served_embedded_model(embedded_dir, monkeypatch):
    """`model=default` on vLLM is `vllm/smollm2-135m-instruct` to inspect: its prompts are still
    counted with its own tokenizer (served-model map, or HARNESS_WHITEBOX_MODEL)."""
    from harness.models import resolve_model_path
    from tasks.correct.task import _token_counter

    folder = str(resolve_model_path("default"))
    monkeypatch.delenv("HARNESS_WHITEBOX_MODEL", raising=False)
    assert _token_counter("vllm/some-api-model")[1] == "approx_3_chars_per_token"
    monkeypatch.setenv("HARNESS_WHITEBOX_MODEL", folder)
    count, name = _token_counter("vllm/smollm2-135m-instruct")
    assert name == "tokenizer:vllm/smollm2-135m-instruct"
    assert count("Step Number: 12") < len("Step Number: 12") / 2
