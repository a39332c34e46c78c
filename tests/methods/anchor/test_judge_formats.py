"""The judges' answer formats: every reply produced under one parses with its judge's parser,
within the reply budget the format was sized for."""

from __future__ import annotations

import pytest

from methods.anchor._judges import (
    JUDGE_FIXED_CHARS,
    judge_format,
    parse_compliance,
    parse_harm,
    parse_over_compliance,
    parse_refusal,
)
from tests.methods.correct.grammar_sampling import constrained_replies

PARSERS = {
    "refusal": (parse_refusal, False),
    "compliance": (parse_compliance, "none"),
    "over_compliance": (parse_over_compliance, False),
    "harm": (parse_harm, 0),
}


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_judge_replies_always_parse(embedded_dir, name):
    parse, det = PARSERS[name]
    reason_chars = 16
    for reply, used in constrained_replies(
        judge_format(name, reason_chars), str(embedded_dir), n=2
    ):
        verdict = parse(reply, det)
        assert verdict.ok, (reply, verdict.error)
        assert used <= JUDGE_FIXED_CHARS + reason_chars, (used, reply)


def test_judge_format_is_strict_json():
    import json
    import re

    schema = judge_format("compliance", 10).json_schema
    assert list(schema["properties"]) == ["complied", "reason"]  # the verdict comes first
    assert schema["additionalProperties"] is False
    pattern = schema["properties"]["reason"]["pattern"]
    assert re.fullmatch(pattern, "[a] b-c!") and not re.fullmatch(pattern, 'a "quote"')
    assert not re.fullmatch(pattern, "x" * 11)
    json.dumps(schema)
