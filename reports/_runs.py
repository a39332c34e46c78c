"""Find the runs in a log directory and pick the ones a report uses.

Rule (stated in the report): per (task, model, model roles, task arguments, constrained decoding,
model arguments and generation settings, data split) the **latest run whose status is
``success``** is used.
Every other log is listed as skipped with the reason: superseded by a newer complete run (or, a
`harness eval` and an `inspect eval` run of one configuration with the same results, merged into
one row), unfinished (``started``), cancelled, failed (``error``), damaged (its integrity check
failed: ``_integrity``) or unreadable. Only headers are read here
(``read_eval_log(header_only=True)``), after the whole file passed its integrity check.

"Latest" is ordered by the run's start (``eval.created``), then its end (``stats.completed_at``),
then when its log file was last written, then the path. inspect stamps both times to the
second, so two runs of one configuration inside one second tie on both; the file's modification
time (nanoseconds) then says which finished writing last. The path alone (inspect names logs
``<created>_<task>_<random id>``) would pick at random.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log

from ._integrity import integrity_problem

_LOG_SUFFIXES = (".eval", ".json")
# Providers that never decode (a script or a mock answers): constrained decoding does not apply.
_NON_DECODING = ("scripted/", "mockllm/")
HARNESS_EVAL, INSPECT_EVAL = "harness eval", "inspect eval"
SPLITS = ("dev", "test", "all")
NOT_RECORDED = "all (not recorded)"
DAMAGED = "damaged log (integrity check failed: "


@dataclass(frozen=True)
class SkippedLog:
    path: str
    task: str | None
    model: str | None
    reason: str
    eval_id: str = ""  # where the header says it (a damaged copy of a run that was used)


@dataclass
class Run:
    """One log's header, reduced to what leaderboards need."""

    path: str
    task: str
    model: str
    model_roles: dict[str, str]
    task_args: dict[str, Any]
    status: str
    created: str
    eval_id: str
    total_samples: int
    completed_samples: int
    completed: str = ""  # stats.completed_at ("" while unfinished)
    modified_ns: int = 0  # the log file's modification time
    # "<score name>/<metric name>" -> value
    metrics: dict[str, float] = field(default_factory=dict)
    scorers: list[str] = field(default_factory=list)
    deviations: list[str] = field(default_factory=list)
    error: str | None = None
    # `harness eval constrained=on|off` as the log records it ("" when the log does not say)
    constrained: str = ""
    # model arguments and generation settings that change what the model computes
    settings: dict[str, Any] = field(default_factory=dict)
    # the settings that tell this run apart from a selected run of the same task and model
    distinct: dict[str, Any] = field(default_factory=dict)
    # what ran it: `harness eval` (its metadata is in the log) or `inspect eval`
    via: str = INSPECT_EVAL
    # `harness eval preset=...`: the preset record the log carries (`harness_preset`), {} if none
    preset: dict[str, Any] = field(default_factory=dict)
    # the data split the run used (log metadata `data_split`: dev, test or all; "" when the log
    # does not say, i.e. it was made before the task had a split and ran on all of its data)
    data_split: str = ""

    @property
    def on_paper_protocol(self) -> bool:
        """Whether the run followed the paper's protocol: `preset=paper` with nothing departing
        from it (`protocol_met`). Only such runs are set against a paper's numbers."""
        return self.preset.get("name") == "paper" and self.preset.get("protocol_met") is True

    @property
    def split_label(self) -> str:
        """The split as the report labels it: the recorded one, else ``all (not recorded)``."""
        return self.data_split or NOT_RECORDED

    @property
    def decoding(self) -> str:
        """``on`` when the model decoded under constraints; ``off`` otherwise, including a run
        that does not say (inspect eval: off is the default) and a model that never decodes."""
        if self.constrained == "on" and not self.model.startswith(_NON_DECODING):
            return "on"
        return "off"

    @property
    def key(self) -> tuple[str, str, str, str, str, str, str]:
        """What identifies "the same run" for selection: a constrained run, one with other
        model arguments or generation settings (a grid cell), or one on another data split, is
        another run (a dev run never supersedes a test run, nor the other way round)."""
        return (
            self.task,
            self.model,
            json.dumps(self.model_roles, sort_keys=True),
            json.dumps(self.task_args, sort_keys=True, default=str),
            self.decoding,
            json.dumps(self.settings, sort_keys=True, default=str),
            self.data_split,
        )

    @property
    def model_label(self) -> str:
        """The model as leaderboards name it: constrained decoding, and the settings that tell
        two runs of one task and model apart, are said beside the name."""
        label = f"{self.model} (constrained)" if self.decoding == "on" else self.model
        if self.distinct:
            label += " [" + ", ".join(f"{k}={fmt_arg(v)}" for k, v in self.distinct.items()) + "]"
        return label

    @property
    def name(self) -> str:
        return Path(self.path).name


def fmt_arg(value: Any) -> str:
    """A task argument as text (lists joined by commas): row settings, parts, dataset matching."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def task_short_name(task: str) -> str:
    """Registry names may be namespaced (``pkg/anchor``); leaderboards use the bare name."""
    return task.rsplit("/", 1)[-1]


def _role_models(log: EvalLog) -> dict[str, str]:
    roles = getattr(log.eval, "model_roles", None) or {}
    out: dict[str, str] = {}
    for role, cfg in roles.items():
        model = getattr(cfg, "model", None)
        if model is None and isinstance(cfg, dict):
            model = cfg.get("model")
        out[str(role)] = str(model if model is not None else cfg)
    return dict(sorted(out.items()))


def _metrics(log: EvalLog) -> tuple[dict[str, float], list[str]]:
    out: dict[str, float] = {}
    scorers: list[str] = []
    if log.results is None:
        return out, scorers
    for score in log.results.scores:
        scorers.append(score.name)
        for mname, metric in score.metrics.items():
            try:
                out[f"{score.name}/{mname}"] = float(metric.value)
            except (TypeError, ValueError):
                continue  # a non-numeric metric cannot sit in a numeric table
    return out, scorers


def run_from_header(path: str, log: EvalLog) -> Run:
    metrics, scorers = _metrics(log)
    meta = log.eval.metadata or {}
    deviations = meta.get("deviations") if isinstance(meta, dict) else None
    return Run(
        path=path,
        task=task_short_name(log.eval.task),
        model=str(log.eval.model),
        model_roles=_role_models(log),
        task_args=dict(log.eval.task_args or {}),
        status=str(log.status),
        created=str(log.eval.created),
        eval_id=str(log.eval.eval_id),
        completed=str(getattr(log.stats, "completed_at", "") or ""),
        total_samples=int(log.results.total_samples) if log.results else 0,
        completed_samples=int(log.results.completed_samples) if log.results else 0,
        metrics=metrics,
        scorers=scorers,
        deviations=[str(d) for d in deviations] if isinstance(deviations, list) else [],
        error=(log.error.message if log.error is not None else None),
        constrained=_constrained(meta),
        settings=_settings(log),
        via=HARNESS_EVAL
        if isinstance(meta, dict) and any(str(k).startswith("harness_") for k in meta)
        else INSPECT_EVAL,
        preset=_preset(meta),
        data_split=_data_split(meta),
    )


def _data_split(meta: Any) -> str:
    """The `data_split` a task records (`harness.splits.split_metadata`), "" when absent or not
    one of dev, test, all."""
    value = meta.get("data_split") if isinstance(meta, dict) else None
    return value if value in SPLITS else ""


def _preset(meta: Any) -> dict[str, Any]:
    """The `harness_preset` record `harness eval preset=...` writes into the task metadata."""
    record = meta.get("harness_preset") if isinstance(meta, dict) else None
    return dict(record) if isinstance(record, dict) else {}


# How a model is reached or paced, not what it computes: not part of a run's identity.
_TRANSPORT_ARGS = frozenset({"base_url", "api_key", "responder"})
_PACING_CONFIG = frozenset(
    {"max_connections", "max_retries", "timeout", "attempt_timeout", "batch", "cache_prompt"}
)


def _settings(log: EvalLog) -> dict[str, Any]:
    """`model_arg.*` and generation options (temperature, max_tokens, seed, ...) of the run."""
    out: dict[str, Any] = {}
    for name, value in sorted((log.eval.model_args or {}).items()):
        if name not in _TRANSPORT_ARGS:
            out[name] = value
    plan = getattr(log, "plan", None)
    config = getattr(plan, "config", None)
    if config is not None:
        for name, value in sorted(config.model_dump(exclude_none=True).items()):
            if name not in _PACING_CONFIG:
                out[name] = value
    return out


def _constrained(meta: Any) -> str:
    """``on``/``off`` from the metadata `harness eval` records (``harness_constrained``)."""
    info = meta.get("harness_constrained") if isinstance(meta, dict) else None
    value = info.get("constrained") if isinstance(info, dict) else None
    return str(value) if value in ("on", "off") else ""


def discover_logs(log_dir: Path) -> list[Path]:
    """Every ``.eval``/``.json`` log below ``log_dir`` (eval-set bookkeeping files excluded)."""
    if not log_dir.is_dir():
        raise FileNotFoundError(f"log directory {log_dir} does not exist")
    found = []
    for path in sorted(log_dir.rglob("*")):
        if not path.is_file() or path.suffix not in _LOG_SUFFIXES:
            continue
        # eval-set writes logs.json / eval-set.json beside the logs; they are not eval logs.
        if path.name in ("logs.json", "eval-set.json") or path.name.startswith("."):
            continue
        found.append(path)
    return found


def read_runs(log_dir: Path) -> tuple[list[Run], list[SkippedLog]]:
    """Read every log header; unreadable files become :class:`SkippedLog`, never an exception."""
    runs: list[Run] = []
    skipped: list[SkippedLog] = []
    for path in discover_logs(log_dir):
        rel = str(path.relative_to(log_dir))
        problem = integrity_problem(path)
        if problem is not None:
            skipped.append(_damaged(rel, path, problem))
            continue
        try:
            log = read_eval_log(str(path), header_only=True)
        except Exception as exc:  # noqa: BLE001 - any unreadable log is reported, not fatal
            msg = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
            skipped.append(
                SkippedLog(rel, None, None, f"unreadable log ({type(exc).__name__}: {msg})")
            )
            continue
        try:
            run = run_from_header(rel, log)
            run.modified_ns = path.stat().st_mtime_ns
            runs.append(run)
        except Exception as exc:  # noqa: BLE001
            skipped.append(
                SkippedLog(rel, None, None, f"malformed log header ({type(exc).__name__}: {exc})")
            )
    return runs, skipped


def _damaged(rel: str, path: Path, problem: str) -> SkippedLog:
    """A log that failed its integrity check, named by task and model where its header (read
    on its own) still says them."""
    task = model = None
    eval_id = ""
    try:
        log = read_eval_log(str(path), header_only=True)
        task, model = task_short_name(log.eval.task), str(log.eval.model)
        eval_id = str(log.eval.eval_id)
    except Exception:  # noqa: BLE001, S110 - the damage may reach the header too
        pass
    return SkippedLog(rel, task, model, f"{DAMAGED}{problem}); not used", eval_id)


_STATUS_REASON = {
    "started": "unfinished run (status 'started': still running or killed before it ended)",
    "cancelled": "cancelled run",
    "error": "run ended with an error",
}


def recency(run: Run) -> tuple[str, str, int, str]:
    """Sort key for "latest" (module docstring): start, end, file write time, path."""
    return (run.created, run.completed, run.modified_ns, run.path)


def select_runs(runs: list[Run]) -> tuple[list[Run], list[SkippedLog]]:
    """Latest ``success`` run per configuration (`Run.key`); the rest skipped."""
    by_key: dict[tuple[str, ...], list[Run]] = {}
    for run in runs:
        by_key.setdefault(run.key, []).append(run)
    selected: list[Run] = []
    skipped: list[SkippedLog] = []
    for group in by_key.values():
        group.sort(key=recency, reverse=True)
        complete = [r for r in group if r.status == "success"]
        chosen = complete[0] if complete else None
        if chosen is not None:
            selected.append(chosen)
        for run in group:
            if run is chosen:
                continue
            if run.status != "success":
                reason = _STATUS_REASON.get(run.status, f"status '{run.status}'")
                if run.error:
                    reason += f": {run.error.strip().splitlines()[0][:160]}"
                if chosen is None:
                    reason += "; no complete run of this configuration exists"
                else:
                    reason += f"; using {chosen.name}"
            elif chosen is not None and run.via != chosen.via and same_results(run, chosen):
                reason = (
                    f"same configuration and results as {chosen.name} (a {HARNESS_EVAL} and an "
                    f"{INSPECT_EVAL} run of it): merged into one row"
                )
            else:
                reason = f"superseded by newer complete run {chosen.name}" if chosen else "?"
            skipped.append(SkippedLog(run.path, run.task, run.model, reason))
    _label_distinct(selected)
    selected.sort(key=lambda r: (r.task, r.model, r.key[3], r.key[5], r.data_split))
    return selected, skipped


def same_results(a: Run, b: Run) -> bool:
    """The same samples and the same logged metrics (NaN equal to NaN)."""
    if (a.completed_samples, a.total_samples) != (b.completed_samples, b.total_samples):
        return False
    if a.metrics.keys() != b.metrics.keys():
        return False
    return all(
        (math.isnan(x) and math.isnan(y)) or x == y
        for x, y in ((a.metrics[k], b.metrics[k]) for k in a.metrics)
    )


def _label_distinct(selected: list[Run]) -> None:
    """Runs of one task, model, roles, arguments and constraint kept apart only by settings
    (a grid over `model_arg.*` or `temperature`) get those settings into their label."""
    groups: dict[tuple[str, ...], list[Run]] = {}
    for run in selected:
        run.distinct = {}
        groups.setdefault(run.key[:5], []).append(run)
    for group in groups.values():
        if len(group) < 2:
            continue
        names = sorted({n for r in group for n in r.settings})
        differing = [
            n for n in names if len({json.dumps(r.settings.get(n), default=str) for r in group}) > 1
        ]
        for run in group:
            run.distinct = {n: run.settings.get(n, "-") for n in differing}
