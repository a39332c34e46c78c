"""The harness's vLLM tool parser: hermes, with forced calls under the in-process grammar.

Loaded by the vLLM servers the harness starts (`--tool-parser-plugin <this file>
--tool-call-parser harness_hermes`); imported nowhere else (it imports vLLM).

Why: for `tool_choice="required"` or a named function, vLLM 0.32's hermes parser constrains a
call with a structural tag whose arguments are any JSON unless the request marks the tool
`strict` (inspect does not), whose JSON allows unbounded whitespace, and which repeats calls
unless `parallel_tool_calls` is false. A small model under that grammar can write one string
until `max_tokens` cuts the call, and nothing runs. This parser sends vLLM, for forced calls,
the grammar of the in-process back-end instead (`harness.models.grammar.forced_call_constraint`,
as EBNF in the structural tag): one `<tool_call>{"name":...,"arguments":{...}}</tool_call>`,
compact JSON, arguments under the tool's schema, free string arguments bounded so that the call
and the stop token fit the request's `max_tokens`. Calls are parsed back by the hermes parser
unchanged; `tool_choice="auto"` and requests without tools are vLLM's as before.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from vllm.entrypoints.openai.chat_completion.protocol import (
    ChatCompletionNamedToolChoiceParam,
)
from vllm.tool_parsers.abstract_tool_parser import ToolParserManager
from vllm.tool_parsers.hermes_tool_parser import Hermes2ProToolParser
from vllm.tool_parsers.tool_strict_level import ToolStrictLevel
from xgrammar.structural_tag import GrammarFormat, StructuralTag


def _grammar_module() -> Any:
    """harness.models.grammar, or the file beside this one: a server in a container has this
    folder mounted but not the harness installed (grammar.py imports only the standard library
    and, when it compiles, xgrammar)."""
    try:
        from harness.models import grammar

        return grammar
    except ImportError:
        name = "harness_vllm_forced_call_grammar"
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("grammar.py"))
        if spec is None or spec.loader is None:
            raise
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the file runs
        spec.loader.exec_module(module)
        return module


_grammar = _grammar_module()
forced_call_constraint = _grammar.forced_call_constraint
constraint_ebnf = _grammar.constraint_ebnf

#: The name the harness's servers pass as `--tool-call-parser`.
PARSER_NAME = "harness_hermes"


def forced_call_functions(request: Any) -> list[tuple[str, dict[str, Any] | None]] | None:
    """(name, parameters) of the tools a request forces a call among, or None (not forced)."""
    choice = request.tool_choice
    tools = [t for t in request.tools or () if getattr(t, "type", None) == "function"]
    if not tools:
        return None
    if choice == "required":
        chosen = tools
    elif isinstance(choice, ChatCompletionNamedToolChoiceParam):
        chosen = [t for t in tools if t.function.name == choice.function.name]
        if not chosen:
            return None  # vLLM rejects the request itself, with its own message
    else:
        return None
    return [(t.function.name, t.function.parameters) for t in chosen]


def request_max_tokens(request: Any) -> int | None:
    """The request's token budget (`max_completion_tokens`, else the legacy `max_tokens`)."""
    budget = getattr(request, "max_completion_tokens", None)
    if budget is None:  # read without the deprecated field's warning
        budget = vars(request).get("max_tokens")
    return int(budget) if budget is not None else None


class BoundedHermesToolParser(Hermes2ProToolParser):
    """Hermes tool calls; a forced call decodes under the harness's bounded grammar."""

    def get_structural_tag(
        self,
        request: Any,
        *,
        reasoning: bool = False,
        strict_level: ToolStrictLevel = ToolStrictLevel.AUTO,
    ) -> Any:
        functions = forced_call_functions(request)
        if functions is None:
            return super().get_structural_tag(
                request, reasoning=reasoning, strict_level=strict_level
            )
        constraint = forced_call_constraint(functions, request_max_tokens(request))
        return StructuralTag(format=GrammarFormat(grammar=constraint_ebnf(constraint)))


ToolParserManager.register_module(PARSER_NAME, module=BoundedHermesToolParser)
