"""Prompt texts. Paraphrased from Who&When's Automated_FA prompts (all-at-once, step-by-step,
binary search) and CORRECT's schema-guided all-at-once prompt; the output format
(`Agent Name: / Step Number: / Reason for Mistake:`) is the one both papers parse.

Deviation (named `explicit_step_ids`): every turn is shown as `Step <i> - <speaker>:` with its
original history index, so truncated or omitted turns never shift the numbering; Who&When's
all-at-once prompt shows `<speaker>: <content>` and asks the model to count turns from 0.
"""

from __future__ import annotations

SYSTEM_ALL_AT_ONCE = "You are a helpful assistant skilled in analysing multi-agent conversations."
SYSTEM_STEP = "You are a precise evaluator of the steps of a multi-agent conversation."
SYSTEM_BINARY = (
    "You are an assistant that localises errors in segments of a multi-agent conversation."
)
SYSTEM_SCHEMA = "You are an expert in diagnosing failures of multi-agent systems."


def _answer_line(ground_truth: str | None) -> str:
    return f"The correct answer to the problem is: {ground_truth}\n" if ground_truth else ""


def schema_block(schemata: list[str]) -> str:
    if not schemata:
        return ""
    parts = [f"--- Schema {i + 1} ---\n{text.strip()}" for i, text in enumerate(schemata)]
    return (
        "ERROR SCHEMATA FOR GUIDANCE (distilled from similar past failures; use them as hints "
        "about what kind of mistake to look for, not as the answer):\n" + "\n".join(parts) + "\n\n"
    )


def all_at_once_prompt(
    question: str, conversation: str, ground_truth: str | None, schemata: list[str] | None = None
) -> str:
    return (
        "You are analysing the conversation of a team of agents that tried to solve a problem and failed.\n"
        f"The problem is: {question}\n"
        f"{_answer_line(ground_truth)}"
        + schema_block(list(schemata or []))
        + "Here is the conversation; each turn is labelled with its step number:\n\n"
        f"{conversation}\n\n"
        "Find the decisive mistake that made the team fail:\n"
        "1. The name of the agent who made the mistake that is directly responsible for the wrong "
        "solution. If no agent makes an obvious mistake, still choose the single most responsible agent.\n"
        "2. The step number (as labelled above) at which that agent first made the mistake.\n"
        "3. The reason for your prediction.\n"
        "Answer exactly in this format:\n"
        "Agent Name: <agent name>\nStep Number: <step number>\nReason for Mistake: <reason>\n"
    )


def step_prompt(
    question: str, conversation: str, ground_truth: str | None, step: int, agent: str
) -> str:
    return (
        "You are checking, step by step, the conversation of a team of agents solving a problem.\n"
        f"The problem is: {question}\n"
        f"{_answer_line(ground_truth)}"
        f"Here is the conversation up to the current step:\n{conversation}\n\n"
        f"The most recent step ({step}) was by '{agent}'.\n"
        f"Does this most recent action (step {step}) contain an error that could derail the "
        "problem solving or lead to a wrong answer? Do not be overly critical: only flag errors "
        "that clearly derail the process.\n"
        "Respond only in the format:\n1. Yes/No.\n2. Reason: <your explanation>"
    )


def binary_prompt(
    question: str, segment: str, ground_truth: str | None, start: int, mid: int, end: int
) -> str:
    return (
        "You are analysing a segment of a conversation in which several agents tried, and failed, "
        "to solve a problem together.\n"
        "Your task is to find which half of the segment contains the single most critical "
        "mistake that led to the failure.\n"
        f"The problem is: {question}\n"
        f"{_answer_line(ground_truth)}"
        f"The segment goes from step {start} to step {end}:\n\n{segment}\n\n"
        f"Is the most critical mistake more likely in the upper half (steps {start} to {mid}) "
        f"or in the lower half (steps {mid + 1} to {end})?\n"
        "Respond with ONLY 'upper half' or 'lower half'. If no single clear mistake is evident, "
        "choose the half with the step you believe is most responsible."
    )


def schema_prompt(
    question: str,
    conversation: str,
    ground_truth: str,
    mistake_agent: str,
    mistake_step: int,
    mistake_reason: str,
) -> str:
    return (
        "A team of agents failed to solve a problem. The decisive mistake has been annotated. "
        "Distil it into a reusable ERROR SCHEMA that helps recognise the same kind of mistake in "
        "other conversations.\n"
        f"The problem: {question}\n"
        f"{_answer_line(ground_truth)}"
        f"Conversation:\n{conversation}\n\n"
        f"Annotated mistake: agent '{mistake_agent}' at step {mistake_step}. Reason: {mistake_reason}\n\n"
        "Write the schema in exactly these three sections:\n"
        "Error Signatures: <observable patterns in the text that reveal this kind of mistake>\n"
        "Error Context: <which role, at which phase of the task, under which conditions it happens>\n"
        "Detection Heuristics: <concrete checks to find the first step where it occurs>\n"
    )
