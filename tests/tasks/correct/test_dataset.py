import json

import pytest

from tasks.correct.dataset import (
    RecordError,
    correct_error_record,
    load_who_and_when,
    trajectory_to_record,
    trajectory_to_sample,
    who_and_when_record,
)

AG = {
    "is_correct": False,
    "question": "Q?",
    "question_ID": "abc",
    "level": "1",
    "ground_truth": "42",
    "history": [
        {"content": "plan", "role": "assistant", "name": "Planner_Expert"},
        {"content": "ran code", "role": "user", "name": "Computer_terminal"},
        {"content": "verified", "role": "user", "name": "Verification_Expert"},
    ],
    "mistake_agent": "Verification_Expert",
    "mistake_step": "2",
    "mistake_reason": "wrong check",
    "system_prompt": {
        "Planner_Expert": "...",
        "Verification_Expert": "...",
        "Silent_Expert": "...",
    },
}
HC = {
    "history": [
        {"content": "question", "role": "human"},
        {"content": "think", "role": "Orchestrator (thought)"},
        {"content": "go", "role": "Orchestrator (-> WebSurfer)"},
        {"content": "page", "role": "WebSurfer"},
    ],
    "question": "Q2?",
    "ground_truth": "x",
    "is_corrected": False,
    "question_ID": "q2",
    "mistake_agent": "Orchestrator",
    "mistake_step": "1",
    "mistake_reason": "bad plan",
}


def test_algorithm_generated_record():
    t = who_and_when_record(AG, subset="algorithm_generated", file_id="7")
    assert (
        t.id == "algorithm_generated/7" and t.mistake_step == 2 and isinstance(t.mistake_step, int)
    )
    assert [s.agent for s in t.steps] == [
        "Planner_Expert",
        "Computer_terminal",
        "Verification_Expert",
    ]
    assert (
        "Silent_Expert" in t.agents
        and t.metadata["level"] == "1"
        and t.metadata["is_correct"] is False
    )
    s = trajectory_to_sample(t)
    assert (
        s.target == "2"
        and s.metadata["mistake_agent"] == "Verification_Expert"
        and s.metadata["n_steps"] == 3
    )


def test_hand_crafted_record_role_suffix_is_label_not_agent():
    t = who_and_when_record(HC, subset="hand_crafted", file_id="3")
    assert [s.agent for s in t.steps] == ["human", "Orchestrator", "Orchestrator", "WebSurfer"]
    assert t.steps[2].label == "Orchestrator (-> WebSurfer)"
    assert (
        "level" not in t.metadata and t.metadata["is_corrected"] is False
    )  # optional keys only when present


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: r.pop("history"), "missing field 'history'"),
        (lambda r: r.update(mistake_step="two"), "is not an integer"),
        (lambda r: r.update(mistake_step="9"), "outside the history"),
        (lambda r: r.update(history=[]), "history is empty"),
        (lambda r: r.update(history=[{"content": "x"}]), "none of the speaker fields"),
        (lambda r: r.update(mistake_agent=3), "should be"),
    ],
)
def test_malformed_records_name_file_and_field(mutate, message):
    record = json.loads(json.dumps(HC))
    mutate(record)
    with pytest.raises(RecordError, match=message) as err:
        who_and_when_record(record, subset="hand_crafted", file_id="5")
    assert "Hand-Crafted/5.json" in str(err.value)


def test_correct_error_record_synthetic():
    row = {
        "trajectory_id": "gpt5nano_0001",
        "dataset": "math500",
        "generator_model": "gpt-5-nano",
        "question_id": "task3_1",
        "question": "1+1?",
        "groundtruth": "",
        "history": [{"role": "Orchestrator", "content": "a"}, {"role": "Coder", "content": "b"}],
        "mistake_agent": "Coder",
        "mistake_step": 1,
        "mistake_reason": "r",
        "is_corrected": True,
        "gaia_level": None,
        "level": None,
    }
    t = correct_error_record(row, index=0)
    assert t.id == "correct_error/gpt5nano_0001" and t.mistake_step == 1 and t.ground_truth == ""
    with pytest.raises(RecordError, match="row 4 .*trajectory_id"):
        correct_error_record({**row, "trajectory_id": ""}, index=4)


def test_injected_record_roundtrip():
    t = who_and_when_record(HC, subset="hand_crafted", file_id="3")
    back = who_and_when_record(trajectory_to_record(t), subset="injected", file_id="3")
    assert [(s.label, s.content) for s in back.steps] == [(s.label, s.content) for s in t.steps]
    assert back.mistake_step == t.mistake_step and back.mistake_agent == t.mistake_agent


def test_load_who_and_when_data_both_subsets(data_dir):
    ag = load_who_and_when(data_dir / "who_and_when", "algorithm_generated")
    hc = load_who_and_when(data_dir / "who_and_when", "hand_crafted")
    assert (len(ag), len(hc)) == (126, 58)
    assert [t.id for t in ag[:3]] == [
        "algorithm_generated/1",
        "algorithm_generated/2",
        "algorithm_generated/3",
    ]
    assert sum("labels" in t.metadata for t in ag) == 1
    assert (
        sum("level" in t.metadata for t in hc) == 30
        and sum("mistake_type" in t.metadata for t in hc) == 4
    )
    assert ag[0].mistake_step == 0 and ag[0].mistake_agent == "Excel_Expert"
    assert hc[0].mistake_step == 12 and hc[0].mistake_agent == "WebSurfer"
    assert max(t.n_steps for t in hc) == 130


def test_random_bytes_file_is_an_error_naming_the_file(tmp_path):
    folder = tmp_path / "Algorithm-Generated"
    folder.mkdir()
    (folder / "1.json").write_text(json.dumps(AG))
    (folder / "2.json").write_bytes(bytes([0xFF, 0xFE, 0x80, 0x9C]) * 64)
    with pytest.raises(RecordError, match=r"Algorithm-Generated/2\.json: not UTF-8 text"):
        load_who_and_when(tmp_path, "algorithm_generated")


def test_mistake_agent_outside_the_trajectory_is_flagged(tmp_path, caplog):
    record = dict(AG, mistake_agent="Ghost_Expert")
    t = who_and_when_record(record, subset="algorithm_generated", file_id="9")
    assert t.metadata["mistake_agent_unknown"] is True
    assert "Algorithm-Generated/9.json: mistake_agent 'Ghost_Expert' is not an agent" in caplog.text
    assert trajectory_to_sample(t).metadata["mistake_agent_unknown"] is True
    with pytest.raises(RecordError, match=r"9\.json: mistake_agent 'Ghost_Expert' is not an agent"):
        who_and_when_record(record, subset="algorithm_generated", file_id="9", strict=True)
    # a team member who never speaks (system_prompt key) is an agent of the trajectory
    quiet = who_and_when_record(
        dict(AG, mistake_agent="Silent_Expert"),
        subset="algorithm_generated",
        file_id="3",
        strict=True,
    )
    assert "mistake_agent_unknown" not in quiet.metadata
    # HC names the agent without the role suffix of its turns
    hc = who_and_when_record(HC, subset="hand_crafted", file_id="1", strict=True)
    assert hc.mistake_agent == "Orchestrator"
    row = {
        "trajectory_id": "t",
        "history": HC["history"],
        "mistake_agent": "Nobody",
        "mistake_step": 1,
    }
    with pytest.raises(RecordError, match="CORRECT-Error row 0 .*'Nobody' is not an agent"):
        correct_error_record(row, index=0, strict=True)


def test_the_task_lists_flagged_records_and_refuses_them_when_strict(tmp_path, monkeypatch):
    from tasks.correct.task import correct

    for sub, rec in (("Algorithm-Generated", AG), ("Hand-Crafted", HC)):
        (tmp_path / "who_and_when" / sub).mkdir(parents=True)
        (tmp_path / "who_and_when" / sub / "1.json").write_text(json.dumps(rec))
    (tmp_path / "who_and_when" / "Algorithm-Generated" / "2.json").write_text(
        json.dumps(dict(AG, mistake_agent="Ghost_Expert"))
    )
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    t = correct(method="random", subset="both", split="all")
    assert t.metadata["data_warnings"] == {
        "mistake_agent_not_in_trajectory": ["algorithm_generated/2"]
    }
    with pytest.raises(RecordError, match="Ghost_Expert"):
        correct(method="random", subset="both", split="all", strict_data=True)
