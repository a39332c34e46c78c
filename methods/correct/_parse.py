"""Parse a localiser's reply into a `Prediction`, naming why a part is unusable.

Rules (each failure is scored wrong with this reason, never silently skipped):
- step: the integers on the `Step Number:` line; without that line, `step N` mentions anywhere.
  None found -> "no step"; two different integers -> "two different steps"; outside
  [0, n_steps) -> "step out of range".
- agent: the `Agent Name:` line, matched against the team by `agent_key` (role suffix, case and
  punctuation ignored). Missing -> "no agent"; not a team member -> "unknown agent".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from methods.common import AnswerFormat, regex_literal
from methods.correct._trajectory import Prediction, agent_key

_AGENT_LINE = re.compile(r"agent\s*name\s*[:：]\s*(.*)", re.IGNORECASE)
_STEP_LINE = re.compile(r"step\s*(?:number|no\.?|#)?\s*[:：]\s*(.*)", re.IGNORECASE)
_REASON_LINE = re.compile(
    r"reason(?:\s*for\s*(?:the\s*)?mistake)?\s*[:：]\s*(.*)", re.IGNORECASE | re.DOTALL
)
_STEP_MENTION = re.compile(r"\bstep\s*(?:number\s*)?[:#]?\s*(-?\d+)", re.IGNORECASE)
_INT = re.compile(r"(?<!\d)-?\d+")  # "3-5" reads as 3 and 5, "-1" as -1
_DECORATION = re.compile(r"^[\s*_`\"'\[\(<]+|[\s*_`\"'\]\)>.,;]+$")


def _clean(text: str) -> str:
    return _DECORATION.sub("", text.strip())


def _parse_step(text: str, n_steps: int) -> tuple[int | None, str | None]:
    lines = [
        m.group(1)
        for m in (_STEP_LINE.match(line.strip(" *-#>")) for line in text.splitlines())
        if m
    ]
    if lines:
        # Only the first labelled line counts; "Step Number: 3 (the 4th turn)" must not read "4".
        values = [int(v) for v in _INT.findall(lines[0].split("(")[0])] or [
            int(v) for v in _INT.findall(lines[0])
        ]
    else:
        values = [int(v) for v in _STEP_MENTION.findall(text)]
    distinct = sorted(set(values))
    if not distinct:
        return None, "no step: the reply names no step number"
    if len(distinct) > 1:
        return None, f"two different steps: the reply names steps {distinct}"
    step = distinct[0]
    if not 0 <= step < n_steps:
        return None, f"step out of range: {step} is not in [0, {n_steps - 1}]"
    return step, None


def _parse_agent(text: str, team: Iterable[str]) -> tuple[str | None, str | None]:
    named = None
    for line in text.splitlines():
        m = _AGENT_LINE.match(line.strip(" *-#>"))
        if m:
            named = _clean(m.group(1))
            break
    if not named:
        return None, "no agent: the reply has no 'Agent Name:' line"
    by_key = {agent_key(a): a for a in team}
    key = agent_key(named)
    if key in by_key:
        return by_key[key], None
    # "Agent Name: WebSurfer made the mistake" -> the longest team name at the start of the field.
    starts = [a for k, a in by_key.items() if k and key.startswith(k)]
    if starts:
        return max(starts, key=lambda a: len(agent_key(a))), None
    return None, f"unknown agent: {named!r} is not one of {sorted(by_key.values())}"


def parse_localisation(text: str, n_steps: int, team: Iterable[str]) -> Prediction:
    """Parse `Agent Name: / Step Number: / Reason for Mistake:` from a model reply."""
    team = list(team)
    text = text or ""
    step, step_error = _parse_step(text, n_steps)
    agent, agent_error = _parse_agent(text, team)
    reason_match = _REASON_LINE.search(text)
    reason = reason_match.group(1).strip() if reason_match else ""
    return Prediction(
        agent=agent,
        step=step,
        reason=reason,
        raw=text,
        agent_error=agent_error,
        step_error=step_error,
    )


def parse_yes_no(text: str) -> bool | None:
    """Step-by-step verdict: the first yes/no word of the reply (None when neither appears)."""
    m = re.search(r"\b(yes|no)\b", text or "", re.IGNORECASE)
    return None if m is None else m.group(1).lower() == "yes"


def parse_half(text: str) -> str | None:
    """Binary-search verdict: 'upper' or 'lower' (None when neither or both are named)."""
    low = (text or "").lower()
    upper, lower = "upper half" in low, "lower half" in low
    if upper == lower:
        return None
    return "upper" if upper else "lower"


# --- the formats these parsers read, for constrained decoding -----------------------------
# Free text is printable ASCII on one line, each character at most one token of a byte-level
# tokenizer, so a caller can size it to end within max_tokens (`free_chars`).


def free_text(chars: int, *, non_blank: bool = False) -> str:
    """Regex for one line of at most `chars` printable ASCII characters (`non_blank`: it starts
    with a visible one, so it is never empty after strip())."""
    chars = max(1, chars)
    if non_blank:
        return "[!-~]" + (f"[ -~]{{0,{chars - 1}}}" if chars > 1 else "")
    return f"[ -~]{{1,{chars}}}"


def localisation_format(team: Iterable[str], n_steps: int, reason_chars: int = 200) -> AnswerFormat:
    """`Agent Name: <a team member>` / `Step Number: <0..n_steps-1>` / `Reason for Mistake:
    <one line>`: every reply in it parses (`parse_localisation` with the same team); agent and
    step come first, so a reply cut in its reason keeps both scored parts."""
    names = sorted({a.strip() for a in team if a and a.strip()}, key=lambda a: (-len(a), a))
    if not names or n_steps < 1:
        raise ValueError(f"localisation format needs a team and steps (got {names}, {n_steps})")
    agents = "|".join(regex_literal(a) for a in names)
    steps = "|".join(str(i) for i in range(n_steps))
    return AnswerFormat(
        "localisation",
        regex=(
            rf"Agent Name: ({agents})\nStep Number: ({steps})\n"
            rf"Reason for Mistake: {free_text(reason_chars)}"
        ),
    )


def localisation_prefix(team: Iterable[str], n_steps: int) -> str:
    """The longest fixed text before the reason (for sizing `reason_chars`)."""
    longest = max((a.strip() for a in team if a and a.strip()), key=len, default="")
    return f"Agent Name: {longest}\nStep Number: {n_steps - 1}\nReason for Mistake: "


def yes_no_format(reason_chars: int = 200) -> AnswerFormat:
    """Step-by-step: "1. Yes." or "1. No.", then one line of reason (`parse_yes_no`)."""
    return AnswerFormat(
        "step_verdict", regex=rf"1\. (Yes|No)\.\n2\. Reason: {free_text(reason_chars)}"
    )


YES_NO_PREFIX = "1. Yes.\n2. Reason: "
# Binary search: exactly one half (`parse_half`).
HALF_FORMAT = AnswerFormat("half", choice=("upper half", "lower half"))
