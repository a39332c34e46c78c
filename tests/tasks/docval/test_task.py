"""End-to-end: the docval task against scripted models (every method, the image path, malformed
replies, the feedback loop's leakage guard, distillation and its export) and the embedded model."""

from __future__ import annotations

import json
import math

import pytest
from inspect_ai import eval
from inspect_ai.model import ContentImage, get_model

from tasks.docval.export import export_corrections, export_traces
from tasks.docval.task import RUN_ALL_ARGS, docval

GOLD_ARGS = dict(dataset="rendered", split="all", n_docs=4, questions_per_doc=1, ocr_engine="gold")


def _run(tmp_path, model, model_roles=None, **kwargs):
    log = eval(
        docval(**{**GOLD_ARGS, **kwargs}),
        model=model,
        model_roles=model_roles,
        display="none",
        log_dir=str(tmp_path),
    )[0]
    assert log.status == "success", log.error
    return log


def _metric(log, key):
    return (
        log.results.scores[0].metrics[key].value if key in log.results.scores[0].metrics else None
    )


def _metrics(log):
    """Results as {"anls/mean": value, ...} (one EvalScore per value key)."""
    return {f"{s.name}/{k}": m.value for s in log.results.scores for k, m in s.metrics.items()}


def _value(sample, key):
    return next(iter(sample.scores.values())).value[key]


def test_ocr_baseline_on_exact_words_is_perfect(tmp_path):
    log = _run(tmp_path, "none/none", method="ocr", n_docs=8)
    scores = _metrics(log)
    assert scores["anls/mean"] == 1.0 and scores["map/mean"] > 0.99
    assert scores["validator_pass/mean"] == 1.0
    meta = log.eval.metadata
    assert meta["dataset_generated"] and any("ocr_engine=gold" in d for d in meta["deviations"])


def test_trivial_baseline_scores_below_rules_paired(tmp_path):
    from tasks.docval.compare import paired, summary

    rules = _run(tmp_path, "none/none", method="ocr", n_docs=8)
    trivial = _run(tmp_path, "none/none", method="ocr", n_docs=8, answer_rule="largest_amount")
    assert _metrics(trivial)["anls/mean"] < 0.5
    text = paired(rules.location, trivial.location, "anls", field="total")
    assert text.startswith("anls on 4 paired questions (field=total): A 100.0")
    table = summary([rules.location], by="field")
    assert "| all | 8 | 100.0 [100.0, 100.0] |" in table and "| total | 4 |" in table


def test_model_reads_regions_and_scored_reply(tmp_path):
    seen = []

    def responder(messages):
        seen.append(messages[-1].text)
        return '{"reasoning": "the text region", "answer": "nothing", "bbox": [0, 0, 10, 10]}'

    log = _run(tmp_path, get_model("scripted/d-1", responder=responder))
    assert all("Region #0: [" in t and "QUESTION:" in t for t in seen)
    for s in log.samples:
        assert _value(s, "format_ok") == 1.0 and _value(s, "anls") == 0.0
        assert _value(s, "iou") == 0.0 and _value(s, "map") == 0.0
        assert s.scores["docval_scorer"].metadata["failure"] is None
        assert s.scores["docval_scorer"].metadata["reply_status"] == "ok"


def test_malformed_reply_is_a_scored_miss_with_reason(tmp_path):
    log = _run(tmp_path, get_model("scripted/d-2", reply="The total is probably nine."))
    for s in log.samples:
        score = s.scores["docval_scorer"]
        assert score.value["anls"] == 0.0 and score.value["format_ok"] == 0.0
        assert "unparseable" in score.metadata["failure"]
        assert "model failure: unparseable" in score.explanation
        # told apart from a reply cut by the token limit (the scripted model stops normally)
        assert score.metadata["reply_status"] == "format_failure"
        assert score.metadata["constrained"] is False
    from tasks.docval.compare import formats

    table = formats([log.location])
    # 4 questions, none well-formed, 0 ok / 0 truncated / 4 format failures
    assert "| 4 | 0.0 [0.0, 0.0] | 0 | 0 | 4 | 0.0 [0.0, 0.0] | — | — |" in table, table
    assert "unparseable (4)" in table
    log = _run(
        tmp_path, get_model("scripted/d-3", reply='{"answer": "x", "bbox": [5000, 1, 5100, 9]}')
    )
    assert all("outside" in s.scores["docval_scorer"].metadata["failure"] for s in log.samples)


def test_image_path_sends_image_content(tmp_path):
    got = []

    def responder(messages):
        content = messages[-1].content
        images = (
            [c for c in content if isinstance(c, ContentImage)] if isinstance(content, list) else []
        )
        got.append(images)
        assert "DETECTED TEXT REGIONS" not in messages[-1].text  # a VLM reads the image itself
        return '{"reasoning": "r", "answer": "a", "bbox": [1, 1, 20, 20]}'

    log = _run(
        tmp_path,
        get_model("scripted/vlm-4", responder=responder),
        model_input="image",
        box_format="0-1000",
    )
    assert len(got) == 4 and all(
        len(i) == 1 and i[0].image.startswith("data:image/png;base64,") for i in got
    )
    s = log.samples[0]
    assert s.scores["docval_scorer"].metadata["failure"] is None
    w, h = s.metadata["image_size"]
    assert s.metadata["docval"]["prediction"]["bbox"] == pytest.approx(
        [w / 1000, h / 1000, 20 * w / 1000, 20 * h / 1000], abs=0.1
    )


def test_gold_free_loop_never_shows_the_label(tmp_path):
    prompts = []

    def responder(messages):
        prompts.append([m.text for m in messages if m.role == "user"])
        return '{"reasoning": "r", "answer": "NOTHERE", "bbox": [0, 0, 5, 5]}'

    log = _run(
        tmp_path,
        get_model("scripted/fb-5", responder=responder),
        method="feedback",
        feedback_rounds=2,
    )
    for s in log.samples:
        gold = s.metadata["answers"][0]
        box = [round(v) for v in s.metadata["gold_box"]]
        hist = s.metadata["docval"]["history"]
        assert len(hist) == 3 and "gold_free" in hist[0]
        for m in s.messages[2:]:
            if m.role == "user":
                assert gold not in m.text and str(box) not in m.text
                assert "does not occur" in m.text
        assert not math.isnan(_value(s, "anls_initial"))
    assert "anls_initial/mean" in _metrics(log)


def test_gold_free_rule_snaps_box_onto_own_answer(tmp_path):
    import re

    from methods.docval import text_in_box, words_from_dicts

    def answer_first_amount(messages):
        # an amount printed on the page as the answer, with a box in the wrong place
        m = re.search(r'Region #\d+: \[[^\]]+\] → "([0-9][0-9,]*\.\d\d)"', messages[-1].text)
        return json.dumps({"reasoning": "r", "answer": m.group(1), "bbox": [0, 0, 5, 5]})

    log = _run(
        tmp_path,
        get_model("scripted/fb-6", responder=answer_first_amount),
        method="feedback",
        feedback_applier="rule",
        n_docs=2,
    )
    for s in log.samples:
        hist = s.metadata["docval"]["history"]
        assert len(hist) == 2 and not hist[0]["gold_free"]["passed"]
        final = hist[-1]
        assert "snapped" in final["notes"][-1]
        words = words_from_dicts(json.loads(open(s.metadata["gold_words"]).read()))
        assert final["answer"] in text_in_box(tuple(final["bbox"]), words)


def test_oracle_control_reaches_the_label(tmp_path):
    log = _run(
        tmp_path,
        get_model("scripted/fb-7", reply='{"answer": "wrong", "bbox": [0, 0, 5, 5]}'),
        method="feedback",
        feedback_source="oracle",
        feedback_applier="rule",
    )
    m = _metrics(log)
    assert m["anls/mean"] == 1.0 and m["map/mean"] == 1.0
    assert m["anls_initial/mean"] == 0.0
    assert any("oracle" in d for d in log.eval.metadata["deviations"])


def test_distill_uses_teacher_and_exports(tmp_path):
    teacher_reply = (
        "REASONING:\nStep 1: the text region.\nStep 2: locate it.\nStep 3: answer value.\n"
        "Step 7: the bbox.\n\nANSWER: {answer}\nBBOX: [{box}]"
    )

    def teacher(messages):
        text = messages[-1].text
        assert "Step 7: Bbox determination" in text
        return "ANSWER: x\nBBOX: [0, 0, 5, 5]"

    def student(messages):
        raise AssertionError("distill must call the teacher role, not the model under test")

    log = _run(
        tmp_path,
        get_model("scripted/student-8", responder=student),
        model_roles={"teacher": get_model("scripted/teacher-9", responder=teacher)},
        method="distill",
    )
    out = tmp_path / "traces.jsonl"
    summary = export_traces(log.location, str(out))
    assert summary["traces"] == 4 and summary["kept"] == 0 and summary["pass_rate"] == 0.0
    assert out.read_text() == ""
    del teacher_reply


def test_corrections_on_dev_only(tmp_path):
    reply = '{"reasoning": "r", "answer": "x", "bbox": [0, 0, 5, 5]}'
    dev = _run(tmp_path, get_model("scripted/s-10", reply=reply), split="dev", n_docs=6)
    out = tmp_path / "corr.jsonl"
    summary = export_corrections(dev.location, str(out))
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert summary["predictions"] == 2 and len(records) == 2
    r = records[0]
    assert r["split"] == "dev" and r["output"]["answer"] == dev.samples[0].metadata["answers"][0]
    assert any("[HIGH]" in f for f in r["input"]["feedback"])
    test = _run(tmp_path / "t", get_model("scripted/s-11", reply=reply), split="test", n_docs=6)
    with pytest.raises(SystemExit, match="split=dev only"):
        export_corrections(test.location, str(tmp_path / "no.jsonl"))


def test_sroie_data_ocr_baseline(tmp_path, data_dir):
    log = _run(tmp_path, "none/none", dataset="sroie", method="ocr", limit_docs=3)
    assert len(log.samples) == 12
    meta = log.eval.metadata
    assert meta["data_split"] == "all" and meta["data_split_unit"].startswith("vendor")
    assert meta["sroie_fields_matched"] / meta["sroie_fields"] >= 0.95
    assert isinstance(meta["sroie_unmatched"], list)
    assert _metrics(log)["anls/mean"] > 0.5


def test_run_all_args_are_small():
    assert RUN_ALL_ARGS["n_docs"] * RUN_ALL_ARGS["questions_per_doc"] <= 4


@pytest.mark.embedded
def test_embedded_model(tmp_path, embedded_dir):
    # one receipt (the shortest page), a short reply: the real model end to end
    args = dict(RUN_ALL_ARGS, n_docs=1, max_new_tokens=40)
    log = eval(docval(**args), model="harness/default", display="none", log_dir=str(tmp_path))[0]
    assert log.status == "success", log.error
    assert len(log.samples) == 1
    for s in log.samples:
        score = s.scores["docval_scorer"]
        assert 0.0 <= score.value["anls"] <= 1.0
        # a reply the parser cannot use is a scored failure with its reason, never an error
        assert score.value["format_ok"] == 1.0 or score.metadata["failure"]


@pytest.mark.embedded
def test_embedded_model_constrained_replies_parse(tmp_path, embedded_dir, monkeypatch):
    # constrained=on (what `make run` uses): the real model's reply is decoded under the JSON
    # reply format, so it always parses; a degenerate box would be skill, not format
    from harness.constrained import CONSTRAINED_ENV

    monkeypatch.setenv(CONSTRAINED_ENV, "on")
    args = dict(RUN_ALL_ARGS, n_docs=1, max_new_tokens=96)
    log = eval(docval(**args), model="harness/default", display="none", log_dir=str(tmp_path))[0]
    assert log.status == "success", log.error
    for s in log.samples:
        score = s.scores["docval_scorer"]
        assert score.metadata["constrained"] is True
        assert score.metadata["reply_status"] == "ok", s.output.completion
        failure = score.metadata["failure"]
        assert failure is None or failure.startswith("bbox: "), failure
        assert json.loads(s.output.completion)["answer"].strip()


def test_default_split_is_test_and_recorded(tmp_path, data_dir):
    task = docval(dataset="sroie", method="ocr", ocr_engine="gold", limit_docs=6)
    log = eval(task, model="none/none", display="none", log_dir=str(tmp_path))[0]
    assert log.status == "success", log.error
    assert log.eval.metadata["data_split"] == "test"
    assert {s.metadata["split"] for s in log.samples} == {"test"}
    assert {s.metadata["vendor"] for s in log.samples} == {"ABC HO TRADING"}
    assert RUN_ALL_ARGS["split"] == "all"
