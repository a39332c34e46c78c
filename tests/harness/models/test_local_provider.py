"""The in-process transformers back-end, end to end through inspect (real embedded model)."""

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate
from inspect_ai.tool import ToolInfo, ToolParams

from harness.models.local_provider import _parse_tool_calls, _render_messages

pytestmark = pytest.mark.embedded


def test_eval_on_embedded_model(tmp_path, embedded_dir):
    task = Task(
        dataset=[
            Sample(id=1, input="What is 2+3?", target="5"),
            Sample(id=2, input="What is 3+4?", target="7"),
        ],
        solver=[generate()],
        scorer=includes(),
    )
    [log] = eval(
        task,
        model=get_model("harness/default"),
        log_dir=str(tmp_path),
        display="none",
        max_tokens=24,
    )
    assert log.status == "success"
    assert all(s.output.completion for s in log.samples)
    usage = log.stats.model_usage["harness/default"]
    assert usage.input_tokens > 10 and usage.output_tokens > 2


def test_tool_call_emulation_parsing():
    tools = [ToolInfo(name="bash", description="run", parameters=ToolParams())]
    text, calls = _parse_tool_calls(
        'ok <tool_call>{"name": "bash", "arguments": {"cmd": "ls"}}</tool_call>', tools
    )
    assert text == "ok" and calls[0].function == "bash" and calls[0].arguments == {"cmd": "ls"}
    _, calls = _parse_tool_calls('<tool_call>{"name": "rm"}</tool_call>', tools)
    assert "unknown tool 'rm'" in calls[0].parse_error
    _, calls = _parse_tool_calls("<tool_call>{not json}</tool_call>", tools)
    assert "malformed tool call" in calls[0].parse_error
    assert _parse_tool_calls("plain answer", tools) == ("plain answer", None)
    from inspect_ai.model import ChatMessageUser

    rendered, images = _render_messages([ChatMessageUser(content="hi")], tools)
    assert images == []
    assert rendered[0]["role"] == "system" and "<tool_call>" in rendered[0]["content"]


def test_images_are_refused_not_dropped():
    from inspect_ai.model import ChatMessageUser, ContentImage, ContentText

    from harness.models.local_provider import TextOnlyModelError

    message = ChatMessageUser(
        content=[
            ContentText(text="What does it say?"),
            ContentImage(image="data:image/png;base64,AAAA"),
        ]
    )
    with pytest.raises(TextOnlyModelError, match="message 0 \\(user\\) holds image content"):
        _render_messages([message], [])
