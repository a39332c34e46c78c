"""Agent names compared the way Who&When's gold labels need (pure; no inspect).

One definition for the localisation scorer and for ``methods.correct``, which matches a model's
``Agent Name:`` against the team with the same key.
"""

from __future__ import annotations

import re

__all__ = ["agent_key"]

# Magentic-One logs name a turn "Orchestrator (thought)", "Orchestrator (-> WebSurfer)"...;
# the gold `mistake_agent` names the agent only ("Orchestrator"), so the suffix is not identity.
_ROLE_SUFFIX = re.compile(r"\s*\(.*\)\s*$")
_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def agent_key(name: str | None) -> str:
    """Comparison key for an agent name: role suffix dropped, case and punctuation ignored.

    "Orchestrator (thought)" -> "orchestrator"; "Verification_Expert" -> "verificationexpert";
    "WebSurfer" == "Web Surfer". Who&When compares names with a substring test, which lets
    "Expert" match every "*_Expert"; whole normalised names are compared instead.
    """
    return _NON_ALNUM.sub("", _ROLE_SUFFIX.sub("", name or "").lower())
