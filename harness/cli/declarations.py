"""What a task declares about itself for the harness, read from source (nothing is imported).

A task package's `__init__.py` (or, for a task file, the file itself; a task module's own
`ROLES` also counts) may set, as literals:

    ROLES = ("judge", "mutator", "tester")   # the model roles it asks for: role.<name>= accepted
    GENERATE = {"temperature": 0.0}          # generation defaults (the paper's protocol), applied
                                             # unless the command line sets the option
    CALLS_MODEL = {"agent": ("model",)}      # whether it sends requests to the model under test:
                                             # True (default), False, or the parameter values
                                             # under which it does; no server starts otherwise
    STRATIFY = "label"                       # a sample metadata key (or "target"): a `limit`
                                             # draws round-robin over its values (both classes)
    MIN_SAMPLES = 10                         # below this, the task's headline is not defined or
                                             # not meaningful (a `limit` under it is warned about)

Roles are declared, never guessed from how the source calls `get_model` (the tests check that
every literal `get_model(role=...)` in a task's folder is declared).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: GenerateConfig fields a task may declare a default for.
GENERATE_KEYS = ("temperature", "top_p", "top_k", "max_tokens", "seed")
NAMES = ("ROLES", "GENERATE", "CALLS_MODEL", "STRATIFY", "MIN_SAMPLES")


class DeclarationError(ValueError):
    """A declaration is not a literal of the expected shape (names the file and the name)."""


@dataclass(frozen=True)
class TaskDeclarations:
    roles: tuple[str, ...] = ()
    generate: Mapping[str, Any] = field(default_factory=dict)
    calls_model: bool | Mapping[str, tuple[Any, ...]] = True
    stratify: str | None = None
    min_samples: int | None = None

    def uses_model(self, args: Mapping[str, Any], defaults: Mapping[str, Any]) -> bool:
        """Whether a run with task arguments `args` (else `defaults`) calls the model under test."""
        if isinstance(self.calls_model, bool):
            return self.calls_model
        return any(
            args.get(name, defaults.get(name)) in values
            for name, values in self.calls_model.items()
        )


def read_declarations(*files: Path) -> TaskDeclarations:
    """The declarations in `files` (later files add roles; the first to set another name wins)."""
    found: dict[str, tuple[Any, Path]] = {}
    roles: list[str] = []
    for file in files:
        if not file.is_file():
            continue
        for name, value in _literals(file).items():
            if name == "ROLES":
                roles += [r for r in _roles(value, file) if r not in roles]
            else:
                found.setdefault(name, (value, file))
    kwargs: dict[str, Any] = {"roles": tuple(roles)}
    if "GENERATE" in found:
        kwargs["generate"] = _generate(*found["GENERATE"])
    if "CALLS_MODEL" in found:
        kwargs["calls_model"] = _calls_model(*found["CALLS_MODEL"])
    if "STRATIFY" in found:
        value, file = found["STRATIFY"]
        if value is not None and not isinstance(value, str):
            raise DeclarationError(f"{file}: STRATIFY must be a metadata key (a string) or None")
        kwargs["stratify"] = value
    if "MIN_SAMPLES" in found:
        value, file = found["MIN_SAMPLES"]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise DeclarationError(f"{file}: MIN_SAMPLES must be a positive integer")
        kwargs["min_samples"] = value
    return TaskDeclarations(**kwargs)


def _literals(file: Path) -> dict[str, Any]:
    try:
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    except (SyntaxError, UnicodeDecodeError, OSError) as exc:
        raise DeclarationError(f"{file} cannot be read as Python: {exc}") from exc
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and target.id in NAMES:
                try:
                    out[target.id] = ast.literal_eval(value)
                except ValueError:
                    raise DeclarationError(
                        f"{file}:{node.lineno}: {target.id} must be a literal"
                    ) from None
    return out


def _roles(value: Any, file: Path) -> tuple[str, ...]:
    if not isinstance(value, list | tuple | set | frozenset) or not all(
        isinstance(r, str) and r for r in value
    ):
        raise DeclarationError(f"{file}: ROLES must be a literal tuple of role names")
    return tuple(value)


def _generate(value: Any, file: Path) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(k in GENERATE_KEYS for k in value):
        raise DeclarationError(
            f"{file}: GENERATE must be a dict with keys among {', '.join(GENERATE_KEYS)}"
        )
    return dict(value)


def _calls_model(value: Any, file: Path) -> bool | dict[str, tuple[Any, ...]]:
    if isinstance(value, bool):
        return value
    if isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, list | tuple) for k, v in value.items()
    ):
        return {k: tuple(v) for k, v in value.items()}
    raise DeclarationError(
        f"{file}: CALLS_MODEL must be True, False or {{parameter: (values that call it), ...}}"
    )
