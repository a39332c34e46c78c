"""Leaderboard schemas: which metrics a task's leaderboard shows and how, described as data.

A schema is a YAML file ``tasks/<task>/leaderboard.yaml`` next to the task (format in
``reports/README.md``), read as data like ``reference.yaml``: reports never imports a task. Tasks
without one get :func:`generic_schema`, which lists every metric the logs hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from ._taskfiles import task_dirs

SCHEMA_FILE = "leaderboard.yaml"

IntervalKind = Literal["auto", "mean", "binary", "auroc", "aupr", "macro_mean", "none"]
_INTERVAL_KINDS = ("auto", "mean", "binary", "auroc", "aupr", "macro_mean", "none")
_DIRECTIONS = ("higher", "lower", "none")
_FORMATS = ("percent", "float", "int")
# Method labels come from the first of these task arguments present in a run.
DEFAULT_METHOD_ARGS = ("method", "detector", "auditor", "validator", "baseline")


class SchemaError(ValueError):
    """A leaderboard schema file is malformed (the message names the file and the field)."""


@dataclass(frozen=True)
class IntervalSpec:
    """Where a metric's per-sample values live and which interval/paired test fits them.

    Paths (see README): ``score.<scorer>.value[.<key>]``, ``score.<scorer>.metadata.<key>``,
    ``metadata.<key>``; ``{scorer}`` is replaced by the metric's scorer name.
    """

    kind: IntervalKind = "none"
    value: str | None = None  # mean / binary / macro_mean
    score: str | None = None  # auroc / aupr: the detector score (higher = more positive)
    label: str | None = None  # auroc / aupr: 1 = positive class
    group: str | None = None  # macro_mean: the subgroup field
    where: str | None = None  # "<path>=<value>": only samples whose field equals value


@dataclass(frozen=True)
class MetricSpec:
    id: str
    key: str  # "<scorer>/<metric>" in the log's results; "*" matches any scorer
    display: str
    direction: Literal["higher", "lower", "none"] = "higher"
    headline: bool = False
    format: Literal["percent", "float", "int"] = "float"
    description: str = ""
    reference_metric: str | None = None  # the metric's name in reference.yaml (default: id)
    interval: IntervalSpec = field(default_factory=IntervalSpec)
    from_schema: bool = True  # False: found in a log, not described by the schema
    alternatives: tuple[str, ...] = ()  # further keys tried in order when ``key`` is absent

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key, *self.alternatives)

    @property
    def scorer_pattern(self) -> str:
        return self.key.split("/", 1)[0] if "/" in self.key else "*"

    @property
    def metric_name(self) -> str:
        return self.key.split("/", 1)[1] if "/" in self.key else self.key


@dataclass(frozen=True)
class PlotSpec:
    kind: Literal["bars", "roc", "score_drop"]
    metric: str | None = None  # bars / roc: a metric id
    before: str | None = None  # score_drop: metric id (or per-sample path) before
    after: str | None = None  # score_drop: metric id (or per-sample path) after
    group: str | None = None  # score_drop: per-sample path naming the system whose score drops
    title: str = ""


@dataclass(frozen=True)
class LeaderboardSchema:
    task: str
    title: str
    description: str = ""
    method_args: tuple[str, ...] = DEFAULT_METHOD_ARGS
    methods_from_scorers: bool = False  # each scorer in a log is its own method row
    baseline_method: str | None = None
    failure_keys: tuple[str, ...] = ("failure",)  # score metadata keys marking a model failure
    metrics: tuple[MetricSpec, ...] = ()
    plots: tuple[PlotSpec, ...] = ()
    # Per-sample path (e.g. "metadata.subset"): each run also gets one row per distinct value.
    split_rows_by: str | None = None
    source: str = "generic"  # the schema file, or "generic"

    @property
    def headline(self) -> MetricSpec | None:
        return headline_of(self.metrics)


def _req(d: dict[str, Any], key: str, where: str) -> Any:
    if key not in d:
        raise SchemaError(f"{where}: missing required field '{key}'")
    return d[key]


def _mapping(raw: Any, known: set[str], where: str, what: str) -> dict[str, Any]:
    """`raw` as a mapping of `what`'s fields; anything else, or an unknown field (a typo that
    would otherwise be ignored), is an error naming the place."""
    if not isinstance(raw, dict):
        raise SchemaError(f"{where}: the {what} must be a mapping, got {type(raw).__name__}")
    unknown = set(raw) - known
    if unknown:
        raise SchemaError(f"{where}: unknown {what} field(s) {sorted(unknown)}")
    return raw


def _choice(value: Any, options: tuple[str, ...], where: str) -> str:
    if value not in options:
        raise SchemaError(f"{where}: {value!r} is not one of {', '.join(options)}")
    return str(value)


def _parse_interval(raw: Any, where: str) -> IntervalSpec:
    if raw is None:
        return IntervalSpec()
    raw = _mapping(raw, {"kind", "value", "score", "label", "group", "where"}, where, "interval")
    kind = _choice(raw.get("kind", "auto"), _INTERVAL_KINDS, f"{where}.interval.kind")
    spec = IntervalSpec(
        kind=kind,  # type: ignore[arg-type]
        value=raw.get("value"),
        score=raw.get("score"),
        label=raw.get("label"),
        group=raw.get("group"),
        where=raw.get("where"),
    )
    if spec.where is not None and "=" not in str(spec.where):
        raise SchemaError(f"{where}.interval.where: expected '<path>=<value>', got {spec.where!r}")
    if kind in ("auto", "mean", "binary", "macro_mean") and not spec.value:
        raise SchemaError(f"{where}.interval: kind '{kind}' needs 'value' (a per-sample path)")
    if kind in ("auroc", "aupr") and not (spec.score and spec.label):
        raise SchemaError(f"{where}.interval: kind '{kind}' needs 'score' and 'label' paths")
    if kind == "macro_mean" and not spec.group:
        raise SchemaError(f"{where}.interval: kind 'macro_mean' needs 'group' (a per-sample path)")
    return spec


_METRIC_FIELDS = {
    "id",
    "key",
    "display",
    "direction",
    "headline",
    "format",
    "description",
    "reference_metric",
    "interval",
}


def _parse_metric(raw: Any, where: str) -> MetricSpec:
    raw = _mapping(raw, _METRIC_FIELDS, where, "metric")
    mid = str(_req(raw, "id", where))
    raw_key = _req(raw, "key", where)
    keys = [str(k) for k in raw_key] if isinstance(raw_key, list) else [str(raw_key)]
    if not keys:
        raise SchemaError(f"{where}: 'key' is an empty list")
    return MetricSpec(
        id=mid,
        key=keys[0],
        alternatives=tuple(keys[1:]),
        display=str(raw.get("display", mid)),
        direction=_choice(raw.get("direction", "higher"), _DIRECTIONS, f"{where}.direction"),  # type: ignore[arg-type]
        headline=bool(raw.get("headline", False)),
        format=_choice(raw.get("format", "float"), _FORMATS, f"{where}.format"),  # type: ignore[arg-type]
        description=str(raw.get("description", "")),
        reference_metric=raw.get("reference_metric"),
        interval=_parse_interval(raw.get("interval"), f"{where}"),
    )


_SAMPLE_PATH_HINT = "metadata.<key>, score.<scorer>.<field>[.<key>], target or id"


def _parse_split(raw: Any, where: str) -> str | None:
    """``split_rows_by``: a per-sample path naming the field whose values partition a run."""
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise SchemaError(
            f"{where}: 'split_rows_by' must be a per-sample path ({_SAMPLE_PATH_HINT}), got {raw!r}"
        )
    path = raw.strip()
    parts = path.split(".")
    # The same shapes `_samples.lookup` accepts; checked here so a typo fails at load time
    # instead of silently putting every sample into the "(none)" part.
    ok = (
        (
            (parts[0] == "metadata" and len(parts) >= 2)
            or (parts[0] == "score" and len(parts) >= 3)
            or (parts[0] in ("target", "id") and len(parts) == 1)
        )
        and all(parts)
        and "{method}" not in path
    )
    if not ok:
        raise SchemaError(
            f"{where}: 'split_rows_by' {raw!r} is not a per-sample path; expected "
            f"{_SAMPLE_PATH_HINT} (e.g. 'metadata.subset')"
        )
    return path


def _parse_plot(raw: Any, where: str, metric_ids: set[str]) -> PlotSpec:
    raw = _mapping(raw, {"kind", "metric", "before", "after", "group", "title"}, where, "plot")
    kind = _choice(raw.get("kind"), ("bars", "roc", "score_drop"), f"{where}.kind")
    plot = PlotSpec(
        kind=kind,  # type: ignore[arg-type]
        metric=raw.get("metric"),
        before=raw.get("before"),
        after=raw.get("after"),
        group=raw.get("group"),
        title=str(raw.get("title", "")),
    )
    if kind in ("bars", "roc") and plot.metric not in metric_ids:
        raise SchemaError(f"{where}: plot metric {plot.metric!r} is not a metric id of the schema")
    if kind == "score_drop" and not (plot.before and plot.after):
        raise SchemaError(f"{where}: score_drop needs 'before' and 'after'")
    return plot


def parse_schema(data: Any, source: str) -> LeaderboardSchema:
    """Build a schema from parsed YAML; errors name ``source`` and the offending field."""
    known = {
        "task",
        "title",
        "description",
        "method_args",
        "methods_from_scorers",
        "baseline_method",
        "failure_keys",
        "metrics",
        "plots",
        "split_rows_by",
    }
    data = _mapping(data, known, source, "schema")
    task = str(_req(data, "task", source))
    raw_metrics = data.get("metrics") or []
    if not isinstance(raw_metrics, list):
        raise SchemaError(f"{source}: 'metrics' must be a list")
    metrics = tuple(_parse_metric(m, f"{source}: metrics[{i}]") for i, m in enumerate(raw_metrics))
    ids = [m.id for m in metrics]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise SchemaError(f"{source}: duplicate metric id(s) {dupes}")
    plots = tuple(
        _parse_plot(p, f"{source}: plots[{i}]", set(ids))
        for i, p in enumerate(data.get("plots") or [])
    )
    return LeaderboardSchema(
        task=task,
        title=str(data.get("title", task)),
        description=str(data.get("description", "")),
        method_args=tuple(data.get("method_args") or DEFAULT_METHOD_ARGS),
        methods_from_scorers=bool(data.get("methods_from_scorers", False)),
        baseline_method=data.get("baseline_method"),
        failure_keys=tuple(data.get("failure_keys") or ("failure",)),
        metrics=metrics,
        plots=plots,
        split_rows_by=_parse_split(data.get("split_rows_by"), source),
        source=source,
    )


def schema_paths() -> dict[str, Path]:
    """Every task's packaged schema: task name → ``tasks/<task>/leaderboard.yaml``."""
    found: dict[str, Path] = {}
    for base in task_dirs():
        for path in sorted(base.glob(f"*/{SCHEMA_FILE}")):
            found.setdefault(path.parent.name, path)
    return found


def load_schema(task: str, schema_dir: Path | None = None) -> LeaderboardSchema | None:
    """The schema for ``task``: ``schema_dir/<task>.yaml`` when a folder is given (tests, users'
    own schemas), else the task's packaged ``leaderboard.yaml``; None when there is none."""
    if schema_dir is not None:
        path = schema_dir / f"{task}.yaml"
    else:
        path = schema_paths().get(task, Path(SCHEMA_FILE))
    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise SchemaError(f"{path}: not valid YAML: {exc}") from exc
    schema = parse_schema(data, str(path))
    if schema.task != task:
        raise SchemaError(f"{path}: declares task '{schema.task}', expected '{task}'")
    return schema


def generic_schema(task: str) -> LeaderboardSchema:
    """Fallback for a task without a schema: metrics are discovered from its logs."""
    return LeaderboardSchema(task=task, title=task, source="generic")


def headline_of(metrics: tuple[MetricSpec, ...] | list[MetricSpec]) -> MetricSpec | None:
    """The metric marked headline, else the first one."""
    for m in metrics:
        if m.headline:
            return m
    return metrics[0] if metrics else None


def key_regex(template: str) -> re.Pattern[str]:
    """``<scorer>/<metric>`` template -> regex (``*`` = any scorer, ``{method}`` = a method: one
    path segment, so ``*/{method}/auroc`` reads ``dispat/KNN/auroc`` but not the per-dataset
    ``dispat/wbc/KNN/auroc`` beside it)."""
    scorer, _, name = template.partition("/") if "/" in template else ("*", "", template)
    scorer_re = "(?P<scorer>[^/]+)" if scorer in ("*", "{scorer}") else re.escape(scorer)
    parts = re.split(r"(\{method\}|\{scorer\})", name)
    name_re = "".join(
        "(?P<method>[^/]+)" if p == "{method}" else "[^/]+" if p == "{scorer}" else re.escape(p)
        for p in parts
    )
    return re.compile(f"{scorer_re}/{name_re}")
