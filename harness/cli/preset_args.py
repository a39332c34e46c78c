"""`preset=smoke|paper` on the command line: a task's presets.yaml expanded into the run's
arguments (`harness.presets`), below whatever the command line states explicitly.

A preset setting that is one of the task's parameters goes to the task (as `make run` passes
`RUN_ALL_ARGS`); any other is a harness option (`limit`, `temperature`, ...), which must then be
the same for every chosen task. An explicit `key=value` wins over the preset and is recorded, with
the preset's own deviations from the paper, in the task's log metadata (`harness_preset`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.cli.discovery import TaskEntry
from harness.presets import PresetError, as_argument, load_presets, preset_record

#: options that shape where and how a run executes, not what it measures: giving them on the
#: command line is no departure from a preset's protocol.
NEUTRAL_OPTIONS = frozenset(
    {
        "task",
        "preset",
        "model",
        "backend",
        "log_dir",
        "display",
        "max_connections",
        "max_samples",
        "retry_attempts",
        "fail_on_error",
        "ctl_server",
        "log_realtime",
        "dry_run",
    }
)


class PresetArgsError(ValueError):
    """A preset cannot be applied (the message names the task, the preset and the key)."""


@dataclass
class ExpandedPreset:
    """The command line's pairs with the preset's harness options added, the preset's task
    arguments per task (raw, converted by the caller), and the record each task's log keeps."""

    pairs: list[tuple[str, str]]
    task_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)


def expand_preset(
    pairs: list[tuple[str, str]],
    preset: str,
    chosen: list[str],
    tasks: Mapping[str, TaskEntry],
    option_names: set[str],
) -> ExpandedPreset:
    """Apply `preset` to each chosen task: see the module docstring."""
    given = {k: v for k, v in pairs}
    options: dict[str, dict[str, Any]] = {}  # harness option -> {task: value}
    expanded = ExpandedPreset(list(pairs))
    for name in chosen:
        entry = tasks[name]
        if entry.source is None:
            raise PresetArgsError(f"preset={preset}: task '{name}' has no folder with presets.yaml")
        try:
            chosen_preset = load_presets(entry.source.parent, name).get(preset)
        except PresetError as exc:
            raise PresetArgsError(str(exc)) from None
        params = entry.params
        task_args: dict[str, Any] = {}
        for key, value in chosen_preset.values().items():
            if key in params:
                task_args[key] = value
            elif key in option_names:
                options.setdefault(key, {})[name] = value
            else:
                raise PresetArgsError(
                    f"{chosen_preset.task}'s preset {preset} sets '{key}', which is neither a "
                    f"parameter of the task nor a harness option"
                )
        expanded.task_args[name] = {k: v for k, v in task_args.items() if k not in given}
        departures = {k: v for k, v in given.items() if not _neutral(k)}
        applied = {k: v for k, v in chosen_preset.values().items() if k not in given}
        expanded.records[name] = preset_record(chosen_preset, departures, applied)
    for key, per_task in options.items():
        if key in given:
            continue
        values = {repr(v) for v in per_task.values()}
        if len(values) > 1 or len(per_task) < len(chosen):
            shown = ", ".join(f"{t}: {v!r}" for t, v in per_task.items())
            raise PresetArgsError(
                f"preset={preset} sets the harness option {key}= differently per task ({shown}); "
                f"run these tasks one per command, or give {key}= explicitly"
            )
        expanded.pairs.append((key, as_argument(next(iter(per_task.values())))))
    return expanded


def _neutral(key: str) -> bool:
    return key in NEUTRAL_OPTIONS or key.startswith(("role.", "model_arg."))
