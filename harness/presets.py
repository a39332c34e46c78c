"""A task's run presets as data: `tasks/<name>/presets.yaml` (`harness eval preset=smoke|paper`).

A presets file holds, beside the task's `reference.yaml`:

    min_samples: 100          # fewer scored samples: a smoke run (= reference.yaml report.min_samples)
    smoke:                    # make run's arguments (the task's RUN_ALL_ARGS), plain values
      settings: {limit: 24, n_boot: 200}
      cost: {...}
    paper:                    # the paper's protocol; every setting traced to the paper or a deviation
      description: "..."
      settings:               # harness options and task parameters, each applied to the run
        dataset: {value: gsm8k, source: "§4.1: GSM8K test split, 1,319 questions"}
        temperature: {value: 0.0, source: "§3: greedy decoding"}
      protocol:               # what is not an option (models, baselines, seeds): traced the same way
        model: {value: "Llama-3.2-3B-Instruct", deviation: "the model under test is the user's"}
      cost: {...}

`cost` is the preset's cost model, per sample: `samples`, `calls` / `prompt_tokens` /
`output_tokens` per model role (tokens per call), `sandboxes` started per sample, and
`seconds_per_sample` of work that is no model call. Each is a number or an arithmetic expression
over the run's task parameters (`n_docs * questions_per_doc`), so a `key=value` override changes
the plan. `calibrated` says which measured run the numbers come from.

This module reads and checks the files; the command line applies them (`harness.cli.config`)
and plans a run from them (`harness.cli.plan`).
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "PRESET_FILE",
    "PRESET_NAMES",
    "CostModel",
    "Preset",
    "PresetError",
    "as_argument",
    "Setting",
    "TaskPresets",
    "evaluate",
    "load_presets",
    "preset_record",
]

PRESET_FILE = "presets.yaml"
PRESET_NAMES = ("smoke", "paper")
_COST_KEYS = (
    "samples",
    "calls",
    "prompt_tokens",
    "output_tokens",
    "sandboxes",
    "seconds_per_sample",
    "calibrated",
)
_PRESET_KEYS = ("description", "settings", "protocol", "cost")


class PresetError(ValueError):
    """A presets file is malformed (the message names the file, the preset and the key)."""


Number = float | int
Expr = Number | str  # a number, or an arithmetic expression over task parameters


@dataclass(frozen=True)
class Setting:
    """One setting of a preset: its value and where it comes from."""

    key: str
    value: Any
    source: str | None = None  # the paper's section / table
    deviation: str | None = None  # why the paper's setting is not met here
    also: tuple[Any, ...] = ()  # other values within the paper's protocol (its other datasets,
    # its baselines): choosing one of them is no deviation

    @property
    def traced(self) -> bool:
        return bool(self.source or self.deviation)


@dataclass(frozen=True)
class CostModel:
    """Model calls and work per sample, by role (see the module docstring)."""

    samples: Expr
    calls: Mapping[str, Expr]
    prompt_tokens: Mapping[str, Expr]
    output_tokens: Mapping[str, Expr]
    sandboxes: Expr = 0
    seconds_per_sample: Expr = 0.0
    calibrated: str = ""


@dataclass(frozen=True)
class Preset:
    task: str
    name: str
    description: str
    settings: tuple[Setting, ...]
    protocol: tuple[Setting, ...]
    cost: CostModel

    def values(self) -> dict[str, Any]:
        """The settings a run applies: harness options and task parameters, by name."""
        return {s.key: s.value for s in self.settings}

    def deviations(self) -> list[str]:
        """What this preset itself departs from in the paper, one line per setting."""
        return [
            f"{s.key}={_show(s.value)}: {s.deviation}"
            for s in (*self.settings, *self.protocol)
            if s.deviation
        ]


@dataclass(frozen=True)
class TaskPresets:
    task: str
    path: Path
    min_samples: int
    presets: Mapping[str, Preset] = field(default_factory=dict)

    def get(self, name: str) -> Preset:
        if name not in self.presets:
            raise PresetError(
                f"{self.path}: task '{self.task}' has no preset '{name}' "
                f"(it has: {', '.join(self.presets) or 'none'})"
            )
        return self.presets[name]


def load_presets(folder: Path, task: str | None = None) -> TaskPresets:
    """Read and check `folder/presets.yaml` (`PresetError` naming the file and key if bad)."""
    path = folder / PRESET_FILE
    task = task or folder.name
    if not path.is_file():
        raise PresetError(f"task '{task}' has no presets file ({path} does not exist)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise PresetError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise PresetError(f"{path}: expected a mapping with min_samples, smoke, paper")
    unknown = sorted(set(data) - {"min_samples", *PRESET_NAMES})
    if unknown:
        raise PresetError(f"{path}: unknown key(s) {unknown}; expected min_samples, smoke, paper")
    min_samples = data.get("min_samples")
    if not isinstance(min_samples, int) or isinstance(min_samples, bool) or min_samples < 1:
        raise PresetError(f"{path}: min_samples must be a positive integer")
    presets = {name: _preset(path, task, name, data[name]) for name in PRESET_NAMES if name in data}
    missing = [n for n in PRESET_NAMES if n not in presets]
    if missing:
        raise PresetError(f"{path}: preset(s) {missing} missing")
    return TaskPresets(task, path, min_samples, presets)


def preset_record(
    preset: Preset, given: Mapping[str, Any], applied: Mapping[str, Any]
) -> dict[str, Any]:
    """What a run records about its preset: the name, the settings it applied, the command
    line's overrides of them (each a deviation from the preset, unless the value is one the
    setting lists under `also`: another of the paper's datasets or baselines), keys it added,
    and the deviations from the paper that the preset itself carries."""
    values = preset.values()
    within = {s.key: {as_argument(a) for a in s.also} for s in preset.settings}
    overrides = {
        k: v for k, v in given.items() if k in values and as_argument(v) != as_argument(values[k])
    }
    chosen = {k: v for k, v in overrides.items() if as_argument(v) in within.get(k, ())}
    overrides = {k: v for k, v in overrides.items() if k not in chosen}
    additions = {k: v for k, v in given.items() if k not in values}
    deviations = preset.deviations() + [
        f"{k}={_show(v)} overrides preset {preset.name}'s {k}={_show(values[k])}"
        for k, v in overrides.items()
    ]
    deviations += [f"{k}={_show(v)} added to preset {preset.name}" for k, v in additions.items()]
    return {
        "name": preset.name,
        "settings": dict(applied),
        "overrides": overrides,
        "within_protocol": chosen,
        "added": additions,
        "deviations": deviations,
        "protocol_met": preset.name == "paper" and not overrides and not additions,
    }


# ----------------------------------------------------------------------------- expressions
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _count(value: Any) -> int:
    """len(); a string is a comma list (`scenarios=a,b` counts 2)."""
    if isinstance(value, str):
        return len([v for v in value.split(",") if v.strip()])
    return len(value)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "ceil": math.ceil,
    "len": _count,
}


def evaluate(expr: Expr, names: Mapping[str, Any], *, where: str = "") -> float:
    """A cost number, or an arithmetic expression over `names` (task parameters):
    + - * / // **, min(), max(), ceil(), len(), comparisons (== != < > in), and/or,
    `a if cond else b`; a comma string's `len` counts its items."""
    if isinstance(expr, bool):
        raise PresetError(f"{where}: expected a number or an expression, got {expr!r}")
    if isinstance(expr, int | float):
        return float(expr)
    try:
        tree = ast.parse(str(expr), mode="eval")
        return float(_eval(tree.body, names))
    except PresetError as exc:
        raise PresetError(f"{where}: {exc}") from None
    except (SyntaxError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise PresetError(f"{where}: cannot evaluate {expr!r}: {exc}") from None


def _eval(node: ast.expr, names: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise PresetError(f"unknown name {node.id!r} (known: {', '.join(sorted(names))})")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval(node.left, names), _eval(node.right, names))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, names)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        return _FUNCTIONS[node.func.id](*(_eval(a, names) for a in node.args))
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, names) else node.orelse, names)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        left, right = _eval(node.left, names), _eval(node.comparators[0], names)
        return _COMPARE[type(node.ops[0])](left, right)
    if isinstance(node, ast.BoolOp):
        values = [bool(_eval(v, names)) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.List | ast.Tuple):
        return [_eval(e, names) for e in node.elts]
    if isinstance(node, ast.Constant) and isinstance(node.value, str | type(None)):
        return node.value
    raise PresetError(f"unsupported expression {ast.unparse(node)!r}")


# ----------------------------------------------------------------------------- reading
def _preset(path: Path, task: str, name: str, raw: Any) -> Preset:
    where = f"{path}: {name}"
    if not isinstance(raw, dict):
        raise PresetError(f"{where}: expected a mapping with {', '.join(_PRESET_KEYS)}")
    unknown = sorted(set(raw) - set(_PRESET_KEYS))
    if unknown:
        raise PresetError(f"{where}: unknown key(s) {unknown}; expected {', '.join(_PRESET_KEYS)}")
    traced = name == "paper"  # the paper preset traces every setting
    settings = _settings(f"{where}.settings", raw.get("settings") or {}, traced)
    protocol = _settings(f"{where}.protocol", raw.get("protocol") or {}, traced)
    if "cost" not in raw:
        raise PresetError(f"{where}: cost (the cost model) is missing")
    return Preset(
        task=task,
        name=name,
        description=str(raw.get("description") or ""),
        settings=settings,
        protocol=protocol,
        cost=_cost(f"{where}.cost", raw["cost"]),
    )


def _settings(where: str, raw: Any, traced: bool) -> tuple[Setting, ...]:
    if not isinstance(raw, dict):
        raise PresetError(f"{where}: expected a mapping of name: value")
    out = []
    for key, item in raw.items():
        if isinstance(item, dict) and "value" in item:
            extra = sorted(set(item) - {"value", "source", "deviation", "also"})
            if extra:
                raise PresetError(f"{where}.{key}: unknown key(s) {extra}")
            also = item.get("also") or []
            if not isinstance(also, list):
                raise PresetError(f"{where}.{key}.also: expected a list of values")
            setting = Setting(
                str(key), item["value"], item.get("source"), item.get("deviation"), tuple(also)
            )
        else:
            setting = Setting(str(key), item)
        if traced and not setting.traced:
            raise PresetError(
                f"{where}.{key}: give the paper's section/table (source:) or why it cannot be "
                "met here (deviation:)"
            )
        out.append(setting)
    return tuple(out)


def _cost(where: str, raw: Any) -> CostModel:
    if not isinstance(raw, dict):
        raise PresetError(f"{where}: expected a mapping with {', '.join(_COST_KEYS)}")
    unknown = sorted(set(raw) - set(_COST_KEYS))
    if unknown:
        raise PresetError(f"{where}: unknown key(s) {unknown}; expected {', '.join(_COST_KEYS)}")
    for key in ("samples", "calls", "prompt_tokens", "output_tokens"):
        if key not in raw:
            raise PresetError(f"{where}.{key} is missing")
    roles = {}
    for key in ("calls", "prompt_tokens", "output_tokens"):
        value = raw[key] or {}
        if not isinstance(value, dict) or not all(_is_expr(v) for v in value.values()):
            raise PresetError(f"{where}.{key}: expected {{role: number or expression}}")
        roles[key] = {str(k): v for k, v in value.items()}
    lacking = sorted(set(roles["calls"]) - set(roles["prompt_tokens"]) & set(roles["calls"]))
    lacking += sorted(set(roles["calls"]) - set(roles["output_tokens"]))
    if lacking:
        raise PresetError(f"{where}: role(s) {sorted(set(lacking))} have calls but no token counts")
    for key in ("samples", "sandboxes", "seconds_per_sample"):
        if key in raw and not _is_expr(raw[key]):
            raise PresetError(f"{where}.{key}: expected a number or an expression")
    return CostModel(
        samples=raw["samples"],
        calls=roles["calls"],
        prompt_tokens=roles["prompt_tokens"],
        output_tokens=roles["output_tokens"],
        sandboxes=raw.get("sandboxes", 0),
        seconds_per_sample=raw.get("seconds_per_sample", 0.0),
        calibrated=str(raw.get("calibrated") or ""),
    )


def _is_expr(value: Any) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)


def as_argument(value: Any) -> str:
    """A preset's YAML value as the command line spells it (`a,b` lists, `none`, `true`)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(as_argument(v) for v in value)
    return str(value)


_show = as_argument
