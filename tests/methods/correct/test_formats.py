"""The answer formats declared next to the parsers: every reply produced under one parses, and
ends within the reply budget it was sized for."""

from __future__ import annotations

import asyncio

import pytest

from methods.common import AnswerFormat, regex_literal
from methods.correct import (
    HALF_FORMAT,
    LocaliserConfig,
    Step,
    Trajectory,
    call_model,
    localisation_answer,
    parse_half,
    parse_localisation,
    parse_schema,
    parse_yes_no,
    schema_format,
    yes_no_format,
)

from .grammar_sampling import constrained_replies

TEAM = ("Orchestrator", "WebSurfer", "Computer_terminal", "Verification_Expert", "human")


def trajectory(n: int = 23) -> Trajectory:
    steps = tuple(Step(i, TEAM[i % len(TEAM)], TEAM[i % len(TEAM)], "c") for i in range(n))
    return Trajectory("t", "q", steps, mistake_agent="Orchestrator", mistake_step=3)


@pytest.fixture(scope="module")
def counter(embedded_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(embedded_dir))
    return lambda text: len(tok.encode(text, add_special_tokens=False))


def test_localisation_replies_always_parse(embedded_dir, counter):
    t = trajectory()
    config = LocaliserConfig(count_tokens=counter, max_new_tokens=40)
    team, fmt = localisation_answer(t, config)
    for reply, used in constrained_replies(fmt, str(embedded_dir), n=4):
        p = parse_localisation(reply, t.n_steps, team)
        assert p.valid and p.agent in TEAM and 0 <= p.step < t.n_steps, reply
        assert used <= config.max_new_tokens, (used, reply)


def test_step_verdict_and_half_replies_always_parse(embedded_dir, counter):
    config = LocaliserConfig(count_tokens=counter, max_new_tokens=32)
    fmt = yes_no_format(config.max_new_tokens - len("1. Yes.\n2. Reason: ") - 2)
    for reply, used in constrained_replies(fmt, str(embedded_dir), n=4, seed=1):
        assert parse_yes_no(reply) in (True, False), reply
        assert used <= config.max_new_tokens
    halves = {parse_half(r) for r, _ in constrained_replies(HALF_FORMAT, str(embedded_dir), n=6)}
    assert halves <= {"upper", "lower"} and None not in halves


def test_schema_replies_always_parse(embedded_dir, counter):
    fmt = schema_format(12)
    for reply, _ in constrained_replies(fmt, str(embedded_dir), n=3, seed=2):
        schema = parse_schema("s", reply)
        assert schema.parsed and schema.signatures and schema.heuristics, reply


def test_parsers_accept_exactly_what_the_formats_allow():
    t = trajectory(12)
    team, fmt = localisation_answer(t, LocaliserConfig(max_new_tokens=64))
    import re

    rx = re.compile(fmt.regex)
    assert rx.fullmatch("Agent Name: WebSurfer\nStep Number: 11\nReason for Mistake: x")
    assert not rx.fullmatch("Agent Name: WebSurfer\nStep Number: 12\nReason for Mistake: x")
    assert not rx.fullmatch("Agent Name: Nobody\nStep Number: 1\nReason for Mistake: x")
    # the gold agent is never offered by the format unless it is an agent of the trajectory
    assert (
        "Ghost"
        not in localisation_answer(
            Trajectory("g", "q", t.steps, mistake_agent="Ghost", mistake_step=1), LocaliserConfig()
        )[1].regex
    )
    assert re.fullmatch(
        schema_format(5).regex, "Error Signatures: a\nError Context: b\nDetection Heuristics: c"
    )
    assert not re.fullmatch(
        schema_format(5).regex, "Error Signatures:  \nError Context: b\nDetection Heuristics: c"
    )
    assert regex_literal("A.B (x)|y") == r"A\.B \(x\)\|y"


def test_answer_format_declaration_errors():
    with pytest.raises(ValueError, match="exactly one of regex, choice, json_schema"):
        AnswerFormat("x")
    with pytest.raises(ValueError, match="exactly one"):
        AnswerFormat("x", regex="a", choice=("a",))
    with pytest.raises(ValueError, match="non-empty strings"):
        AnswerFormat("x", choice=("a", ""))
    assert AnswerFormat("x", choice=("a",)).kind == "choice"


def test_the_format_reaches_generate_only_when_it_takes_one():
    seen = []

    def plain(messages):
        return "plain"

    async def constrained(messages, answer_format=None):
        seen.append(answer_format)
        return "constrained"

    fmt = AnswerFormat("half", choice=("upper half", "lower half"))
    assert asyncio.run(call_model(plain, [], None, fmt)) == "plain"
    assert asyncio.run(call_model(constrained, [], None, fmt)) == "constrained"
    assert asyncio.run(call_model(constrained, [])) == "constrained"
    assert seen == [fmt, None]
