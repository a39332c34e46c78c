"""What a run does with a task's declarations (harness.cli.declarations) once the task is built.

- generation defaults (`GENERATE`): set on the task's own config, below whatever the command line
  gives (inspect merges the eval's options over the task's), and recorded per task in the log's
  metadata as `harness_generate` (each value with where it came from);
- a small `limit` (`STRATIFY`): the task's samples drawn in turn over the declared key's values,
  in dataset order, so `limit=2` holds both classes (or a planted fault); where nothing can be
  drawn (`MIN_SAMPLES`), one warning line;
- whether any chosen task calls the model under test (`CALLS_MODEL`): no model server otherwise,
  nor for a `role.<name>=` of tasks that call no model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from harness.cli.config import EvalConfig
from harness.cli.discovery import TaskEntry


def calls_model(
    config: EvalConfig, tasks: Mapping[str, TaskEntry], task_args: Mapping[str, dict[str, Any]]
) -> bool:
    """Whether any chosen task sends requests to the model under test."""
    return any(_task_calls(tasks[name], task_args.get(name, {})) for name in config.task)


def unused_roles(
    config: EvalConfig, tasks: Mapping[str, TaskEntry], task_args: Mapping[str, dict[str, Any]]
) -> dict[str, list[str]]:
    """The given `role.<name>=` that no chosen task will call, each with the tasks declaring it.

    A task that calls no model with its arguments (`CALLS_MODEL`: agent_stress's scripted agent)
    calls none of its roles either; a role no server is started for.
    """
    unused: dict[str, list[str]] = {}
    for role in config.role:
        declaring = [n for n in config.task if role in tasks[n].roles]
        if declaring and not any(_task_calls(tasks[n], task_args.get(n, {})) for n in declaring):
            unused[role] = declaring
    return unused


def _task_calls(entry: TaskEntry, args: Mapping[str, Any]) -> bool:
    defaults = {p.name: p.default for p in entry.params.values()}
    return entry.declarations.uses_model(args, defaults)


def apply_generate_defaults(config: EvalConfig, entry: TaskEntry, built: Any) -> dict[str, Any]:
    """Set the task's declared generation defaults on `built.config`; the record for the log."""
    from inspect_ai.model import GenerateConfig

    record: dict[str, Any] = {}
    declared = dict(entry.declarations.generate)
    own = built.config.model_dump(exclude_none=True) if built.config is not None else {}
    for key, value in declared.items():
        given = getattr(config, key, None)
        if given is not None:
            record[key] = {"value": given, "from": "command line"}
        elif key in own:
            record[key] = {"value": own[key], "from": "task config"}
        else:
            record[key] = {"value": value, "from": "task declaration (GENERATE)"}
    defaults = {k: v for k, v in declared.items() if k not in own}
    if defaults:
        built.config = GenerateConfig(**defaults).merge(built.config or GenerateConfig())
    for key in ("temperature", "max_tokens", "top_p", "seed"):
        given = getattr(config, key, None)
        if given is not None and key not in record:
            record[key] = {"value": given, "from": "command line"}
    return record


def draw_small_limit(
    config: EvalConfig, entry: TaskEntry, built: Any, warn: Callable[[str], None]
) -> dict[str, Any] | None:
    """With `limit=N`: the stratified draw (its record) or a warning; None when nothing applies."""
    limit = config.limit
    if limit is None:
        return None
    declared = entry.declarations
    if declared.stratify:
        samples = list(built.dataset)
        if len(samples) <= limit:
            return None
        chosen = _round_robin(samples, declared.stratify, limit)
        from inspect_ai.dataset import MemoryDataset

        built.dataset = MemoryDataset(
            [samples[i] for i in chosen],
            name=getattr(built.dataset, "name", None),
            location=getattr(built.dataset, "location", None),
            shuffled=getattr(built.dataset, "shuffled", False),
        )
        values = sorted({str(_value(samples[i], declared.stratify)) for i in chosen})
        return {"limit": limit, "stratified_by": declared.stratify, "values": values}
    if declared.min_samples is not None and limit < declared.min_samples:
        warn(
            f"{entry.name}: limit={limit} is below the {declared.min_samples} samples its "
            "headline needs to be defined (see `harness list "
            f"{entry.name}`); expect NaN or meaningless numbers"
        )
    return None


def _value(sample: Any, key: str) -> Any:
    if key == "target":
        return sample.target if isinstance(sample.target, str) else tuple(sample.target)
    return (sample.metadata or {}).get(key)


def _round_robin(samples: list[Any], key: str, n: int) -> list[int]:
    """Indices of `n` samples taken one per value in turn (values in order of appearance)."""
    groups: dict[Any, list[int]] = {}
    for i, sample in enumerate(samples):
        groups.setdefault(_value(sample, key), []).append(i)
    queues = [list(g) for g in groups.values()]
    chosen: list[int] = []
    while len(chosen) < n and any(queues):
        for queue in queues:
            if queue and len(chosen) < n:
                chosen.append(queue.pop(0))
    return sorted(chosen)
