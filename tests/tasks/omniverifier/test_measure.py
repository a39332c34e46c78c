"""The grounding-signal measurement: streams per threshold, and the yes/no reply format."""

from __future__ import annotations

import pytest

from tasks.omniverifier.measure import main, streams, summarise
from tasks.omniverifier.scorer import parse_yes_no

ROWS = {
    "label": [True, False, False, False, True],
    "score": [0.0, 1.0, 3.0, 2.0, 1.0],  # violations found by the verifier
    "box_hit": [0.0, 1.0, 1.0, 0.0, 0.0],
    "format": [1.0] * 5,
    "subtask": ["A", "A", "B", "B", "B"],
}


def test_streams_follow_the_threshold_and_keep_the_boxes() -> None:
    s0 = streams(ROWS, 0)
    assert s0["r_acc"] == [1.0, 1.0, 1.0, 1.0, 0.0]
    assert s0["r_meta"] == [0.0, 1.0, 1.0, 0.0, 0.0]
    s2 = streams(ROWS, 2)  # False only above 2 violations
    assert s2["r_acc"] == [1.0, 0.0, 1.0, 0.0, 1.0]
    assert s2["r_meta"] == s0["r_meta"]
    assert s2["joint"] == [2.0, 1.0, 2.0, 1.0, 2.0]
    assert s2["dec"] == [2.0, 1.0, 2.0, 2.0, 2.0, 1.0, 1.0, 2.0]
    summary = summarise(s2)
    assert summary["p_acc_false"] == pytest.approx(1 / 3)
    assert summary["localisation"] == pytest.approx(2 / 3)
    assert summary["product_var_joint"] == pytest.approx(summary["product_rhs"])
    # G_joint = (0, 1, 0): ‖E G‖² / Var = (1/9) / (2/9); G_dec = (1, 1, 0): (4/9) / (2/9)
    assert summary["snr_joint"] == pytest.approx(0.5) and summary["snr_dec"] == pytest.approx(2.0)


def test_measure_cli_runs_on_a_tiny_set(capsys) -> None:
    assert main(["--pairs", "2", "--levels", "easy", "--thresholds", "0,1"]) == 0
    out = capsys.readouterr().out
    assert "| easy, t=0 |" in out and "| easy, t=1 |" in out


@pytest.mark.parametrize(
    ("reply", "answer"),
    [("Yes.", True), ("no, the circle is blue", False), ("I think YES", True), ("maybe", None)],
)
def test_yes_no_reply(reply: str, answer) -> None:
    out = parse_yes_no(reply)
    assert out.answer is answer and not out.format_ok
