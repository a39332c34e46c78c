"""The registry of models the harness serves itself (a leaf module: imports nothing of harness).

`ModelServers` (harness.models.aliases) registers each vLLM server it starts here; white-box
handles (harness.models.whitebox) and tasks read it to find the weights, and the dtype, behind a
served model name. The registry lives in the environment, so processes the harness starts
(inspect's sample workers, subprocesses) see it too.
"""

from __future__ import annotations

import json
import os

SERVED_ENV = "HARNESS_SERVED_MODELS"
SERVED_DTYPES_ENV = "HARNESS_SERVED_DTYPES"


def served_models() -> dict[str, str]:
    """Served model names (as inspect sees them) → local weight folders, for white-box access."""
    return _read(SERVED_ENV)


def served_model_dtypes() -> dict[str, str]:
    """Served model names → the dtype their server runs in (white-box handles match it)."""
    return _read(SERVED_DTYPES_ENV)


def register_served(name: str, path: str, dtype: str) -> None:
    """Record that `name` is served from the weights in `path`, computing in `dtype`."""
    for env, value in ((SERVED_ENV, path), (SERVED_DTYPES_ENV, dtype)):
        current = _read(env)
        current[name] = value
        os.environ[env] = json.dumps(current)


def _read(env: str) -> dict[str, str]:
    try:
        return dict(json.loads(os.environ.get(env, "{}")))
    except ValueError:
        return {}
