"""Error schemata: distilled (prompted, conditioned on the gold labels) or templated."""

from __future__ import annotations

import re
from dataclasses import dataclass

import methods.correct._prompts as _prompts
from methods.common import AnswerFormat
from methods.correct._generate import CallLog, Generate, call_model, messages
from methods.correct._parse import free_text
from methods.correct._render import TokenCounter, approx_tokens, render_steps, truncate_text
from methods.correct._trajectory import Trajectory

_SECTIONS = ("Error Signatures", "Error Context", "Detection Heuristics")
_SECTION_RE = re.compile(
    r"^\W*(error\s*signatures?|error\s*context(?:\s*analysis)?|detection\s*heuristics?)\W*[:：]?",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class ErrorSchema:
    """Σ (signatures), C (context analysis), detection heuristics; `source_id` is the
    trajectory it came from (retrieval excludes it for that trajectory)."""

    source_id: str
    signatures: str
    context: str
    heuristics: str
    raw: str
    parsed: bool  # all three sections found in the distiller's reply
    origin: str  # "distilled" | "template"

    def text(self) -> str:
        if not self.parsed:
            return self.raw.strip()
        return (
            f"Error Signatures: {self.signatures}\nError Context: {self.context}\n"
            f"Detection Heuristics: {self.heuristics}"
        )


def schema_format(section_chars: int = 300) -> AnswerFormat:
    """The three sections on one line each, none empty: every reply in it parses completely."""
    body = free_text(section_chars, non_blank=True)
    return AnswerFormat(
        "error_schema",
        regex=(
            rf"Error Signatures: {body}\nError Context: {body}\n"
            rf"Detection Heuristics: {body}"
        ),
    )


SCHEMA_PREFIX = "Error Signatures: \nError Context: \nDetection Heuristics: "


def distil_format(max_new_tokens: int | None = None) -> AnswerFormat:
    """The teacher's reply format, its sections sized to end within ``max_new_tokens``."""
    return schema_format(
        300 if max_new_tokens is None else (max_new_tokens - len(SCHEMA_PREFIX) - 2) // 3
    )


def parse_schema(source_id: str, reply: str) -> ErrorSchema:
    """Split the distiller's reply into its three sections (raw text kept when they are missing)."""
    found: dict[str, str] = {}
    matches = list(_SECTION_RE.finditer(reply or ""))
    for i, m in enumerate(matches):
        name = m.group(1).lower()
        key = "sig" if name.startswith("error sig") else "ctx" if "context" in name else "heu"
        end = matches[i + 1].start() if i + 1 < len(matches) else len(reply)
        found.setdefault(key, reply[m.end() : end].strip())
    parsed = all(found.get(k) for k in ("sig", "ctx", "heu"))
    return ErrorSchema(
        source_id=source_id,
        signatures=found.get("sig", ""),
        context=found.get("ctx", ""),
        heuristics=found.get("heu", ""),
        raw=(reply or "").strip(),
        parsed=parsed,
        origin="distilled",
    )


async def distil_schema(
    trajectory: Trajectory,
    generate: Generate,
    *,
    max_prompt_tokens: int = 2048,
    count_tokens: TokenCounter = approx_tokens,
    log: CallLog | None = None,
    max_new_tokens: int | None = None,
) -> ErrorSchema:
    """Prompt the teacher for a schema of the trajectory's annotated mistake (paper §3, offline stage)."""
    t = trajectory
    if not t.labelled:
        raise ValueError(
            f"trajectory {t.id!r} has no gold mistake_agent/mistake_step: cannot distil a schema"
        )
    question = truncate_text(t.question, 256, count_tokens)
    args = (
        question,
        "",
        t.ground_truth,
        t.mistake_agent or "",
        int(t.mistake_step or 0),
        truncate_text(t.mistake_reason, 256, count_tokens),
    )
    template = _prompts.schema_prompt(*args)
    budget = max_prompt_tokens - count_tokens(template) - count_tokens(_prompts.SYSTEM_SCHEMA) - 16
    rendered = render_steps(t.steps, budget, count_tokens)
    prompt = _prompts.schema_prompt(question, rendered.text, *args[2:])
    fmt = distil_format(max_new_tokens)
    reply = await call_model(generate, messages(prompt, _prompts.SYSTEM_SCHEMA), log, fmt)
    return parse_schema(t.id, reply)


def template_schema(trajectory: Trajectory, excerpt_chars: int = 300) -> ErrorSchema:
    """A schema built from the gold annotation without a model (option `schema_source=template`).

    Signatures = the annotated reason; context = the agent's role and position; heuristics = the
    first `excerpt_chars` of the faulty turn. A cheap stand-in for LLM distillation on CPU.
    """
    t = trajectory
    if not t.labelled:
        raise ValueError(
            f"trajectory {t.id!r} has no gold mistake_agent/mistake_step: cannot build a schema"
        )
    pos = next((i for i, s in enumerate(t.steps) if s.index == t.mistake_step), None)
    turn = t.steps[pos].content[:excerpt_chars] if pos is not None else ""
    phase = (
        "early"
        if pos is not None and pos < t.n_steps / 3
        else "late"
        if pos is not None and pos >= 2 * t.n_steps / 3
        else "middle"
    )
    signatures = t.mistake_reason.strip() or "(no reason annotated)"
    context = (
        f"The {t.mistake_agent} agent, in the {phase} phase of a {t.n_steps}-step conversation."
    )
    heuristics = f"Look for a turn like this one by the {t.mistake_agent} agent and check it against the task: {turn!r}"
    raw = f"Error Signatures: {signatures}\nError Context: {context}\nDetection Heuristics: {heuristics}"
    return ErrorSchema(t.id, signatures, context, heuristics, raw, True, "template")
