"""A scripted, offline model provider for tests: `scripted/<name>`.

inspect's `mockllm` asks tiktoken for a download to count tokens, which fails offline. This one
sets usage itself. Scripts restart for every sample (and epoch), so one script drives each sample
the same way however many samples run concurrently.

Model args:
  replies:   list of replies, consumed in order within a sample. A reply is a string, or a dict
             {"content": str, "tool_calls": [{"function": name, "arguments": {...}}]}.
  default:   reply used once `replies` is exhausted (otherwise the call fails: "script exhausted").
  reply:     one reply for every call (shorthand for replies=[], default=reply).
  responder: a callable(messages) -> str | dict | ModelOutput, or "module:function".
  script:    path to a YAML/JSON file holding a list of replies (or {replies:, default:}).
"""

from __future__ import annotations

import importlib
import json
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import yaml
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    StopReason,
    modelapi,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

Reply = str | dict[str, Any] | ModelOutput


class ScriptError(RuntimeError):
    """The script cannot answer this call (exhausted, malformed reply, bad responder)."""


@modelapi(name="scripted")
class ScriptedModelAPI(ModelAPI):
    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008
        replies: list[Reply] | None = None,
        default: Reply | None = None,
        reply: Reply | None = None,
        responder: Callable[[list[ChatMessage]], Reply] | str | None = None,
        script: str | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_args:
            raise ScriptError(
                f"scripted/{model_name}: unknown model args {sorted(model_args)}; expected "
                "replies, default, reply, responder, script"
            )
        if script is not None:
            loaded = _load_script(Path(script))
            replies = loaded.get("replies", replies)
            default = loaded.get("default", default)
        if reply is not None:
            replies, default = replies or [], reply
        self.replies: list[Reply] = list(replies or [])
        self.default = default
        self.responder = _resolve_responder(responder) if responder is not None else None
        if not self.replies and self.default is None and self.responder is None:
            raise ScriptError(
                f"scripted/{model_name}: give replies=[...], reply=..., responder=... or script=..."
            )
        self._positions: dict[Any, int] = {}
        self._lock = threading.Lock()
        self.calls: list[list[ChatMessage]] = []

    def max_connections(self) -> int:
        return 32

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],  # noqa: ARG002
        tool_choice: ToolChoice,  # noqa: ARG002
        config: GenerateConfig,  # noqa: ARG002
    ) -> ModelOutput:
        self.calls.append(list(input))
        if self.responder is not None:
            reply = self.responder(list(input))
        else:
            reply = self._next_reply()
        output = _to_output(reply, self.model_name)
        text_in = sum(len(m.text.split()) for m in input)
        text_out = len(output.completion.split())
        output.usage = ModelUsage(
            input_tokens=text_in, output_tokens=text_out, total_tokens=text_in + text_out
        )
        return output

    def _next_reply(self) -> Reply:
        key = _sample_key()
        with self._lock:
            position = self._positions.get(key, 0)
            self._positions[key] = position + 1
        if position < len(self.replies):
            return self.replies[position]
        if self.default is not None:
            return self.default
        raise ScriptError(
            f"scripted/{self.model_name}: script exhausted after {len(self.replies)} replies "
            f"(call {position + 1} for this sample); add replies or a default"
        )


def _sample_key() -> Any:
    try:
        from inspect_ai.log._samples import sample_active

        active = sample_active()
    except ImportError:  # pragma: no cover - older inspect
        active = None
    if active is None:
        return None
    return (getattr(active.sample, "id", None), getattr(active, "epoch", None), id(active))


def _to_output(reply: Reply, model: str) -> ModelOutput:
    if isinstance(reply, ModelOutput):
        return reply
    if isinstance(reply, str):
        return ModelOutput.from_content(model=model, content=reply)
    if isinstance(reply, dict):
        unknown = set(reply) - {"content", "tool_calls", "stop_reason"}
        if unknown:
            raise ScriptError(f"scripted reply has unknown keys {sorted(unknown)}: {reply!r}")
        calls = []
        for i, call in enumerate(reply.get("tool_calls") or []):
            if not isinstance(call, dict) or "function" not in call:
                raise ScriptError(f"scripted tool call {i} needs a 'function' key: {call!r}")
            calls.append(
                ToolCall(
                    id=call.get("id") or f"call_{uuid.uuid4().hex[:12]}",
                    function=str(call["function"]),
                    arguments=dict(call.get("arguments") or {}),
                )
            )
        message = ChatMessageAssistant(
            content=str(reply.get("content", "")),
            tool_calls=calls or None,
            model=model,
            source="generate",
        )
        stop = cast(StopReason, reply.get("stop_reason") or ("tool_calls" if calls else "stop"))
        return ModelOutput(
            model=model, choices=[ChatCompletionChoice(message=message, stop_reason=stop)]
        )
    raise ScriptError(
        f"scripted reply must be str, dict or ModelOutput, got {type(reply).__name__}"
    )


def _resolve_responder(responder: Callable[..., Reply] | str) -> Callable[..., Reply]:
    if callable(responder):
        return responder
    module_name, _, attr = str(responder).partition(":")
    if not attr:
        raise ScriptError(f"responder '{responder}' must be 'module:function'")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ScriptError(f"cannot import responder '{responder}': {exc}") from exc


def _load_script(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ScriptError(f"cannot read script {path}: {exc}") from exc
    if isinstance(data, list):
        return {"replies": data}
    if isinstance(data, dict) and set(data) <= {"replies", "default"}:
        return data
    raise ScriptError(f"script {path} must be a list of replies or {{replies:, default:}}")
