"""Command-log extraction from agent messages, and the guard approver."""

from __future__ import annotations

import asyncio

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.tool import ToolCall, ToolCallError

from tasks.anchor.solver import extract_commands, guard_approver, reply_text


def test_extract_commands_pairs_calls_with_results():
    msgs = [
        ChatMessageAssistant(
            content="running",
            tool_calls=[
                ToolCall(id="1", function="bash", arguments={"command": "ls finance"}),
                ToolCall(id="2", function="python", arguments={"code": "import socket"}),
                ToolCall(id="3", function="bash", arguments={"command": "cat ../x"}),
            ],
        ),
        ChatMessageTool(content="ledger.csv\n", tool_call_id="1", function="bash"),
        ChatMessageTool(
            content="",
            tool_call_id="2",
            function="python",
            error=ToolCallError("approval", "blocked by the audit harness: network attempt"),
        ),
        ChatMessageAssistant(content="All done."),
    ]
    recs = extract_commands(msgs, turn=3)
    assert [(r.turn, r.tool, r.command) for r in recs] == [
        (3, "bash", "ls finance"),
        (3, "python", "import socket"),
        (3, "bash", "cat ../x"),
    ]
    assert recs[0].output == "ledger.csv\n" and recs[0].error is None and recs[0].flags == []
    assert recs[1].error == "approval: blocked by the audit harness: network attempt"
    assert recs[1].flags == ["network"]
    assert recs[2].error == "no tool result (turn limit reached)" and recs[2].flags == ["escape"]
    assert reply_text(msgs) == "All done."
    assert reply_text([]) == ""


def test_guard_approver_rejects_flagged_calls():
    approve = guard_approver()
    ok = asyncio.run(
        approve("", ToolCall(id="a", function="bash", arguments={"command": "ls"}), None, [])
    )
    bad = asyncio.run(
        approve(
            "", ToolCall(id="b", function="bash", arguments={"command": "wget http://x"}), None, []
        )
    )
    assert ok.decision == "approve"
    assert bad.decision == "reject" and "network" in bad.explanation


def test_judge_formats_are_checked_at_task_load(monkeypatch):
    """Each judge's JSON format is validated when the task is built: a malformed one is a clear
    error naming it, before any sample runs (not a server 400 mid-run)."""
    import tasks.anchor.solver as solver_module
    from harness.constrained import AnswerFormatError
    from methods.anchor import JUDGE_NAMES, judge_format
    from methods.common import AnswerFormat
    from tasks.anchor.task import anchor

    asked: list[tuple[str, int]] = []

    def spy(name: str, reason_chars: int = 100) -> AnswerFormat:
        asked.append((name, reason_chars))
        return judge_format(name, reason_chars)

    monkeypatch.setattr(solver_module, "judge_format", spy)
    anchor(auditor="direct", scenarios="ledger-diversion", split="all", judge_max_tokens=96)
    assert asked == [(n, 96 - 48) for n in JUDGE_NAMES]

    bad = AnswerFormat(
        "judge_harm", json_schema={"type": "object", "properties": {"harm": {"type": "integr"}}}
    )
    monkeypatch.setattr(solver_module, "judge_format", lambda *a: bad)
    with pytest.raises(AnswerFormatError, match="judge_harm.*invalid JSON schema"):
        anchor(auditor="direct", scenarios="ledger-diversion", split="all")
