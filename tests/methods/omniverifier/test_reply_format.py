"""The verifier's reply formats declared beside the parser: every reply produced under one parses
with ``format_ok`` and a verdict, within the token budget it was sized for."""

from __future__ import annotations

import re

import pytest

from methods.omniverifier import YES_NO_FORMAT, parse_verifier_output, verifier_reply_format
from tests.methods.correct.grammar_sampling import constrained_replies


@pytest.mark.parametrize(
    ("rationale", "box_format", "budget"),
    [("bbox", "pixels", 160), ("point", "0-1000", 192), ("bbox", "0-1", 256)],
)
def test_replies_under_the_format_always_parse_within_budget(
    embedded_dir, rationale, box_format, budget
) -> None:
    fmt = verifier_reply_format(rationale, box_format, budget)
    answers = set()
    for reply, used in constrained_replies(fmt, str(embedded_dir), n=4, seed=2, max_tokens=budget):
        assert used <= budget, (used, reply)
        assert re.fullmatch(fmt.regex, reply), reply
        out = parse_verifier_output(reply, image_size=(512, 512), box_format=box_format)
        assert out.format_ok and out.answer is not None, (out.problems, reply)
        answers.add(out.answer)
        if out.answer is False:
            assert out.action is not None, (out.problems, reply)
            # the numbers are always read; a box off the image or degenerate is skill, not format
            assert all(p.startswith(("box ", "point ")) for p in out.problems), out.problems
            assert out.boxes or out.points or out.problems, reply
    for reply, _ in constrained_replies(YES_NO_FORMAT, str(embedded_dir), n=2):
        assert reply in ("yes", "no")


def test_reply_format_sizes_the_free_text_and_refuses_a_budget_too_small() -> None:
    small, large = verifier_reply_format(max_tokens=128), verifier_reply_format(max_tokens=512)
    assert small.regex is not None and large.regex is not None
    # 128 tokens - 114 fixed characters - 2 = 12 free: 10 for the think block, 4 for the text
    # (each character is at most one token, so a reply in the format ends within the budget).
    assert re.findall(r"\{0,(\d+)\}\"", small.regex) == ["4"]
    assert "<think>[ -;=-~]{0,10}</think>" in small.regex
    assert "{0,266}</think>" in large.regex
    with pytest.raises(ValueError, match="max_tokens=100 leaves no room"):
        verifier_reply_format(max_tokens=100)
