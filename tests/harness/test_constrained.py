"""AnswerFormat: validated at declaration, the request fields it produces, reply classification."""

from __future__ import annotations

import pytest
from inspect_ai.model import ModelOutput

from harness.constrained import (
    CONSTRAINED_ENV,
    AnswerFormat,
    AnswerFormatError,
    constrained_enabled,
    constrained_metadata,
)

SCHEMA = {
    "type": "object",
    "properties": {"agent": {"type": "string"}, "step": {"type": "integer", "minimum": 0}},
    "required": ["agent", "step"],
}


def test_malformed_formats_fail_at_declaration():
    with pytest.raises(AnswerFormatError, match="exactly one of"):
        AnswerFormat()
    with pytest.raises(AnswerFormatError, match="exactly one of"):
        AnswerFormat(regex="a", choices=["a"])
    with pytest.raises(AnswerFormatError, match="invalid JSON schema at properties/step"):
        AnswerFormat(json_schema={"type": "object", "properties": {"step": {"type": "integr"}}})
    with pytest.raises(AnswerFormatError, match="must be a JSON object"):
        AnswerFormat(json_schema=["not", "a", "schema"])  # type: ignore[arg-type]
    with pytest.raises(AnswerFormatError, match="invalid regex"):
        AnswerFormat(regex="Step (\\d+")
    # Valid for Python's re, but not for the decoding engine (lookahead): caught here too.
    with pytest.raises(AnswerFormatError, match="regex cannot be compiled"):
        AnswerFormat(regex="(?=a)a+")
    with pytest.raises(AnswerFormatError, match="non-empty list"):
        AnswerFormat(choices=[])
    with pytest.raises(AnswerFormatError, match="non-empty list"):
        AnswerFormat(choices="yes")  # type: ignore[arg-type]
    with pytest.raises(AnswerFormatError, match="duplicate"):
        AnswerFormat(choices=["yes", "yes"])


def test_generate_args_follow_the_run_option(monkeypatch):
    fmt = AnswerFormat(json_schema=SCHEMA, name="verdict")
    monkeypatch.delenv(CONSTRAINED_ENV, raising=False)
    assert not constrained_enabled() and fmt.generate_args() == {}
    assert constrained_metadata() == {"constrained": "off", "deviation": None}
    monkeypatch.setenv(CONSTRAINED_ENV, "on")
    assert fmt.generate_args() == {"extra_body": {"structured_outputs": {"json": SCHEMA}}}
    assert "constrained decoding" in constrained_metadata()["deviation"]
    assert fmt.generate_args(enabled=False) == {}
    assert AnswerFormat(regex="[0-9]+").generate_args(enabled=True) == {
        "extra_body": {"structured_outputs": {"regex": "[0-9]+"}}
    }
    assert AnswerFormat(choices=["yes", "no"]).structured_outputs() == {"choice": ["yes", "no"]}


def _output(text: str, stop: str = "stop") -> ModelOutput:
    output = ModelOutput.from_content(model="m", content=text)
    output.choices[0].stop_reason = stop  # type: ignore[assignment]
    return output


def test_reply_status_separates_truncation_from_format_failure():
    fmt = AnswerFormat(json_schema=SCHEMA)
    assert fmt.reply_status(_output('{"agent":"Coder","step":3}')) == "ok"
    assert fmt.reply_status(_output('{"agent":"Coder","step":-1}')) == "format_failure"
    assert fmt.reply_status(_output('{"agent":"Co', "max_tokens")) == "truncated"
    assert fmt.reply_status(_output("Agent Name: Coder")) == "format_failure"
    regex = AnswerFormat(regex=r"Step \d+")
    assert regex.matches(" Step 12\n") and not regex.matches("Step 12 and more")
    choice = AnswerFormat(choices=("yes", "no"))
    assert choice.matches("no") and not choice.matches("maybe")


# ------------------------------------------------------------------ the methods' declaration
def test_a_methods_answer_format_is_accepted_directly():
    from harness.constrained import check_formats, decoding_format, generate_args, reply_status
    from methods.common import AnswerFormat as MethodFormat

    regex = MethodFormat("verdict", regex="(yes|no)")
    choice = MethodFormat("pick", choice=("A", "B"))
    schema = MethodFormat(
        "obj", json_schema={"type": "object", "properties": {"a": {"type": "integer"}}}
    )
    assert decoding_format(regex) == AnswerFormat(regex="(yes|no)", name="verdict")
    assert decoding_format(regex) is decoding_format(MethodFormat("verdict", regex="(yes|no)"))
    assert generate_args(choice, enabled=True) == {
        "extra_body": {"structured_outputs": {"choice": ["A", "B"]}}
    }
    assert (
        generate_args(schema, enabled=True)["extra_body"]["structured_outputs"]["json"]["type"]
        == "object"
    )
    assert generate_args(regex, enabled=False) == {} and generate_args(None, enabled=True) == {}
    out = ModelOutput.from_content("m", "maybe")
    assert reply_status(regex, out) == "format_failure"
    assert check_formats([regex, MethodFormat("verdict", regex="(yes|no)"), choice]) == 2


def test_a_malformed_methods_format_is_an_error_naming_it():
    from harness.constrained import decoding_format
    from methods.common import AnswerFormat as MethodFormat

    with pytest.raises(AnswerFormatError, match="'lookahead'.*regex cannot be compiled"):
        decoding_format(MethodFormat("lookahead", regex="(?=a)a"))
