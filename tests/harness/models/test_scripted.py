import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

from harness.models.scripted import ScriptError


def _task(n=3):
    return Task(
        dataset=[Sample(id=i, input=f"q{i}", target="yes") for i in range(n)],
        solver=[generate()],
        scorer=match(),
    )


def test_replies_restart_per_sample_and_usage_is_set(tmp_path):
    model = get_model("scripted/a", replies=["yes", "no"], memoize=False)
    [log] = eval(_task(3), model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    assert [s.output.completion for s in log.samples] == ["yes", "yes", "yes"]
    assert log.stats.model_usage["scripted/a"].total_tokens > 0


def test_exhausted_script_fails_the_sample_with_reason(tmp_path):
    with pytest.raises(ScriptError, match="give replies"):
        get_model("scripted/b", memoize=False)
    model = get_model("scripted/c", replies=["yes"], memoize=False)
    task = Task(
        dataset=[Sample(input="x", target="yes")], solver=[generate(), generate()], scorer=match()
    )
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "error"
    assert "script exhausted after 1 replies" in log.error.message


def test_tool_calls_and_responder(tmp_path):
    model = get_model(
        "scripted/d",
        replies=[
            {"content": "calling", "tool_calls": [{"function": "bash", "arguments": {"cmd": "ls"}}]}
        ],
        memoize=False,
    )
    import asyncio

    out = asyncio.run(model.generate("hi"))
    assert out.message.tool_calls[0].function == "bash"
    assert out.message.tool_calls[0].arguments == {"cmd": "ls"}
    echo = get_model("scripted/e", responder=lambda msgs: msgs[-1].text.upper(), memoize=False)
    assert asyncio.run(echo.generate("abc")).completion == "ABC"


def test_bad_reply_and_unknown_args():
    import asyncio

    with pytest.raises(ScriptError, match="unknown model args"):
        get_model("scripted/f", reply="x", temperature_typo=1, memoize=False)
    bad = get_model("scripted/g", replies=[{"text": "x"}], memoize=False)
    with pytest.raises(ScriptError, match="unknown keys"):
        asyncio.run(bad.generate("hi"))


def test_script_file(tmp_path):
    import asyncio

    script = tmp_path / "s.yaml"
    script.write_text("replies: [one]\ndefault: two\n")
    model = get_model("scripted/h", script=str(script), memoize=False)
    assert asyncio.run(model.generate("a")).completion == "one"
    assert asyncio.run(model.generate("a")).completion == "two"
    (tmp_path / "bad.yaml").write_text("{oops: 1}")
    with pytest.raises(ScriptError, match="must be a list of replies"):
        get_model("scripted/i", script=str(tmp_path / "bad.yaml"), memoize=False)
