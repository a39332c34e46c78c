"""Plain data for a multi-agent trajectory and a localisation prediction (no inspect)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scorers.agents import agent_key  # one definition, shared with the localisation scorer

# Magentic-One logs name a turn "Orchestrator (thought)", "Orchestrator (-> WebSurfer)"...;
# the gold `mistake_agent` names the agent only ("Orchestrator"), so the suffix is not identity.
_ROLE_SUFFIX = re.compile(r"\s*\(.*\)\s*$")


def agent_base(name: str) -> str:
    """Display name of the agent behind a turn label ("Orchestrator (thought)" -> "Orchestrator")."""
    return _ROLE_SUFFIX.sub("", name or "").strip()


@dataclass(frozen=True)
class Step:
    """One turn of the history; `index` is the position in the source `history` list."""

    index: int
    agent: str  # the agent (role suffix removed)
    label: str  # the speaker label as the log shows it (e.g. "Orchestrator (thought)")
    content: str


@dataclass(frozen=True)
class Trajectory:
    """A failed multi-agent run with its gold failure annotation (when known)."""

    id: str
    question: str
    steps: tuple[Step, ...]
    ground_truth: str = ""
    mistake_agent: str | None = None
    mistake_step: int | None = None
    mistake_reason: str = ""
    team: tuple[str, ...] = ()  # agents known to be in the team (e.g. system_prompt keys)
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    @property
    def agents(self) -> tuple[str, ...]:
        """Agents that speak in the history, in order of first appearance, then the rest of the team."""
        seen: dict[str, str] = {}
        for name in [s.agent for s in self.steps] + list(self.team):
            seen.setdefault(agent_key(name), name)
        return tuple(seen.values())

    @property
    def speakers(self) -> tuple[str, ...]:
        seen: dict[str, str] = {}
        for s in self.steps:
            seen.setdefault(agent_key(s.agent), s.agent)
        return tuple(seen.values())

    @property
    def labelled(self) -> bool:
        return self.mistake_agent is not None and self.mistake_step is not None

    def text_for_embedding(self) -> str:
        """What retrieval compares: the task and the turns (the paper embeds whole trajectories)."""
        turns = "\n".join(f"{s.label}: {s.content}" for s in self.steps)
        return f"{self.question}\n{turns}"


@dataclass(frozen=True)
class Prediction:
    """A parsed localisation. `step`/`agent` are None when invalid; the `*_error` says why."""

    agent: str | None
    step: int | None
    reason: str = ""
    raw: str = ""
    agent_error: str | None = None
    step_error: str | None = None

    @property
    def valid(self) -> bool:
        return self.agent_error is None and self.step_error is None
