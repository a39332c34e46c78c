"""Parsing verifier replies: format rule, answer, boxes, points, actions, malformed input."""

from __future__ import annotations

import pytest

from methods.omniverifier import EditAction, format_verifier_output, parse_verifier_output


def test_exact_format_parses_everything() -> None:
    reply = (
        '<think>the circle is blue</think>\n{"answer": false, "boxes": [[10, 20, 50, 60]], '
        '"action": {"type": "modify", "text": "make the circle red"}, "explanation": "colour"}'
    )
    out = parse_verifier_output(reply, image_size=(100, 100))
    assert out.format_ok and out.answer is False and out.how == "json"
    assert out.boxes == ((10.0, 20.0, 50.0, 60.0),)
    assert out.action == EditAction("Modify", "make the circle red")
    assert out.think == "the circle is blue" and out.explanation == "colour"
    assert out.failure is None


@pytest.mark.parametrize(
    "reply",
    [
        '{"answer": true}',  # no think block
        '<think>x</think>```json\n{"answer": true}\n```',  # fences
        '<think>x</think>{"answer": true} and that is all',  # prose after the JSON
        '<think>x</think>{"answer": "true"}',  # a string, not a JSON boolean
        '<think>x</think><think>y</think>{"answer": true}',  # two think blocks
        "<think>x</think>",  # nothing after the think block
    ],
)
def test_format_reward_is_strict(reply: str) -> None:
    assert not parse_verifier_output(reply).format_ok


def test_answer_is_still_read_when_the_format_fails() -> None:
    assert parse_verifier_output('```json\n{"answer": false}\n```').answer is False
    out = parse_verifier_output('<think>x</think>{"answer": "TRUE"}')
    assert out.answer is True and out.how == "json-string"


def test_regex_fallback_of_the_release_on_broken_json() -> None:
    out = parse_verifier_output('<think>x</think>{"answer": false, "boxes": [[1, 2, 3')
    assert out.answer is False and out.how == "regex" and not out.format_ok and out.boxes == ()


@pytest.mark.parametrize(
    "reply", ["", "I think it matches.", "<think>only thinking", "{'answer': True}", "[1, 2]"]
)
def test_malformed_reply_is_a_failure_not_an_exception(reply: str) -> None:
    out = parse_verifier_output(reply)
    assert out.answer is None and out.failure and not out.format_ok


def test_non_string_reply() -> None:
    out = parse_verifier_output(None)  # type: ignore[arg-type]
    assert out.answer is None and "NoneType" in str(out.failure)


def test_box_rules() -> None:
    reply = (
        '<think></think>{"answer": false, "boxes": [[10, 10, 30, 30], [90, 90, 130, 120], '
        '[200, 200, 300, 300], [5, 5, 5, 9], "abcd", [1, 2, 3]]}'
    )
    out = parse_verifier_output(reply, image_size=(100, 100))
    # crossing the edge: clipped; wholly outside, degenerate, not four numbers: dropped
    assert out.boxes == ((10.0, 10.0, 30.0, 30.0), (90.0, 90.0, 100.0, 100.0))
    problems = " | ".join(out.problems)
    assert "clipped" in problems and "outside" in problems and "degenerate" in problems
    assert "string" in problems and "got 3" in problems
    assert out.format_ok  # box problems do not touch the format reward


def test_single_box_spellings_and_scaled_formats() -> None:
    one = parse_verifier_output('<think></think>{"answer": false, "box": [0, 0, 10, 10]}')
    flat = parse_verifier_output('<think></think>{"answer": false, "boxes": [0, 0, 10, 10]}')
    assert one.boxes == flat.boxes == ((0.0, 0.0, 10.0, 10.0),)
    scaled = parse_verifier_output(
        '<think></think>{"answer": false, "boxes": [[0, 500, 250, 1000]]}',
        image_size=(200, 100),
        box_format="0-1000",
    )
    assert scaled.boxes == ((0.0, 50.0, 50.0, 100.0),)
    no_size = parse_verifier_output(
        '<think></think>{"answer": false, "boxes": [[0, 0, 1, 1]]}', box_format="0-1"
    )
    assert no_size.boxes == () and "image size" in no_size.problems[0]


def test_points_and_actions() -> None:
    out = parse_verifier_output(
        '<think></think>{"answer": false, "point": [3, 4], "action": "Add: a red circle"}'
    )
    assert out.points == ((3.0, 4.0),) and out.action == EditAction("Add", "a red circle")
    bad = parse_verifier_output(
        '<think></think>{"answer": false, "points": [[1], "x"], "action": {"type": "Paint"}}'
    )
    assert bad.points == () and bad.action is None
    assert any("Paint" in p for p in bad.problems) and any("point 0" in p for p in bad.problems)


def test_format_verifier_output_round_trips() -> None:
    text = format_verifier_output(
        False,
        think="t",
        boxes=[(1, 2, 3, 4)],
        point=(2, 3),
        action=EditAction("Delete", "delete it"),
    )
    out = parse_verifier_output(text, image_size=(10, 10))
    assert out.format_ok and out.answer is False and out.boxes == ((1.0, 2.0, 3.0, 4.0),)
    assert out.points == ((2.0, 3.0),) and out.action == EditAction("Delete", "delete it")
    assert parse_verifier_output(format_verifier_output(True)).answer is True
