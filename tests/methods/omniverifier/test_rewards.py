"""Rewards case by case: IoU exactly 0.6, empty box, several boxes, outside the image, malformed."""

from __future__ import annotations

import pytest

from methods.omniverifier import (
    StreamReward,
    box_iou,
    decoupled_rewards,
    joint_reward,
    meta_reward,
    parse_verifier_output,
    sample_rewards,
)

GOLD = [(0.0, 0.0, 10.0, 10.0)]


def _reply(answer: bool, boxes=None, point=None, think: bool = True) -> str:
    import json

    obj: dict = {"answer": answer}
    if boxes is not None:
        obj["boxes"] = boxes
    if point is not None:
        obj["point"] = point
    return ("<think>t</think>" if think else "") + json.dumps(obj)


def _out(*args, **kwargs):
    return parse_verifier_output(_reply(*args, **kwargs), image_size=(100, 100))


def test_iou_exactly_at_the_gate_passes_and_just_below_fails() -> None:
    at = _out(False, [[0, 0, 6, 10]])  # 60 / 100
    assert box_iou(at.boxes, GOLD) == pytest.approx(0.6)
    assert meta_reward(at, GOLD) == 1.0
    below = _out(False, [[0, 0, 5.99, 10]])
    assert meta_reward(below, GOLD) == 0.0
    # A 3:5 overlap whose float IoU lands a hair under 0.6 still meets the gate.
    gold = [(0.0, 0.0, 0.5, 1.0)]
    assert meta_reward(parse_verifier_output(_reply(False, [[0, 0, 0.3, 1.0]])), gold) == 1.0


def test_empty_and_missing_boxes_give_zero() -> None:
    assert meta_reward(_out(False, []), GOLD) == 0.0
    assert meta_reward(_out(False), GOLD) == 0.0
    assert meta_reward(_out(False, [[0, 0, 10, 10]]), []) == 0.0
    assert box_iou([], GOLD) == 0.0


def test_several_boxes_enclosing_rule_and_best_match() -> None:
    gold = [(0.0, 0.0, 10.0, 10.0), (20.0, 0.0, 30.0, 10.0)]  # enclosing: (0, 0, 30, 10)
    pred = _out(False, [[0, 0, 10, 10], [20, 0, 30, 10]])
    assert box_iou(pred.boxes, gold, "enclosing") == pytest.approx(1.0)
    one = _out(False, [[0, 0, 10, 10]])
    assert box_iou(one.boxes, gold, "enclosing") == pytest.approx(100 / 300)
    assert box_iou(one.boxes, gold, "best_match") == pytest.approx(1.0)
    assert meta_reward(one, gold) == 0.0 and meta_reward(one, gold, multi_box="best_match") == 1.0
    with pytest.raises(ValueError, match="multi_box"):
        box_iou(one.boxes, gold, "union")  # type: ignore[arg-type]


def test_box_outside_the_image_is_dropped_and_crossing_box_clipped() -> None:
    outside = _out(False, [[150, 150, 200, 200]])
    assert outside.boxes == () and meta_reward(outside, GOLD) == 0.0
    crossing = _out(False, [[-5, -5, 10, 10]])  # clipped to (0, 0, 10, 10)
    assert meta_reward(crossing, GOLD) == 1.0


def test_malformed_json_scores_zero_everywhere() -> None:
    out = parse_verifier_output("<think>t</think>{answer: false, boxes: [[0,0,10,10]]}")
    r = sample_rewards(out, False, GOLD)
    assert (r.r_format, r.r_acc, r.r_meta, r.joint) == (0.0, 0.0, 0.0, 0.0)
    assert [s.reward for s in r.decoupled] == [0.0, 0.0]


def test_point_rationale() -> None:
    assert meta_reward(_out(False, point=[10, 10]), GOLD, rationale="point") == 1.0  # edge counts
    assert meta_reward(_out(False, point=[10.5, 5]), GOLD, rationale="point") == 0.0
    assert meta_reward(_out(False, [[0, 0, 10, 10]]), GOLD, rationale="point") == 0.0  # no point
    gold = [(0.0, 0.0, 10.0, 10.0), (20.0, 0.0, 30.0, 10.0)]
    assert meta_reward(_out(False, point=[25, 5]), gold, rationale="point") == 1.0


@pytest.mark.parametrize(
    ("r_f", "r_acc", "r_meta", "label", "joint", "streams"),
    [
        (1, 1, 0, True, 2.0, [("judgment", 2.0)]),
        (1, 0, 0, True, 1.0, [("judgment", 1.0)]),
        (1, 1, 1, False, 2.0, [("judgment", 2.0), ("grounding", 2.0)]),
        (1, 1, 0, False, 1.0, [("judgment", 2.0), ("grounding", 1.0)]),
        # wrong judgment: the joint reward drops the meta reward, the decoupled stream keeps it
        (1, 0, 1, False, 1.0, [("judgment", 1.0), ("grounding", 2.0)]),
        (0, 0, 1, False, 0.0, [("judgment", 0.0), ("grounding", 1.0)]),
    ],
)
def test_joint_and_decoupled_composition(r_f, r_acc, r_meta, label, joint, streams) -> None:
    assert joint_reward(r_f, r_acc, r_meta, label) == joint
    assert decoupled_rewards(r_f, r_acc, r_meta, label) == [StreamReward(s, v) for s, v in streams]


def test_decoupled_batch_is_one_and_a_half_times_the_joint_batch() -> None:
    outs = [(_out(True), True), (_out(False, [[0, 0, 10, 10]]), False)] * 4
    rewards = [sample_rewards(o, y, GOLD if not y else []) for o, y in outs]
    assert sum(len(r.decoupled) for r in rewards) == 1.5 * len(rewards)


def test_sample_rewards_true_sample_has_no_meta() -> None:
    r = sample_rewards(_out(True), True)
    assert (r.r_format, r.r_acc, r.r_meta, r.iou, r.joint) == (1.0, 1.0, 0.0, 0.0, 2.0)
    r = sample_rewards(_out(True, think=False), True)
    assert r.r_format == 0.0 and r.joint == 1.0
