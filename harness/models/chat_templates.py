"""Chat templates the harness serves with: tools described in the prompt where a model's drops them.

SmolLM2's ChatML template ignores the `tools` it is given, so a model served with it is asked to
call tools it was never shown. The in-process back-end writes the tools into the system prompt
and reads `<tool_call>{json}</tool_call>` back (`local_provider`); the vLLM servers the harness
starts for such models get the same convention as a template (`--chat-template`), which vLLM's
`hermes` tool parser reads, so the two back-ends show the model the same prompt.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness.paths import cache_dir

#: Said after the tool list, by both back-ends.
TOOL_INSTRUCTION = (
    'To call a tool, reply with <tool_call>{"name": "<tool name>", "arguments": {...}}</tool_call>.'
)
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"

CHATML_TOOLS_TEMPLATE = (
    "{%- set ns = namespace(spec='', note='', calls='', tool='') -%}"
    "{%- if tools -%}"
    "{%- for t in tools -%}{%- set f = t.function if t.function is defined else t -%}"
    "{%- set ns.spec = ns.spec + ({'name': f.name, 'description': f.description, "
    "'parameters': f.parameters} | tojson) + '\\n' -%}"
    "{%- endfor -%}"
    "{%- set ns.note = 'You can call these tools:\\n' + ns.spec + "
    + json.dumps(TOOL_INSTRUCTION)
    + " -%}"
    "{%- endif -%}"
    "{%- for message in messages -%}"
    "{%- set content = message.content if message.content is string else "
    "(message.content | map(attribute='text') | join('') if message.content else '') -%}"
    "{%- if loop.first and message.role != 'system' -%}"
    "{{ '<|im_start|>system\\n' + (ns.note if ns.note else " + json.dumps(DEFAULT_SYSTEM) + ") "
    "+ '<|im_end|>\\n' }}"
    "{%- endif -%}"
    "{%- if message.role == 'system' -%}"
    "{{ '<|im_start|>system\\n' + content + ('\\n\\n' + ns.note if ns.note and loop.first else '')"
    " + '<|im_end|>\\n' }}"
    "{%- elif message.role == 'tool' -%}"
    "{%- set ns.tool = message.name or 'tool' -%}"
    "{%- for earlier in messages -%}{%- for call in (earlier.tool_calls or []) -%}"
    "{%- if call.id is defined and call.id == message.tool_call_id -%}"
    "{%- set ns.tool = call.function.name if call.function is defined else call.name -%}"
    "{%- endif -%}{%- endfor -%}{%- endfor -%}"
    "{{ '<|im_start|>user\\n<tool_response name=\"' + ns.tool + '\">\\n' "
    "+ content + '\\n</tool_response><|im_end|>\\n' }}"
    "{%- elif message.role == 'assistant' -%}"
    "{%- set ns.calls = '' -%}"
    "{%- for call in (message.tool_calls or []) -%}"
    "{%- set fn = call.function if call.function is defined else call -%}"
    "{%- set args = fn.arguments if fn.arguments is string else (fn.arguments | tojson) -%}"
    "{%- set ns.calls = ns.calls + '\\n<tool_call>{\"name\": ' + (fn.name | tojson) "
    "+ ', \"arguments\": ' + args + '}</tool_call>' -%}"
    "{%- endfor -%}"
    "{{ '<|im_start|>assistant\\n' + ((content or '') + ns.calls) | trim + '<|im_end|>\\n' }}"
    "{%- else -%}"
    "{{ '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}"
)


def template_drops_tools(model_path: str | os.PathLike[str]) -> bool:
    """Whether the folder's chat template leaves out the tools it is given."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    if not getattr(tokenizer, "chat_template", None):
        return True
    probe = {
        "type": "function",
        "function": {
            "name": "harness_probe_tool",
            "description": "probe",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    try:
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": "hi"}], tools=[probe], tokenize=False
        )
    except Exception:  # noqa: BLE001 - a template that fails on tools drops them too
        return True
    return "harness_probe_tool" not in str(text)


def served_chat_template(model_path: str | os.PathLike[str]) -> Path | None:
    """A tool-aware ChatML template file for a ChatML model whose template drops tools, else None."""
    config = _read_json(Path(model_path) / "config.json")
    if "vision_config" in config:
        return None  # the VLM's own template handles image parts
    template = _read_text(Path(model_path) / "chat_template.jinja") or str(
        _read_json(Path(model_path) / "tokenizer_config.json").get("chat_template", "")
    )
    if "<|im_start|>" not in template or not template_drops_tools(model_path):
        return None
    path = cache_dir() / "chat-templates" / "chatml-tools.jinja"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text() != CHATML_TOOLS_TEMPLATE:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(CHATML_TOOLS_TEMPLATE)
        tmp.replace(path)
    return path


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


def _read_text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
