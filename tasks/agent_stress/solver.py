"""The stress agent: a tool loop (bash, write_file, read_file) driven by the scripted model (the
workload's calls, in order: deterministic) or by any model told to make those calls.

Each tool call is one operation, timed and recorded in the sample's store with its outcome
(`ok`, `exit` non-zero, `timeout`, `output_limit`, `error:<type>`). The harness also acts from
outside the sandbox where a workload asks it to: it SIGKILLs a command's processes mid-run
(killed_mid_command), and after a fault it checks from the host that nothing of the faulty
command is left (by the command's tag).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    execute_tools,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, tool
from inspect_ai.util import OutputLimitExceededError, sandbox, store

import harness.models  # noqa: F401  (registers the scripted provider the default agent uses)
from tasks.agent_stress.dataset import PORT_ENV, TAG_ENV, Op, ops_from_metadata
from tasks.agent_stress.leaks import footprint_of, kill_tagged, registry_for, tagged_processes

OPS_KEY = "agent_stress_ops"
_LEFTOVER_SETTLE_S = 3.0
_OUTSIDE_POLL_S = 0.25
_HEAD = 400  # characters of output kept per operation


class HostListener:
    """A TCP listener on the host's 127.0.0.1: records the tags of whoever connects (the network
    fault must never reach it from inside a sandbox)."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        self.port = self._socket.getsockname()[1]
        self.seen: list[str] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="agent-stress-listener", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                data = b""
                with contextlib.suppress(OSError):
                    data = conn.recv(256)
                with self._lock:
                    self.seen.append(data.decode(errors="replace").strip() or "<no tag>")

    def reached_by(self, tag_prefix: str) -> bool:
        with self._lock:
            return any(t.startswith(tag_prefix) for t in self.seen)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._socket.close()


_LISTENERS: dict[str, HostListener] = {}
_LISTENERS_LOCK = threading.Lock()


def listener_for(run_tag: str) -> HostListener:
    """The host listener of one run (started on first use, lives as long as the process)."""
    with _LISTENERS_LOCK:
        if run_tag not in _LISTENERS:
            _LISTENERS[run_tag] = HostListener()
        return _LISTENERS[run_tag]


def _record(kind: str, **fields: Any) -> dict[str, Any]:
    return {"tool": kind, **fields}


def _outcome(ex: BaseException) -> str:
    if isinstance(ex, TimeoutError):
        return "timeout"
    if isinstance(ex, OutputLimitExceededError):
        return "output_limit"
    return f"error:{type(ex).__name__}"


class _Recorder:
    """Records the operations of one sample (and runs the outside actions for them)."""

    def __init__(self, tag: str, ops: list[Op], listener_port: int, gate: bool = True) -> None:
        self.gate = gate
        self.tag = tag
        self.ops = ops
        self.port = listener_port
        self.records: list[dict[str, Any]] = []

    def next_op(self) -> tuple[int, Op | None]:
        i = len(self.records)
        return i, (self.ops[i] if i < len(self.ops) else None)

    async def run(self, tool_name: str, arguments: dict[str, Any], body: Callable[..., Any]) -> str:
        index, expected = self.next_op()
        as_asked = expected is not None and arguments == expected.arguments
        op = expected if as_asked else None  # a call not asked for: nothing to plant or check
        op_tag = f"{self.tag}:{index}"
        outside: asyncio.Task[int] | None = None
        seen_running = asyncio.Event()
        if op is not None and op.kill_from_outside:
            outside = asyncio.ensure_future(_kill_when_running(op_tag, seen_running))
        started = time.time()
        t0 = time.perf_counter()
        record = _record(
            tool_name, index=index, arguments=arguments, started=started, as_asked=as_asked
        )
        reply: str
        try:
            returncode, stdout, stderr, extra = await body(op_tag)
            record.update(
                outcome="ok" if returncode == 0 else "exit", returncode=returncode,
                stdout=stdout[-_HEAD:], stderr=stderr[-_HEAD:], **extra,
            )  # fmt: skip
            if op is not None:  # judged on the whole output, before it is cut for the log
                record["as_expected"] = _matches(op, stdout, extra.get("sha256"))
            reply = stdout if returncode == 0 else f"[exit {returncode}]\n{stdout}\n{stderr}"
        except Exception as ex:  # noqa: BLE001 - every sandbox failure is an outcome to score
            record.update(outcome=_outcome(ex), error=f"{type(ex).__name__}: {ex}"[:_HEAD])
            reply = f"[{record['outcome']}] {type(ex).__name__}: {ex}"[:2000]
        record["seconds"] = time.perf_counter() - t0
        if outside is not None:
            # the kill itself makes the call return, often before the killing thread's result
            # reaches the loop: once the command was seen running, let the kill finish and count
            if not outside.done() and not seen_running.is_set():
                outside.cancel()  # the call returned before the command was seen running
            with contextlib.suppress(asyncio.CancelledError):
                record["killed_from_outside"] = await outside
            record.setdefault("killed_from_outside", 0)
        if op is not None and op.check_leftovers:
            record["leftovers"] = await _leftovers_after(op_tag)
        self.records.append(record)
        store().set(OPS_KEY, list(self.records))
        return reply[:4000]


def _matches(op: Op, stdout: str, sha256: str | None) -> bool:
    """The content checks of an operation: `stdout_has` in its output, `sha256` of a read."""
    if op.stdout_has is not None and op.stdout_has not in stdout:
        return False
    return op.sha256 is None or op.sha256 == sha256


async def _kill_when_running(op_tag: str, seen_running: asyncio.Event) -> int:
    """From the host: wait until the command is running (it may first queue for inspect's
    subprocess gate), then SIGKILL all of it. Cancelled when the call returns before the command
    was seen running (`seen_running` set)."""
    while True:
        if await asyncio.to_thread(tagged_processes, op_tag):
            seen_running.set()
            await asyncio.sleep(0.5)  # mid-command
            return await asyncio.to_thread(kill_tagged, op_tag)
        await asyncio.sleep(_OUTSIDE_POLL_S)


async def _leftovers_after(op_tag: str) -> int:
    """Processes of an operation still running on the host after it returned (settled)."""
    deadline = time.monotonic() + _LEFTOVER_SETTLE_S
    while True:
        left = len(await asyncio.to_thread(tagged_processes, op_tag))
        if left == 0 or time.monotonic() > deadline:
            return left
        await asyncio.sleep(0.1)


def _tools(recorder: _Recorder) -> list[Tool]:
    @tool
    def bash() -> Tool:
        async def execute(cmd: str, timeout: int = 60) -> str:
            """Run a bash command in the sandbox.

            Args:
                cmd: The command line.
                timeout: Seconds before the command is killed.

            Returns:
                Its standard output, or the error.
            """

            async def body(op_tag: str) -> tuple[int, str, str, dict[str, Any]]:
                result = await sandbox().exec(
                    ["bash", "-c", cmd], timeout=int(timeout),
                    env={TAG_ENV: op_tag, PORT_ENV: str(recorder.port)},
                    concurrency=recorder.gate,
                )  # fmt: skip
                return result.returncode, result.stdout, result.stderr, {}

            return await recorder.run("bash", {"cmd": cmd, "timeout": timeout}, body)

        return execute

    @tool
    def write_file() -> Tool:
        async def execute(path: str, content: str) -> str:
            """Write a text file in the sandbox.

            Args:
                path: Where (relative to the working directory, or absolute).
                content: The file's text.

            Returns:
                "written", or the error.
            """

            async def body(op_tag: str) -> tuple[int, str, str, dict[str, Any]]:  # noqa: ARG001
                await sandbox().write_file(path, content)
                return 0, "written", "", {}

            return await recorder.run("write_file", {"path": path, "content": content}, body)

        return execute

    @tool
    def read_file() -> Tool:
        async def execute(path: str) -> str:
            """Read a text file in the sandbox.

            Args:
                path: The file (relative to the working directory, or absolute).

            Returns:
                Its text, or the error.
            """

            async def body(op_tag: str) -> tuple[int, str, str, dict[str, Any]]:  # noqa: ARG001
                text = await sandbox().read_file(path)
                digest = hashlib.sha256(text.encode()).hexdigest()
                return 0, text, "", {"sha256": digest}

            return await recorder.run("read_file", {"path": path}, body)

        return execute

    return [bash(), write_file(), read_file()]


_CALLS = re.compile(r"<calls>\s*(.*?)\s*</calls>", re.S)


def scripted_agent(messages: list[ChatMessage]) -> str | dict[str, Any]:
    """The deterministic agent (a `scripted/` responder): the workload's next call, then DONE."""
    first = next(m for m in messages if isinstance(m, ChatMessageUser))
    found = _CALLS.search(first.text)
    if found is None:
        raise ValueError("agent_stress scripted agent: the prompt has no <calls> block")
    calls = json.loads(found.group(1))
    made = sum(len(m.tool_calls or []) for m in messages if isinstance(m, ChatMessageAssistant))
    if made < len(calls):
        return {"content": "", "tool_calls": [calls[made]]}
    return "DONE"


@solver
def stress_agent(
    *,
    sandbox_kind: str,
    run_tag: str,
    max_turns: int,
    subprocess_gate: bool = True,
) -> Solver:
    """Run the sample's workload through the tool loop; record every operation. `run_tag` names
    the run: its samples' footprints and its host listener are kept under it. `subprocess_gate`:
    commands go through inspect's subprocess gate (`exec(concurrency=True)`, as inspect's own
    tools do) or not."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:  # noqa: ARG001
        ops = ops_from_metadata(state.metadata)
        listener = listener_for(run_tag)
        tag = f"{run_tag}-{state.sample_id}-{state.epoch}-{uuid.uuid4().hex[:6]}"
        registry_for(run_tag).add(str(state.sample_id), footprint_of(sandbox(), sandbox_kind, tag))
        state.metadata["tag"] = tag
        recorder = _Recorder(tag, ops, listener.port, gate=subprocess_gate)
        tools = _tools(recorder)
        model = get_model(role="agent", default=get_model())  # the task's model: scripted or not
        for _ in range(max_turns):
            output = await model.generate(state.messages, tools)
            state.messages.append(output.message)
            if not output.message.tool_calls:
                break
            executed = await execute_tools(state.messages, tools)
            state.messages.extend(executed.messages)
        state.metadata["network_reached_host"] = listener.reached_by(tag)
        store().set(OPS_KEY, list(recorder.records))
        return state

    return solve
