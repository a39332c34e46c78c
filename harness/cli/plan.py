"""`harness plan` (and `harness eval … dry_run=on`): what a run would do and how long it would take.

Without starting a model: per task, the samples, model calls per role, prompt and output tokens,
sandboxes started, from the preset's cost model (`tasks/<name>/presets.yaml`, evaluated over the
run's task parameters, so `key=value` overrides change the plan). The wall time comes from a
throughput, in this order: `tokens_per_s=` as the user states it; `probe=on`, a few seconds of
requests to the chosen back-end (this starts it); the most recent log in `log_dir` of the same
model (a run of the same task and preset preferred: its seconds per sample). Without any of
them the plan says how to get one.

Work time = seconds_per_sample × samples (the cost model's measured non-model work at the
task's own concurrency) + output tokens / tokens_per_s + prompt tokens / prefill_per_s
(`prefill_per_s` defaults to PREFILL_RATIO × tokens_per_s unless measured or stated).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.cli.config import CONFIG_FIELDS, ConfigError, _auto, clip, parse_overrides, suggest
from harness.cli.discovery import SourceDefault, TaskEntry, discover_tasks
from harness.presets import PRESET_NAMES, CostModel, PresetError, evaluate, load_presets

#: prefill tokens per decode token's time when no probe measured it (stated in the output).
PREFILL_RATIO = 8.0
#: plan-only options (everything else is an eval option or a task parameter)
PLAN_OPTIONS = ("probe", "tokens_per_s", "prefill_per_s")
#: a started vLLM server for model=default (README, make run: 36 s); in-process load: a few s.
STARTUP_S = {"vllm": 40.0, "transformers": 5.0, "remote": 0.0}


@dataclass
class Throughput:
    """Model throughput at the run's concurrency (aggregate over concurrent requests)."""

    tokens_per_s: float  # output tokens
    prefill_per_s: float  # prompt tokens
    source: str
    seconds_per_sample: float | None = None  # a log of the same task and preset: wall/sample


@dataclass
class TaskPlan:
    task: str
    preset: str
    model: str
    samples: int
    calls: dict[str, float]
    prompt_tokens: dict[str, float]
    output_tokens: dict[str, float]
    sandboxes: float
    seconds_per_sample: float
    calibrated: str
    overrides: dict[str, Any] = field(default_factory=dict)
    est_seconds: float | None = None
    time_source: str = ""

    @property
    def total_calls(self) -> float:
        return sum(self.calls.values())

    @property
    def total_prompt(self) -> float:
        return sum(self.prompt_tokens.values())

    @property
    def total_output(self) -> float:
        return sum(self.output_tokens.values())


def plan_task(
    entry: TaskEntry, preset_name: str, overrides: Mapping[str, Any], model: str
) -> TaskPlan:
    """The plan of one task from its preset's cost model (nothing is imported or started)."""
    if entry.source is None:
        raise ConfigError(f"task '{entry.name}' has no folder, so no presets.yaml to plan from")
    try:
        preset = load_presets(entry.source.parent, entry.name).get(preset_name)
    except PresetError as exc:
        raise ConfigError(str(exc)) from None
    names: dict[str, Any] = {
        name: p.default
        for name, p in entry.signature.parameters.items()
        if p.default is not p.empty and not isinstance(p.default, SourceDefault)
    }
    names.update(preset.values())
    names.update(overrides)
    cost = preset.cost
    where = f"{entry.name} preset {preset_name} cost"
    samples = evaluate(cost.samples, names, where=f"{where}.samples")
    if names.get("limit") is not None:
        samples = min(samples, float(names["limit"]))
    samples = int(samples) * int(names.get("epochs") or 1)
    calls, prompt, output = _per_role(cost, names, samples, where)
    return TaskPlan(
        task=entry.name,
        preset=preset_name,
        model=model,
        samples=samples,
        calls=calls,
        prompt_tokens=prompt,
        output_tokens=output,
        sandboxes=samples * evaluate(cost.sandboxes, names, where=f"{where}.sandboxes"),
        seconds_per_sample=evaluate(
            cost.seconds_per_sample, names, where=f"{where}.seconds_per_sample"
        ),
        calibrated=cost.calibrated,
        overrides=dict(overrides),
    )


def _per_role(
    cost: CostModel, names: Mapping[str, Any], samples: int, where: str
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    calls: dict[str, float] = {}
    prompt: dict[str, float] = {}
    output: dict[str, float] = {}
    for role, expr in cost.calls.items():
        n = samples * evaluate(expr, names, where=f"{where}.calls.{role}")
        if n <= 0:
            continue
        calls[role] = n
        prompt[role] = n * evaluate(cost.prompt_tokens[role], names, where=f"{where}.{role}")
        output[role] = n * evaluate(cost.output_tokens[role], names, where=f"{where}.{role}")
    return calls, prompt, output


def estimate_seconds(plan: TaskPlan, throughput: Throughput | None, backend: str) -> None:
    """Fill `plan.est_seconds` and `plan.time_source` from a throughput (or say there is none)."""
    if throughput is None:
        plan.time_source = "no throughput: give tokens_per_s=, probe=on, or a log_dir with a run"
        return
    if throughput.seconds_per_sample is not None:  # a log of the same task and preset
        plan.est_seconds = plan.samples * throughput.seconds_per_sample
        plan.time_source = throughput.source
        return
    model_s = plan.total_output / throughput.tokens_per_s
    model_s += plan.total_prompt / throughput.prefill_per_s
    start = STARTUP_S["vllm" if backend == "vllm" else "transformers"]
    if plan.model not in ("default", "default-hf", "default-vlm", "embedded"):
        start = STARTUP_S["remote"]
    plan.est_seconds = start + plan.samples * plan.seconds_per_sample + model_s
    plan.time_source = throughput.source


# ----------------------------------------------------------------------------- throughput
@dataclass
class LogMeasure:
    """What a finished log says about cost: samples, calls and tokens per role, wall time."""

    path: str
    task: str
    model: str
    model_spec: str | None
    samples: int
    calls: dict[str, int]
    prompt_tokens: dict[str, int]
    output_tokens: dict[str, int]
    wall_s: float

    @property
    def work_tokens(self) -> float:
        return sum(self.output_tokens.values()) + sum(self.prompt_tokens.values()) / PREFILL_RATIO


def _span(started: str | None, completed: str | None) -> float:
    """Seconds from one ISO time to another; 0 when either is missing."""
    from datetime import datetime

    if not (started and completed):
        return 0.0
    return (datetime.fromisoformat(completed) - datetime.fromisoformat(started)).total_seconds()


def measure_log(path: str | Path) -> LogMeasure:
    """Read a log's samples: model calls and tokens per role (`model` for the model under
    test) from its model events, and the eval's wall time."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ModelOutput

    log = read_eval_log(str(path))
    calls: dict[str, int] = {}
    prompt: dict[str, int] = {}
    output: dict[str, int] = {}
    for sample in log.samples or []:
        for event in sample.events:
            if not isinstance(event, ModelEvent):
                continue
            role = event.role or "model"
            calls[role] = calls.get(role, 0) + 1
            usage = event.output.usage if isinstance(event.output, ModelOutput) else None
            if usage is not None:
                prompt[role] = prompt.get(role, 0) + usage.input_tokens
                output[role] = output.get(role, 0) + usage.output_tokens
    wall = max(
        _span(log.stats.started_at, log.stats.completed_at),
        # the eval's times are whole seconds: a sub-second run reads 0 there; its samples' are not
        _span(
            min((s.started_at for s in log.samples or [] if s.started_at), default=None),
            max((s.completed_at for s in log.samples or [] if s.completed_at), default=None),
        ),
    )
    meta = log.eval.metadata or {}
    return LogMeasure(
        path=str(path),
        task=log.eval.task.split("/")[-1],
        model=log.eval.model,
        model_spec=meta.get("harness_model_spec"),
        samples=len(log.samples or []),
        calls=calls,
        prompt_tokens=prompt,
        output_tokens=output,
        wall_s=wall,
    )


def throughput_from_logs(log_dir: Path, task: str, model: str, preset: str) -> Throughput | None:
    """The most recent successful log in `log_dir` (recursively) of `model`: the seconds per
    sample of a run of the same task and preset when there is one, else the tokens per second
    of the latest run of the model (its work tokens over its wall time, overheads included)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    if not log_dir.is_dir():
        return None
    candidates = []
    for info in list_eval_logs(str(log_dir), recursive=True):
        header = read_eval_log(info, header_only=True)
        spec = (header.eval.metadata or {}).get("harness_model_spec")
        if header.status != "success" or model not in (spec, header.eval.model):
            continue
        meta = header.eval.metadata or {}
        same = header.eval.task.split("/")[-1] == task
        same = same and meta.get("harness_preset_name") == preset
        candidates.append((same, header.stats.completed_at, info))
    if not candidates:
        return None
    same_task, _, info = max(candidates, key=lambda c: (c[0], c[1]))
    measured = measure_log(info.name)
    if measured.wall_s <= 0 or measured.samples == 0:
        return None
    name = Path(info.name).name
    if same_task:
        return Throughput(
            tokens_per_s=0.0,
            prefill_per_s=0.0,
            source=f"{task} {preset} log {name}: {measured.wall_s / measured.samples:.2f} s/sample",
            seconds_per_sample=measured.wall_s / measured.samples,
        )
    rate = measured.work_tokens / measured.wall_s
    if rate <= 0:
        return None
    return Throughput(rate, rate * PREFILL_RATIO, f"log {name} ({measured.task}): {rate:.1f} tok/s")


def probe_throughput(
    model: str, backend: str, prompt_tokens: int = 200, concurrency: int = 4
) -> Throughput:
    """Measure the back-end for a few seconds: `concurrency` requests of about `prompt_tokens`
    prompt tokens (the plan's mean per call: decoding slows as the context grows), once with 1
    output token (prefill) and once with 48 (decode); starts the model."""
    import asyncio

    from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

    from harness.models.aliases import ModelServers, resolve_model

    sentence = "Count the words in this sentence and explain each step briefly. "  # ~12 tokens
    prompt = sentence * max(1, prompt_tokens // 12)
    with ModelServers() as servers:
        prepared = servers.prepare(resolve_model(model, backend))  # type: ignore[arg-type]
        args = dict(prepared.args)
        if "base_url" in args and prepared.name.startswith("vllm/"):
            import os

            os.environ["VLLM_BASE_URL"] = args.pop("base_url")
        handle = get_model(prepared.name, **args)

        async def batch(max_tokens: int) -> tuple[float, int, int]:
            config = GenerateConfig(max_tokens=max_tokens, temperature=0.0)
            started = time.monotonic()
            outs = await asyncio.gather(
                *(
                    handle.generate([ChatMessageUser(content=f"{i}. {prompt}")], config=config)
                    for i in range(concurrency)
                )
            )
            took = time.monotonic() - started
            usage = [o.usage for o in outs if o.usage is not None]
            return took, sum(u.input_tokens for u in usage), sum(u.output_tokens for u in usage)

        asyncio.run(batch(2))  # warm-up (first request compiles / loads)
        pre_s, pre_in, _ = asyncio.run(batch(1))
        dec_s, _, dec_out = asyncio.run(batch(48))
    prefill = pre_in / max(pre_s, 1e-6)
    decode = dec_out / max(dec_s - pre_s, 1e-6)
    return Throughput(
        decode,
        prefill,
        f"probe of {model} ({backend}, {concurrency} concurrent, ~{prompt_tokens} prompt "
        "tokens): "
        f"{decode:.1f} tok/s out, {prefill:.0f} tok/s prompt",
    )


# ----------------------------------------------------------------------------- command
def cmd_plan(args: list[str], console: Console) -> int:
    """`harness plan task=a[,b] preset=smoke|paper [model=..] [backend=..] [log_dir=..]
    [probe=on] [tokens_per_s=N] [prefill_per_s=N] [key=value ...]`."""
    plans, throughput_note = make_plans(args)
    print_plans(console, plans, throughput_note)
    return 0


def make_plans(args: list[str]) -> tuple[list[TaskPlan], str]:
    pairs = [(k, v) for k, v in parse_overrides(args) if k != "dry_run"]
    options = dict(pairs)
    registry = discover_tasks()
    names = [n.strip() for n in options.get("task", "").split(",") if n.strip()]
    if names == ["all"]:
        names = sorted(registry.tasks)
    if not names:
        raise ConfigError(f"task=<name> is required; known tasks: {', '.join(registry.tasks)}")
    preset = options.get("preset")
    if preset not in PRESET_NAMES:
        raise ConfigError(
            f"preset={clip(str(preset or ''))!r}: plan needs preset=smoke or preset=paper "
            "(the cost model is the preset's)"
        )
    models = [m.strip() for m in options.get("model", "default").split(",") if m.strip()]
    backend = options.get("backend", "vllm")
    entries: list[TaskEntry] = []
    for name in names:
        if name not in registry.tasks:
            raise ConfigError(
                f"unknown task '{clip(name)}'{suggest(name, list(registry.tasks))}; "
                f"known: {', '.join(registry.tasks)}"
            )
        entries.append(registry.tasks[name])
    sweeps = {k[len("grid.") :]: v.split(",") for k, v in pairs if k.startswith("grid.")}
    overrides = _overrides([(k, v) for k, v in pairs if not k.startswith("grid.")], entries)
    combos = [dict(zip(sweeps, values, strict=True)) for values in product(*sweeps.values())]
    stated = _stated_throughput(options)
    probing = options.get("probe", "off").lower() in ("on", "true", "1", "yes")
    if probing and len(models) > 1 and stated is None:
        raise ConfigError("probe=on measures one model: plan the models of a sweep in turn")
    plans = [  # a sweep (model=a,b, grid.<key>=v1,v2): one plan per cell, its own time
        plan_task(entry, preset, _cell(overrides, combo, entry), model)
        for model in models
        for entry in entries
        for combo in combos
    ]
    probed: Throughput | None = None
    if probing and stated is None:
        calls = sum(p.total_calls for p in plans)
        mean_prompt = int(sum(p.total_prompt for p in plans) / calls) if calls else 200
        concurrency = max(1, min(4, max(p.samples for p in plans)))
        probed = probe_throughput(models[0], backend, mean_prompt or 200, concurrency)
    for plan in plans:
        throughput = stated or probed
        if throughput is None:
            log_dir = Path(options.get("log_dir", "logs"))
            throughput = throughput_from_logs(log_dir, plan.task, plan.model, preset)
        estimate_seconds(plan, throughput, backend)
    note = ""
    if probed is None and "prefill_per_s" not in options:
        note = f"prompt tokens counted {PREFILL_RATIO:g}x faster than output tokens"
    return plans, note


def _stated_throughput(options: Mapping[str, str]) -> Throughput | None:
    if "tokens_per_s" not in options:
        if "prefill_per_s" in options:
            raise ConfigError("prefill_per_s= needs tokens_per_s= (output tokens per second)")
        return None
    try:
        rate = float(options["tokens_per_s"])
        prefill = float(options.get("prefill_per_s", rate * PREFILL_RATIO))
    except ValueError:
        raise ConfigError("tokens_per_s= and prefill_per_s= take numbers") from None
    if rate <= 0 or prefill <= 0:
        raise ConfigError("tokens_per_s= and prefill_per_s= must be positive")
    return Throughput(rate, prefill, f"stated: {rate:g} tok/s out, {prefill:g} tok/s prompt")


def _cell(overrides: dict[str, Any], combo: dict[str, str], entry: TaskEntry) -> dict[str, Any]:
    """One grid cell's overrides for `entry` (a swept key applies to the tasks that take it)."""
    cell = {**overrides, **_overrides(list(combo.items()), [entry], check=False)}
    return {k: v for k, v in cell.items() if _takes(entry, k)}


def _overrides(
    pairs: list[tuple[str, str]], entries: list[TaskEntry], *, check: bool = True
) -> dict[str, Any]:
    """Task parameters and run-shaping options (limit, epochs) from the command line."""
    skip = {"task", "preset", "model", "backend", "log_dir", *PLAN_OPTIONS}
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in skip or key.startswith(("role.", "model_arg.")):
            continue
        if check and key not in CONFIG_FIELDS and not any(_takes(e, key) for e in entries):
            known = [*CONFIG_FIELDS, *PLAN_OPTIONS]
            known += [p for e in entries for p in e.signature.parameters]
            raise ConfigError(
                f"unknown key '{clip(key)}'{suggest(key, known)}: not a harness option and not "
                f"a parameter of task(s) {', '.join(e.name for e in entries)}"
            )
        out[key] = None if value.strip().lower() in ("none", "null") else _auto(value.strip())
    return out


def _takes(entry: TaskEntry, key: str) -> bool:
    return key in CONFIG_FIELDS or key in entry.signature.parameters


def print_plans(console: Console, plans: list[TaskPlan], note: str) -> None:
    several = len({p.model for p in plans}) > 1
    table = Table(title="plan (no model started)", padding=(0, 1))
    for column in ("task", "preset", "samples", "calls by role", "prompt tok", "output tok"):
        table.add_column(column, justify="left" if column in ("task", "preset") else "right")
    table.add_column("sandboxes", justify="right")
    table.add_column("est. wall", justify="right")
    for p in plans:
        roles = ", ".join(f"{r} {_n(n)}" for r, n in p.calls.items()) or "none"
        table.add_row(
            f"{p.task} ({p.model})" if several else p.task,
            p.preset,
            _n(p.samples),
            roles,
            _n(p.total_prompt),
            _n(p.total_output),
            _n(p.sandboxes),
            _duration(p.est_seconds),
        )
    console.print(table)
    timed = [p for p in plans if p.est_seconds is not None]
    if timed:
        total = sum(p.est_seconds or 0 for p in timed)
        console.print(f"estimated wall time: {_duration(total)}" + (f" ({note})" if note else ""))
        sources = {p.time_source for p in timed}
        for p in timed if len(sources) > 1 else timed[:1]:
            console.print(f"  {p.task if len(sources) > 1 else 'throughput'}: {p.time_source}")
    if len(timed) < len(plans):
        missing = ", ".join(p.task for p in plans if p.est_seconds is None)
        console.print(
            f"no wall time for {missing}: give tokens_per_s=, probe=on, or log_dir= with a "
            "finished run of this model"
        )
    for p in plans:
        if p.overrides:
            shown = ", ".join(f"{k}={v}" for k, v in p.overrides.items())
            console.print(f"  {p.task}: overrides of preset {p.preset}: {shown}")


def _n(value: float) -> str:
    """A count in a few characters: 950, 12.3k, 4.67M."""
    if value < 10_000:
        return f"{value:,.0f}"
    if value < 1_000_000:
        return f"{value / 1000:.1f}k"
    return f"{value / 1_000_000:.2f}M"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
