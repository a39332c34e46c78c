"""`harness/<default|path>`: the in-process transformers back-end, on the white-box handle.

For machines without vLLM and for fast tests. Greedy decoding (the harness's runs are
deterministic); concurrent requests are gathered into batches. Models without native tool
calling get tools described in the system prompt and `<tool_call>{json}</tool_call>` parsed back.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    StopReason,
    modelapi,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from harness.models.chat_templates import TOOL_INSTRUCTION
from harness.models.grammar import Constraint, constraint_from_request
from harness.models.vlm import VLM_ALIASES, VisionLM, VisionPrompt, is_vision_model, load_image
from harness.models.whitebox import Generation, WhiteBoxLM
from methods.common import MicroBatcher

DEFAULT_MAX_TOKENS = 256
_TOOL_CALL_RE = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


@modelapi(name="harness")
class LocalTransformersAPI(ModelAPI):
    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008
        batch_size: int = 16,
        batch_wait_ms: float = 20.0,
        dtype: str | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_args:
            raise ValueError(
                f"harness/{model_name}: unknown model args {sorted(model_args)}; "
                "expected batch_size, batch_wait_ms, dtype"
            )
        # dtype None/"auto": the hardware rule every back-end shares (harness.models.hardware).
        self.vision = _is_vision_model(model_name)
        self.lm: Any = (
            VisionLM.shared(model_name, dtype=dtype)
            if self.vision
            else WhiteBoxLM.shared(model_name, dtype=dtype)
        )
        self._batcher = _batcher(self.lm, batch_size, batch_wait_ms / 1000.0)

    def max_connections(self) -> int:
        return 16

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        max_tokens = config.max_tokens or DEFAULT_MAX_TOKENS
        # A JSON schema / regex / choice (response_schema or extra_body structured_outputs, as
        # vLLM takes them) or a forced tool call (tool_choice "any" or a named function; its
        # string arguments bounded so that the call closes within max_tokens).
        constraint = constraint_from_request(config, tools, tool_choice, max_tokens)
        prompt: Any
        if self.vision:
            messages, images = _render_messages(input, tools, vision=True)
            prompt = VisionPrompt(messages, images)
        else:
            messages, _ = _render_messages(input, tools)
            prompt = self.lm.chat_template(messages)
        generation = await self._batcher.submit(
            _Request(prompt, max_tokens, list(config.stop_seqs or []), constraint)
        )
        text, calls = generation.text, None
        if tools:
            text, calls = _parse_tool_calls(generation.text, tools)
        message = ChatMessageAssistant(
            content=text, tool_calls=calls, model=self.model_name, source="generate"
        )
        stop: StopReason = (
            "tool_calls"
            if calls
            else ("max_tokens" if generation.finish_reason == "length" else "stop")
        )
        output = ModelOutput(
            model=self.model_name, choices=[ChatCompletionChoice(message=message, stop_reason=stop)]
        )
        output.usage = ModelUsage(
            input_tokens=generation.prompt_tokens,
            output_tokens=len(generation.token_ids),
            total_tokens=generation.prompt_tokens + len(generation.token_ids),
        )
        if constraint is not None:
            # A constrained reply cut by max_tokens is a truncation, not a format failure.
            output.metadata = {
                "constrained": constraint.kind,
                "truncated": generation.finish_reason == "length",
            }
        return output


def _is_vision_model(model_name: str) -> bool:
    if model_name in VLM_ALIASES or f"harness/{model_name}" in VLM_ALIASES:
        return True
    path = Path(model_name).expanduser()
    return path.is_dir() and is_vision_model(path)


@dataclass
class _Request:
    prompt: Any  # a chat-formatted string, or a VisionPrompt for a vision-language model
    max_tokens: int
    stop: list[str]
    constraint: Constraint | None = None  # one grammar per row: mixed batches are fine


def _batcher(lm: Any, batch_size: int, wait_s: float) -> MicroBatcher[_Request, Generation]:
    """Concurrent requests gathered for a few ms and run as one padded batch; one batch holds
    the same stop strings (greedy decoding makes a longer budget harmless: each reply is clipped
    to its own max_tokens)."""

    def run(batch: list[_Request]) -> list[Generation]:
        results = lm.generate(
            [r.prompt for r in batch],
            max(r.max_tokens for r in batch),
            record=False,
            batch_size=len(batch),
            stop=batch[0].stop or None,
            constraints=[r.constraint for r in batch],
        )
        return [_clip(lm, result, r.max_tokens) for r, result in zip(batch, results, strict=False)]

    return MicroBatcher(run, batch_size=batch_size, wait_s=wait_s, key=lambda r: tuple(r.stop))


def _clip(lm: WhiteBoxLM, generation: Generation, max_tokens: int) -> Generation:
    if len(generation.token_ids) <= max_tokens:
        return generation
    ids = generation.token_ids[:max_tokens]
    return Generation(
        prompt=generation.prompt,
        text=lm.tokenizer.decode(ids, skip_special_tokens=True),
        token_ids=ids,
        finish_reason="length",
        prompt_tokens=generation.prompt_tokens,
    )


class TextOnlyModelError(ValueError):
    """A text-only model was sent images, audio or video."""


def _check_text_only(input: list[ChatMessage]) -> None:
    # Dropping an image silently would score the model on a question it never saw.
    for index, message in enumerate(input):
        if isinstance(message.content, str):
            continue
        for part in message.content:
            if part.type not in ("text", "reasoning"):
                raise TextOnlyModelError(
                    f"message {index} ({message.role}) holds {part.type} content, but "
                    "this in-process model is a text-only causal LM. Use a vision-language "
                    "model (model=default-vlm, harness/<VLM folder>, or vllm/<VLM>) or the "
                    "task's text-only option."
                )


def _user_content(message: ChatMessage, index: int, images: list[Any]) -> Any:
    """A message's content for a VLM chat template: text, or text and image parts in order."""
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, str]] = []
    for part in message.content:
        if isinstance(part, ContentText):
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ContentImage):
            images.append(load_image(part.image))
            parts.append({"type": "image"})
        elif part.type != "reasoning":
            raise TextOnlyModelError(
                f"message {index} ({message.role}) holds {part.type} content; the in-process "
                "vision-language back-end reads text and images only"
            )
    if not any(p["type"] == "image" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _render_messages(
    input: list[ChatMessage], tools: list[ToolInfo], *, vision: bool = False
) -> tuple[list[dict[str, Any]], list[Any]]:
    """Chat messages for the template (tool turns as text) and, for a VLM, the images in order."""
    if not vision:
        _check_text_only(input)
    images: list[Any] = []
    messages: list[dict[str, Any]] = []
    for index, message in enumerate(input):
        if isinstance(message, ChatMessageTool):
            # As inspect sends a tool message to an OpenAI-compatible server (vLLM).
            body = f"Error: {message.error.message}" if message.error else message.text
            messages.append(
                {
                    "role": "user",
                    "content": f'<tool_response name="{message.function}">\n{body}\n</tool_response>',
                }
            )
        elif isinstance(message, ChatMessageAssistant):
            content = message.text
            for call in message.tool_calls or []:
                content += (
                    "\n<tool_call>"
                    + json.dumps({"name": call.function, "arguments": call.arguments})
                    + "</tool_call>"
                )
            messages.append({"role": "assistant", "content": content.strip()})
        elif vision:
            messages.append(
                {"role": message.role, "content": _user_content(message, index, images)}
            )
        else:
            messages.append({"role": message.role, "content": message.text})
    if tools:
        spec = "\n".join(
            json.dumps(
                {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters.model_dump(exclude_none=True),
                }
            )
            for t in tools
        )
        note = "You can call these tools:\n" + spec + "\n" + TOOL_INSTRUCTION
        if messages and messages[0]["role"] == "system":
            first = messages[0]["content"]
            if isinstance(first, str):
                messages[0] = {"role": "system", "content": first + "\n\n" + note}
            else:
                messages[0] = {
                    "role": "system",
                    "content": [*first, {"type": "text", "text": "\n\n" + note}],
                }
        else:
            messages.insert(0, {"role": "system", "content": note})
    return messages, images


def _parse_tool_calls(text: str, tools: list[ToolInfo]) -> tuple[str, list[ToolCall] | None]:
    """Tool calls written as `<tool_call>{json}</tool_call>`; malformed ones become parse errors."""
    names = {t.name for t in tools}
    calls: list[ToolCall] = []
    for match in _TOOL_CALL_RE.finditer(text):
        call_id = f"call_{uuid.uuid4().hex[:12]}"
        try:
            payload = json.loads(match.group(1))
            name = str(payload["name"])
            arguments = payload.get("arguments") or {}
            if not isinstance(arguments, dict):
                raise ValueError("arguments must be an object")
        except (ValueError, KeyError, TypeError) as exc:
            calls.append(
                ToolCall(
                    id=call_id,
                    function="unknown",
                    arguments={},
                    parse_error=f"malformed tool call {match.group(1)[:200]!r}: {exc}",
                )
            )
            continue
        parse_error = (
            None if name in names else f"unknown tool '{name}' (available: {sorted(names)})"
        )
        calls.append(
            ToolCall(id=call_id, function=name, arguments=arguments, parse_error=parse_error)
        )
    content = _TOOL_CALL_RE.sub("", text).strip() if calls else text
    return content, calls or None
