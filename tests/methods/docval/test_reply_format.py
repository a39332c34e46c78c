"""The reply formats declared beside the parser: every reply produced under one parses (answer
and four coordinates read), and ends within the token budget it was sized for.

Replies are drawn without a model: xgrammar (the engine vLLM's structured outputs and the
in-process back-end use) masks the embedded tokenizer's vocabulary at each step and a seeded
random choice among the allowed tokens stands in for the model — the worst case a constrained
model can write."""

from __future__ import annotations

import re

import pytest

from methods.docval import parse_output, reply_format
from tests.methods.correct.grammar_sampling import constrained_replies

SIZE = (800, 1000)


@pytest.mark.parametrize(
    ("style", "box_format", "budget"),
    [("json", "pixels", 96), ("json", "0-1", 160), ("docval_cot", "0-1000", 256)],
)
def test_replies_under_the_format_always_parse_within_budget(
    embedded_dir, style, box_format, budget
) -> None:
    fmt = reply_format(style, box_format, budget)
    # one token of slack past the budget, so that an over-long reply is seen, not cut short
    replies = constrained_replies(fmt, str(embedded_dir), n=2, seed=1, max_tokens=budget + 1)
    for reply, used in replies:
        assert used <= budget, (used, reply)
        assert re.fullmatch(fmt.regex, reply), reply
        pred = parse_output(reply, image_size=SIZE, box_format=box_format)
        assert pred.answer, reply
        # the four numbers are always read; a degenerate or off-page box is skill, not format
        assert pred.failure is None or pred.failure.startswith("bbox: "), (pred.failure, reply)
        if style == "docval_cot":
            assert len(pred.reasoning) == 7, reply


def test_reply_format_sizes_fields_to_the_budget() -> None:
    small, large = reply_format("json", "pixels", 96), reply_format("json", "pixels", 512)
    caps = [int(c) for c in re.findall(r"\{0,(\d+)\}", small.regex)]
    # fixed text (53 characters with four 4-digit coordinates) + end token + fields <= budget
    assert sum(caps) + 1 + 53 + 1 <= 96
    assert max(int(c) for c in re.findall(r"\{0,(\d+)\}", large.regex)) > max(caps)
    # the answer never exceeds its cap however large the budget
    assert '"answer": "[!#-\\[\\]-~][ !#-\\[\\]-~]{0,99}"' in large.regex
    with pytest.raises(ValueError, match="max_new_tokens=40"):
        reply_format("json", "pixels", 40)


def test_the_json_format_matches_the_parser_example() -> None:
    fmt = reply_format("json", "pixels", 256)
    reply = '{"reasoning": "the total line", "answer": "$12.50", "bbox": [10, 20, 110, 40]}'
    assert re.fullmatch(fmt.regex, reply)
    pred = parse_output(reply, image_size=SIZE)
    assert (pred.answer, pred.bbox, pred.failure) == ("$12.50", (10.0, 20.0, 110.0, 40.0), None)
    # a quote or a newline inside a field is outside the format (they would break the JSON)
    assert not re.fullmatch(fmt.regex, reply.replace("the total", 'the "total"'))
    assert not re.fullmatch(fmt.regex, reply.replace('"answer": "$12.50"', '"answer": ""'))
