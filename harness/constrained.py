"""Answer formats: what a task's reply must look like, declared once next to its parser.

A task states its format as an `AnswerFormat` (a JSON schema, a regex or a list of choices). The
format is checked when the task module loads: a malformed schema or a regex the decoding engine
cannot compile is an `AnswerFormatError` there, never a server 400 in the middle of a run.

With `constrained=on` (a harness option, default off so paper-faithful runs stay unchanged;
`make run` turns it on for the embedded model) `fmt.generate_args()` returns the decoding
constraint, and the back-end enforces it:

- `vllm/` models: vLLM's structured outputs (`extra_body={"structured_outputs": ...}`, xgrammar);
  the servers the harness starts allow no free whitespace in JSON;
- the in-process back-end (`default-hf`, `harness/<path>`, `default-vlm`): the same xgrammar
  grammar as a logits processor (`harness.models.grammar`).

With `constrained=off` it returns `{}` and the model writes freely. Either way the parser reads
the reply, and `fmt.reply_status(output)` tells a scorer whether it is `"ok"`, `"truncated"` (cut
by max_tokens: count it apart from format failures) or `"format_failure"`.

    ANSWER = AnswerFormat(json_schema={"type": "object", "properties": {...}, "required": [...]})

    state = await generate(state, **ANSWER.generate_args())
    status = ANSWER.reply_status(state.output)

Forced tool calls need no format: ask inspect for `tool_choice="any"` (or `ToolFunction(name)`)
and both back-ends constrain the reply to a call of a listed tool with its parameter schema; the
in-process back-end and the harness's vLLM server describe the tools in the prompt, since
SmolLM2's chat template drops them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from harness.models.grammar import (
    MAX_PATTERN_REPEAT,
    Constraint,
    ConstraintError,
    check_constraint,
)
from methods.common import AnswerFormat as MethodFormat

#: Set by `harness eval constrained=on|off` for the run (read when a task builds its request).
CONSTRAINED_ENV = "HARNESS_CONSTRAINED"
ReplyStatus = Literal["ok", "truncated", "format_failure"]
#: The longest `{0,n}` a bounded string's regex or schema `pattern` may use: xgrammar 0.2.8 (the
#: engine of both back-ends) fails to compile a larger repetition for a real tokenizer.
MAX_BOUNDED_STRING = MAX_PATTERN_REPEAT


class AnswerFormatError(ValueError):
    """An answer format is malformed (schema, regex or choices); raised at task load."""


def constrained_enabled() -> bool:
    """Whether this run decodes under answer-format constraints (`constrained=on`)."""
    return os.environ.get(CONSTRAINED_ENV, "off").strip().lower() in ("on", "true", "1")


@dataclass(frozen=True)
class AnswerFormat:
    """Exactly one of `json_schema`, `regex`, `choices`; validated on construction."""

    json_schema: Mapping[str, Any] | None = None
    regex: str | None = None
    choices: Sequence[str] | None = None
    name: str = "answer"
    _pattern: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        given = [k for k in ("json_schema", "regex", "choices") if getattr(self, k) is not None]
        if len(given) != 1:
            raise AnswerFormatError(
                f"AnswerFormat '{self.name}' needs exactly one of json_schema, regex, choices "
                f"(got {', '.join(given) or 'none'})"
            )
        if self.json_schema is not None:
            self._check_schema()
        if self.regex is not None:
            try:
                object.__setattr__(self, "_pattern", re.compile(self.regex))
            except re.error as exc:
                raise AnswerFormatError(
                    f"AnswerFormat '{self.name}': invalid regex {self.regex!r}: {exc}"
                ) from exc
        if self.choices is not None:
            choices = self.choices
            if (
                isinstance(choices, str)
                or not choices
                or not all(isinstance(c, str) and c for c in choices)
            ):
                raise AnswerFormatError(
                    f"AnswerFormat '{self.name}': choices must be a non-empty list of non-empty "
                    f"strings, got {choices!r}"
                )
            if len(set(choices)) != len(choices):
                raise AnswerFormatError(f"AnswerFormat '{self.name}': duplicate choices")
            object.__setattr__(self, "choices", tuple(choices))
        try:
            check_constraint(self.constraint)
        except ConstraintError as exc:
            raise AnswerFormatError(f"AnswerFormat '{self.name}': {exc}") from exc

    def _check_schema(self) -> None:
        import jsonschema

        if not isinstance(self.json_schema, Mapping):
            raise AnswerFormatError(
                f"AnswerFormat '{self.name}': json_schema must be a JSON object (dict), got "
                f"{type(self.json_schema).__name__}"
            )
        schema = json.loads(json.dumps(self.json_schema))  # plain JSON, or a clear error
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "(root)"
            raise AnswerFormatError(
                f"AnswerFormat '{self.name}': invalid JSON schema at {where}: {exc.message}"
            ) from exc
        object.__setattr__(self, "json_schema", schema)

    # ------------------------------------------------------------------ decoding
    @property
    def kind(self) -> Literal["json", "regex", "choice"]:
        if self.json_schema is not None:
            return "json"
        return "regex" if self.regex is not None else "choice"

    @property
    def constraint(self) -> Constraint:
        spec = {
            "json": self.json_schema,
            "regex": self.regex,
            "choice": list(self.choices or ()),
        }[self.kind]
        return Constraint(self.kind, dict(spec) if isinstance(spec, Mapping) else spec)

    def structured_outputs(self) -> dict[str, Any]:
        """vLLM's `structured_outputs` request field for this format."""
        return {self.kind: self.constraint.spec}

    def generate_args(self, enabled: bool | None = None) -> dict[str, Any]:
        """Keyword arguments for inspect's `generate(...)`: the constraint when enabled, else {}.

        `enabled` None follows the run's `constrained=` option.
        """
        if not (constrained_enabled() if enabled is None else enabled):
            return {}
        return {"extra_body": {"structured_outputs": self.structured_outputs()}}

    # ------------------------------------------------------------------ checking replies
    def matches(self, text: str) -> bool:
        """Whether `text` (stripped) satisfies the format."""
        text = text.strip()
        if self.kind == "choice":
            return text in (self.choices or ())
        if self.kind == "regex":
            return self._pattern.fullmatch(text) is not None
        import jsonschema

        try:
            jsonschema.validate(json.loads(text), self.json_schema)
        except (ValueError, jsonschema.ValidationError):
            return False
        return True

    def reply_status(self, output: Any) -> ReplyStatus:
        """`ok`, `truncated` (cut by max_tokens before the format closed) or `format_failure`."""
        if self.matches(output.completion):
            return "ok"
        if getattr(output, "stop_reason", None) == "max_tokens":
            return "truncated"
        return "format_failure"


#: What the functions below accept: this module's format, or a method's declaration
#: (`methods.common.AnswerFormat`, which keeps methods free of the harness).
AnyFormat = AnswerFormat | MethodFormat


def decoding_format(fmt: AnyFormat) -> AnswerFormat:
    """`fmt` as the format decoding enforces, checked by the decoding engine's rules (a method's
    declaration once per distinct format): a malformed one is an `AnswerFormatError` naming it."""
    return fmt if isinstance(fmt, AnswerFormat) else _from_method(fmt)


@lru_cache(maxsize=1024)
def _from_method(fmt: MethodFormat) -> AnswerFormat:
    return AnswerFormat(
        json_schema=fmt.json_schema, regex=fmt.regex, choices=fmt.choice, name=fmt.name
    )


def generate_args(fmt: AnyFormat | None, enabled: bool | None = None) -> dict[str, Any]:
    """`AnswerFormat.generate_args` of any accepted format; `{}` for None (no format)."""
    return {} if fmt is None else decoding_format(fmt).generate_args(enabled)


def reply_status(fmt: AnyFormat, output: Any) -> ReplyStatus:
    """`AnswerFormat.reply_status` of any accepted format."""
    return decoding_format(fmt).reply_status(output)


def check_formats(formats: Iterable[AnyFormat]) -> int:
    """Check every format a run decodes under, at task load (not as a server 400 mid-run);
    returns how many distinct formats there were."""
    seen: list[AnyFormat] = []
    for fmt in formats:
        if fmt not in seen:
            decoding_format(fmt)
            seen.append(fmt)
    return len(seen)


def constrained_metadata() -> dict[str, Any]:
    """What the eval log records about the run's decoding (a deviation when on)."""
    on = constrained_enabled()
    return {
        "constrained": "on" if on else "off",
        "deviation": (
            "constrained decoding: answer formats enforced by grammar at decoding time "
            "(JSON schema / regex / choices, forced tool calls); the papers' models wrote "
            "freely"
        )
        if on
        else None,
    }
