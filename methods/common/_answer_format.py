"""What a model's reply must look like, declared next to the parser that reads it.

A method hands an ``AnswerFormat`` to its ``generate`` callable with each call; a caller that
decodes under constraints (vLLM's structured outputs, a grammar-constrained logits processor)
enforces it, any other caller ignores it. Keeping the declaration beside the parser means the
constraint and the parser cannot drift apart: each method's tests check that replies produced
under its format always parse.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AnswerFormat", "regex_literal", "takes_answer_format"]

_REGEX_SPECIAL = set("\\^$.|?*+()[]{}/")


@dataclass(frozen=True)
class AnswerFormat:
    """Exactly one of ``regex`` (the whole reply), ``choice`` (one of these strings) or
    ``json_schema`` (one JSON object, no free whitespace); ``name`` says what it is for."""

    name: str
    regex: str | None = None
    choice: tuple[str, ...] | None = None
    json_schema: dict[str, Any] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        given = [k for k in ("regex", "choice", "json_schema") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"answer format {self.name!r}: give exactly one of regex, choice, json_schema "
                f"(got {given or 'none'})"
            )
        if self.choice is not None and (
            not self.choice or not all(isinstance(c, str) and c for c in self.choice)
        ):
            raise ValueError(f"answer format {self.name!r}: choice must be non-empty strings")

    @property
    def kind(self) -> str:
        return "regex" if self.regex is not None else "choice" if self.choice else "json_schema"


def regex_literal(text: str) -> str:
    """``text`` as a regex matching itself (escapes only what regex engines treat specially, so
    grammar compilers that reject escaped spaces or letters accept it)."""
    return "".join(f"\\{c}" if c in _REGEX_SPECIAL else c for c in text)


def takes_answer_format(generate: Callable[..., Any]) -> bool:
    """Whether ``generate`` takes the keyword ``answer_format`` (a ``generate`` that does not is
    called without it: unconstrained)."""
    try:
        params = inspect.signature(generate).parameters.values()
    except (TypeError, ValueError):  # builtins and C callables: no keyword to pass
        return False
    return any(p.name == "answer_format" or p.kind is p.VAR_KEYWORD for p in params)
