"""One task's leaderboard: rows (model × method × settings), cells with intervals, paired deltas."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata
from sklearn.metrics import roc_curve

from scorers.intervals import (
    Interval,
    bootstrap_mean_ci,
    bootstrap_statistic_ci,
    holm_adjust,
    mcnemar,
    paired_bootstrap_diff,
    paired_bootstrap_statistic_diff,
    wilson_ci,
)

from ._reference import ReferenceRow, ReferenceTable
from ._runs import Run
from ._samples import SampleRow, column, lookup, read_sample_rows
from ._schema import IntervalSpec, LeaderboardSchema, MetricSpec, headline_of

_NAN = math.nan
# Metrics inspect adds beside a value; our bootstrap interval replaces them in the table.
_AUX_METRICS = ("stderr",)
_GENERIC_MEAN_METRICS = ("accuracy", "mean")
# Part labels for schemas with ``split_rows_by``: the whole run, and samples without the field.
POOLED_PART = "all"
MISSING_PART = "(none)"
# Task-argument names that select a dataset (reference rows are matched against their values).
_DATASET_ARG_HINTS = ("dataset", "subset")


@dataclass
class Cell:
    value: float = _NAN
    low: float = _NAN
    high: float = _NAN
    n: int = 0
    interval: str = ""  # method of the interval ("bootstrap", "Wilson", ...), "" when none
    note: str = ""

    @property
    def present(self) -> bool:
        return math.isfinite(self.value)


@dataclass
class Comparison:
    metric_id: str
    baseline: str  # label of the row compared against
    delta: float
    low: float
    high: float
    p_value: float
    test: str
    n_paired: int
    p_holm: float = _NAN
    note: str = ""


@dataclass
class ReferenceMatch:
    ref: ReferenceRow
    metric_id: str | None
    value: float  # in our units
    ours: list[tuple[str, Cell]]  # (row label, cell)
    note: str = ""


@dataclass
class Row:
    run: Run
    model: str
    method: str
    settings: dict[str, str]
    scorer: str | None  # methods_from_scorers: the scorer this row reads
    method_key: str | None = None  # {method} templates: the method substituted into keys
    # split_rows_by: the part this row shows (POOLED_PART for the whole run); None: no split
    part: str | None = None
    run_parts: tuple[str, ...] = ()  # every part of this row's run (empty: no split)
    is_slice: bool = False  # True: cells come from a part's samples only, never the log header
    cells: dict[str, Cell] = field(default_factory=dict)
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    samples: int = 0
    scored: int = 0
    model_failures: int = 0
    infra_errors: int = 0
    # metric id -> (fpr, tpr) for ROC plots
    roc: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    # metric id -> per-sample values by sample key (for paired tests and plots)
    per_sample: dict[str, Any] = field(default_factory=dict)
    sample_rows: list[SampleRow] = field(default_factory=list, repr=False)
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        parts = [self.model]
        if self.method:
            parts.append(self.method)
        parts.extend(f"{k}={v}" for k, v in self.settings.items())
        if self.part is not None:
            parts.append(self.part)
        return " · ".join(parts)


@dataclass
class Leaderboard:
    task: str
    schema: LeaderboardSchema
    metrics: list[MetricSpec]
    rows: list[Row]
    baseline: str | None = None
    reference: ReferenceTable | None = None
    reference_matches: list[ReferenceMatch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def headline(self) -> MetricSpec | None:
        return headline_of(self.metrics)


# ------------------------------------------------------------------ statistics


def fast_auroc(y: np.ndarray, s: np.ndarray) -> float:
    """AUROC via the rank-sum identity (ties averaged), equal to sklearn's roc_auc_score."""
    pos = y == 1
    n1 = int(pos.sum())
    n0 = y.size - n1
    if n1 == 0 or n0 == 0:
        return _NAN
    ranks = rankdata(s)
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def fast_aupr(y: np.ndarray, s: np.ndarray) -> float:
    """Average precision (step-wise, ties grouped), equal to sklearn's average_precision_score.

    sklearn's input validation costs ~1 ms a call, which dominates a 2000-resample bootstrap.
    """
    n1 = int((y == 1).sum())
    if n1 == 0 or n1 == y.size:
        return _NAN
    order = np.argsort(-s, kind="mergesort")
    s_sorted, y_sorted = s[order], (y[order] == 1)
    last = np.r_[np.flatnonzero(np.diff(s_sorted)), y.size - 1]  # end of each tie block
    tps = np.cumsum(y_sorted)[last]
    fps = (last + 1) - tps
    precision = tps / (tps + fps)
    recall = tps / n1
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def batch_auroc(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Row-wise AUROC of (resamples × n) label/score matrices; nan for one-class rows."""
    pos = y == 1
    n1 = pos.sum(axis=1).astype(float)
    n0 = y.shape[1] - n1
    ranks = rankdata(s, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = ((ranks * pos).sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)
    auc[(n1 == 0) | (n0 == 0)] = _NAN
    return auc


def batch_aupr(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Row-wise average precision (as :func:`fast_aupr`) of (resamples × n) matrices.

    Each positive contributes the precision at the end of its tie block (sklearn's step-wise AP).
    """
    m, n = y.shape
    order = np.argsort(-s, axis=1, kind="mergesort")
    s_sorted = np.take_along_axis(s, order, axis=1)
    y_sorted = np.take_along_axis(y == 1, order, axis=1)
    tps = np.cumsum(y_sorted, axis=1)
    precision = tps / np.arange(1, n + 1)
    is_end = np.ones((m, n), dtype=bool)
    is_end[:, :-1] = s_sorted[:, :-1] != s_sorted[:, 1:]
    end_pos = np.where(is_end, np.arange(n), n - 1)
    block_end = np.minimum.accumulate(end_pos[:, ::-1], axis=1)[:, ::-1]
    prec_end = np.take_along_axis(precision, block_end, axis=1)
    n1 = y_sorted.sum(axis=1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = (y_sorted * prec_end).sum(axis=1) / n1
    ap[(n1 == 0) | (n1 == n)] = _NAN
    return ap


_CURVE_STATS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "auroc": fast_auroc,
    "aupr": fast_aupr,
}


@dataclass
class _Values:
    """Per-sample data for one (row, metric), aligned by sample key."""

    keys: list[str]
    kind: str
    x: np.ndarray  # value (mean/binary/macro) or detector score (auroc/aupr)
    y: np.ndarray | None = None  # label (auroc/aupr) or group codes (macro_mean)

    def batch_statistic(self) -> Callable[[np.ndarray], np.ndarray] | None:
        """Vectorised form over a (resamples × n) index matrix, where one exists."""
        x, y = self.x, self.y
        if self.kind == "auroc":
            return lambda idx: batch_auroc(y[idx], x[idx])  # type: ignore[index]
        if self.kind == "aupr":
            return lambda idx: batch_aupr(y[idx], x[idx])  # type: ignore[index]
        if self.kind in ("mean", "binary"):
            return lambda idx: x[idx].mean(axis=1)
        return None

    def statistic(self) -> Callable[[np.ndarray], float]:
        x, y = self.x, self.y
        if self.kind in _CURVE_STATS:
            fn = _CURVE_STATS[self.kind]
            return lambda idx: fn(y[idx], x[idx])  # type: ignore[index]
        if self.kind == "macro_mean":

            def macro(idx: np.ndarray) -> float:
                g = y[idx]  # type: ignore[index]
                sums = np.bincount(g, weights=x[idx])
                counts = np.bincount(g)
                present = counts > 0
                return float((sums[present] / counts[present]).mean())

            return macro
        return lambda idx: float(x[idx].mean())

    def subset(self, keys: list[str]) -> _Values:
        pos = {k: i for i, k in enumerate(self.keys)}
        idx = np.array([pos[k] for k in keys], dtype=int)
        return _Values(keys, self.kind, self.x[idx], None if self.y is None else self.y[idx])


def _collect_values(
    rows: list[SampleRow], spec: IntervalSpec, scorer: str | None
) -> tuple[_Values | None, str]:
    """Per-sample values for ``spec``; returns (values or None, note on what was missing)."""
    kind = spec.kind
    if kind == "none":
        return None, ""
    if spec.where:
        path, _, wanted = spec.where.partition("=")
        kept = []
        for row in rows:
            try:
                if str(lookup(row, path.strip(), scorer)) == wanted.strip():
                    kept.append(row)
            except KeyError:
                continue
        rows = kept
    if kind in ("auroc", "aupr"):
        xs, miss_x = column(rows, spec.score or "", scorer)
        ys, miss_y = column(rows, spec.label or "", scorer)
        keys = [k for k in xs if k in ys]
        missing = {**miss_x, **miss_y}
        bad = [k for k in keys if ys[k] not in (0.0, 1.0)]
        if bad:
            return None, f"label at '{spec.label}' is not 0/1 (sample {bad[0]}: {ys[bad[0]]})"
        vals = _Values(keys, kind, np.array([xs[k] for k in keys]), np.array([ys[k] for k in keys]))
    elif kind == "macro_mean":
        xs, missing = column(rows, spec.value or "", scorer)
        groups: dict[str, Any] = {}
        for row in rows:
            if row.key in xs:
                try:
                    groups[row.key] = str(lookup(row, spec.group or "", scorer))
                except KeyError as exc:
                    missing[row.key] = str(exc.args[0])
        keys = [k for k in xs if k in groups]
        names = sorted({groups[k] for k in keys})
        code = {g: i for i, g in enumerate(names)}
        vals = _Values(
            keys,
            kind,
            np.array([xs[k] for k in keys]),
            np.array([code[groups[k]] for k in keys], dtype=int),
        )
    else:
        xs, missing = column(rows, spec.value or "", scorer)
        keys = list(xs)
        x = np.array([xs[k] for k in keys])
        if kind == "auto":
            # 0/1 outcomes get Wilson intervals and McNemar; anything else a bootstrap mean.
            kind = "binary" if x.size and np.isin(x, (0.0, 1.0)).all() else "mean"
        vals = _Values(keys, kind, x)
        if kind == "binary" and not np.isin(vals.x, (0.0, 1.0)).all():
            return None, f"values at '{spec.value}' are not all 0/1; use kind 'mean'"
    note = ""
    if missing:
        first_key, why = next(iter(missing.items()))
        note = f"{len(missing)} sample(s) without a value (e.g. {first_key}: {why})"
    if not keys:
        return None, note or "no per-sample values"
    return vals, note


def _interval(vals: _Values, n_boot: int, seed: int) -> tuple[Interval, str]:
    if vals.kind == "binary":
        k = int(vals.x.sum())
        return wilson_ci(k, vals.x.size), "Wilson"
    if vals.kind == "mean":
        return bootstrap_mean_ci(vals.x, n_boot=n_boot, seed=seed), "bootstrap"
    batch = vals.batch_statistic()
    stat = batch if batch is not None else vals.statistic()
    return (
        bootstrap_statistic_ci(
            stat, len(vals.keys), n_boot=n_boot, seed=seed, vectorized=batch is not None
        ),
        "bootstrap",
    )


def _paired(a: _Values, b: _Values, n_boot: int, seed: int) -> tuple[Any, str, int, str]:
    shared = [k for k in a.keys if k in set(b.keys)]
    if len(shared) < 2:
        return None, "", len(shared), f"only {len(shared)} shared sample(s)"
    a2, b2 = a.subset(shared), b.subset(shared)
    note = ""
    if a.kind in _CURVE_STATS and not np.array_equal(a2.y, b2.y):
        return None, "", len(shared), "labels differ between the runs on shared samples"
    if a.kind in ("mean", "binary"):
        d = paired_bootstrap_diff(a2.x, b2.x, n_boot=n_boot, seed=seed)
        if a.kind == "binary" and b.kind == "binary":
            mc = mcnemar(a2.x == 1, b2.x == 1)
            return d._replace(p_value=mc.p_value), f"McNemar ({mc.method})", len(shared), note
        return d, "paired bootstrap", len(shared), note
    ba, bb = a2.batch_statistic(), b2.batch_statistic()
    if ba is not None and bb is not None:
        d = paired_bootstrap_statistic_diff(
            ba, bb, len(shared), n_boot=n_boot, seed=seed, vectorized=True
        )
    else:
        d = paired_bootstrap_statistic_diff(
            a2.statistic(), b2.statistic(), len(shared), n_boot=n_boot, seed=seed
        )
    return d, "paired bootstrap", len(shared), note


# ------------------------------------------------------------------ building


def _method_of(run: Run, schema: LeaderboardSchema) -> tuple[str, str | None]:
    for arg in schema.method_args:
        if arg in run.task_args and run.task_args[arg] not in (None, ""):
            return str(run.task_args[arg]), arg
    return "", None


def _fmt_arg(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


_BOUND_SUFFIXES = ("_lo", "_hi", "_low", "_high", "_ci_low", "_ci_high", "_stderr")


def _key_regex(template: str) -> re.Pattern[str]:
    """``<scorer>/<metric>`` template -> regex (``*`` = any scorer, ``{method}`` = a method)."""
    scorer, _, name = template.partition("/") if "/" in template else ("*", "", template)
    scorer_re = "(?P<scorer>[^/]+)" if scorer in ("*", "{scorer}") else re.escape(scorer)
    parts = re.split(r"(\{method\}|\{scorer\})", name)
    name_re = "".join(
        "(?P<method>.+?)" if p == "{method}" else "[^/]+" if p == "{scorer}" else re.escape(p)
        for p in parts
    )
    return re.compile(f"{scorer_re}/{name_re}")


def _uses_method_template(schema: LeaderboardSchema) -> bool:
    return any("{method}" in k for m in schema.metrics for k in m.keys)


def _template_methods(run: Run, schema: LeaderboardSchema) -> list[str]:
    """Methods found in ``run``'s metric keys through the schema's ``{method}`` templates."""
    found: list[str] = []
    for template in (k for m in schema.metrics for k in m.keys):
        if "{method}" not in template:
            continue
        rx = _key_regex(template)
        for key in run.metrics:
            match = rx.fullmatch(key)
            if match and match.group("method") not in found:
                found.append(match.group("method"))
    return found


def _subst(text: str | None, method_key: str | None) -> str | None:
    if text is None or method_key is None:
        return text
    return text.replace("{method}", method_key)


def _match_scorer(run: Run, metric_name: str, pattern: str, scorer: str | None) -> str | None:
    """The score name in ``run`` that a metric reads (``scorer`` fixes it for scorer rows)."""
    candidates = [scorer] if scorer is not None else run.scorers
    for s in candidates:
        if (pattern == "*" or pattern == s) and f"{s}/{metric_name}" in run.metrics:
            return s
    if pattern != "*" and (scorer is None or scorer == pattern):
        return pattern
    return scorer if scorer is not None else (run.scorers[0] if run.scorers else None)


def _extra_metrics(
    runs: list[Run],
    schema: LeaderboardSchema,
    covered: set[str],
    methods: set[str],
    notes: list[str],
) -> list[MetricSpec]:
    extras: dict[str, MetricSpec] = {}
    bounds: set[str] = set()
    for run in runs:
        for key in run.metrics:
            scorer, name = key.split("/", 1)
            if name in _AUX_METRICS or key in covered:
                continue
            if name.endswith(_BOUND_SUFFIXES):
                bounds.add(name)
                continue
            ekey, display = key, key
            if schema.methods_from_scorers:
                ekey, display = f"*/{name}", name
            elif methods:
                head, _, rest = name.partition("/")
                if head in methods and rest:
                    ekey, display = f"{scorer}/{{method}}/{rest}", rest
            if ekey in extras:
                continue
            interval = IntervalSpec()
            if name in _GENERIC_MEAN_METRICS:
                value = (
                    "score.{scorer}.value"
                    if schema.methods_from_scorers
                    else f"score.{scorer}.value"
                )
                interval = IntervalSpec(kind="auto", value=value)
            extras[ekey] = MetricSpec(
                id=ekey,
                key=ekey,
                display=display,
                direction="none",
                interval=interval,
                from_schema=False,
            )
    if bounds:
        notes.append(
            "interval bounds the task logs itself ("
            + ", ".join(sorted(bounds)[:6])
            + (", …" if len(bounds) > 6 else "")
            + ") are not shown as columns; the intervals "
            "shown are the report's own, from per-sample values where the schema names them"
        )
    return list(extras.values())


def _covered_keys(run: Run, schema: LeaderboardSchema) -> set[str]:
    keys = set()
    for template in (k for m in schema.metrics for k in m.keys):
        rx = _key_regex(template)
        keys.update(k for k in run.metrics if rx.fullmatch(k))
    return keys


def _partition(
    samples: list[SampleRow], path: str, scorer: str | None
) -> dict[str, list[SampleRow]]:
    """Samples grouped by their value at ``path`` (sorted; MISSING_PART last)."""
    parts: dict[str, list[SampleRow]] = {}
    for s in samples:
        try:
            raw = lookup(s, path, scorer)
        except KeyError:
            raw = None
        name = MISSING_PART if raw is None or raw == "" else _fmt_arg(raw)
        parts.setdefault(name, []).append(s)
    return dict(sorted(parts.items(), key=lambda kv: (kv[0] == MISSING_PART, kv[0])))


def _row_parts(
    samples: list[SampleRow], schema: LeaderboardSchema, scorer: str | None
) -> list[tuple[str | None, list[SampleRow], bool, tuple[str, ...]]]:
    """(part, its samples, is_slice, all parts of the run) for each row a run spec yields."""
    if schema.split_rows_by is None:
        return [(None, samples, False, ())]
    parts = _partition(samples, schema.split_rows_by, scorer)
    names = tuple(parts)
    if len(parts) == 1:
        # One part is the whole run: a single row, named by its part (no duplicate pooled row).
        return [(names[0], samples, False, names)]
    out: list[tuple[str | None, list[SampleRow], bool, tuple[str, ...]]] = [
        (POOLED_PART, samples, False, names)
    ]
    out.extend((name, rows, True, names) for name, rows in parts.items())
    return out


def _split_note(schema: LeaderboardSchema) -> str:
    return (
        f"rows split by '{schema.split_rows_by}': beside each run's pooled row (part "
        f"'{POOLED_PART}', the log's own metrics) there is one row per value of that field, its "
        "cells and intervals computed from that part's samples only; metrics that exist only as "
        f"run-level results show as — for parts. Samples without the field form part "
        f"'{MISSING_PART}'. Comparisons pair each part with the baseline's same part (p (Holm) "
        "adjusts over all of them); a part row shows only paper numbers whose dataset names "
        "that part, and a pooled row never shows a paper number for one of its parts."
    )


def _count_outcomes(row: Row, samples: list[SampleRow], schema: LeaderboardSchema) -> None:
    row.samples = len(samples)
    scorer_names = [row.scorer] if row.scorer else None
    for s in samples:
        if s.error is not None:
            row.infra_errors += 1
            continue
        scores = {k: v for k, v in s.scores.items() if scorer_names is None or k in scorer_names}
        failed = s.limit is not None or any(
            sc["metadata"].get(fk) for sc in scores.values() for fk in schema.failure_keys
        )
        if scores:
            row.scored += 1
        if failed:
            row.model_failures += 1


def build_leaderboard(
    task: str,
    runs: list[Run],
    schema: LeaderboardSchema,
    log_dir: Path,
    *,
    baseline: str | None,
    reference: ReferenceTable | None,
    n_boot: int = 2000,
    seed: int = 0,
) -> Leaderboard:
    notes: list[str] = []
    covered: set[str] = set()
    run_methods: dict[str, list[str]] = {}
    for run in runs:
        covered |= _covered_keys(run, schema)
        if _uses_method_template(schema):
            run_methods[run.path] = _template_methods(run, schema)
    all_methods = {m for ms in run_methods.values() for m in ms}
    metrics = list(schema.metrics) + _extra_metrics(runs, schema, covered, all_methods, notes)

    # Task arguments that vary between runs (other than the method) distinguish rows.
    method_arg_names = set(schema.method_args)
    varying = sorted(
        {
            k
            for r in runs
            for k in r.task_args
            if k not in method_arg_names and len({_fmt_arg(x.task_args.get(k)) for x in runs}) > 1
        }
    )
    role_varying = sorted(
        {k for r in runs for k in r.model_roles if len({x.model_roles.get(k) for x in runs}) > 1}
    )

    rows: list[Row] = []
    for run in runs:
        method, _ = _method_of(run, schema)
        settings = {k: _fmt_arg(run.task_args.get(k, "—")) for k in varying}
        settings.update({f"role.{k}": run.model_roles.get(k, "—") for k in role_varying})
        try:
            samples = read_sample_rows(log_dir / run.path)
        except Exception as exc:  # noqa: BLE001 - a log whose samples cannot be read is noted
            samples = []
            notes.append(f"{run.path}: sample summaries unreadable ({type(exc).__name__}: {exc})")
        # (method label, scorer fixed for the row, value substituted for {method})
        specs: list[tuple[str, str | None, str | None]]
        if schema.methods_from_scorers:
            specs = [(s, s, None) for s in run.scorers]
            if not specs:
                notes.append(f"{run.path}: no scorers in the log")
        elif _uses_method_template(schema):
            specs = [(m, None, m) for m in run_methods.get(run.path, [])]
            if not specs:
                notes.append(
                    f"{run.path}: no metric matches the schema's {{method}} keys; "
                    "one row for the whole run"
                )
                specs = [(method, None, None)]
        else:
            specs = [(method, None, None)]
        for row_method, scorer, method_key in specs:
            for part, part_samples, is_slice, run_parts in _row_parts(samples, schema, scorer):
                row = Row(
                    run=run,
                    model=run.model,
                    method=row_method or "",
                    settings=settings,
                    scorer=scorer,
                    method_key=method_key,
                    part=part,
                    run_parts=run_parts,
                    is_slice=is_slice,
                    sample_rows=part_samples,
                )
                _count_outcomes(row, part_samples, schema)
                for metric in metrics:
                    _fill_cell(row, metric, part_samples, n_boot, seed)
                rows.append(row)

    if any(r.is_slice for r in rows):
        notes.append(_split_note(schema))
    lb = Leaderboard(
        task=task, schema=schema, metrics=metrics, rows=rows, notes=notes, reference=reference
    )
    _compare(lb, baseline, n_boot, seed)
    _match_reference(lb)
    for metric in metrics:
        if metric.from_schema and not any(r.cells[metric.id].present for r in rows):
            lb.notes.append(
                f"metric '{metric.display}' ({metric.key}) is in the schema but in none of the "
                "logs: shown as —"
            )
    if schema.source == "generic":
        lb.notes.append("no leaderboard schema for this task: every metric in the logs is listed")
    return lb


def _fill_cell(
    row: Row, metric: MetricSpec, samples: list[SampleRow], n_boot: int, seed: int
) -> None:
    run = row.run
    scorer, key = None, None
    for template in metric.keys:
        if "{method}" in template and row.method_key is None:
            continue
        pattern = template.split("/", 1)[0] if "/" in template else "*"
        name = (
            _subst(template.split("/", 1)[1] if "/" in template else template, row.method_key) or ""
        )
        s = _match_scorer(run, name, pattern, row.scorer)
        if scorer is None:
            scorer, key = s, (f"{s}/{name}" if s else None)
        if s and f"{s}/{name}" in run.metrics:
            scorer, key = s, f"{s}/{name}"
            break
    cell = Cell()
    logged = bool(key and key in run.metrics)
    # A part's cells come from its own samples: the log's value is for the whole run.
    if logged and not row.is_slice:
        cell.value = run.metrics[key]  # type: ignore[index]
    spec = IntervalSpec(
        kind=metric.interval.kind,
        value=_subst(metric.interval.value, row.method_key),
        score=_subst(metric.interval.score, row.method_key),
        label=_subst(metric.interval.label, row.method_key),
        group=_subst(metric.interval.group, row.method_key),
        where=_subst(metric.interval.where, row.method_key),
    )
    vals, note = _collect_values(samples, spec, scorer) if samples else (None, "")
    if vals is not None:
        row.per_sample[metric.id] = vals
        ci, method = _interval(vals, n_boot, seed)
        cell.low, cell.high, cell.n, cell.interval = ci.low, ci.high, len(vals.keys), method
        if not cell.present:
            cell.value = ci.estimate
            if not row.is_slice:  # for parts this is the rule (stated once in the notes)
                note = (note + "; " if note else "") + "value computed from per-sample scores"
        elif math.isfinite(ci.estimate) and not math.isclose(
            ci.estimate, cell.value, rel_tol=1e-6, abs_tol=1e-9
        ):
            note = (note + "; " if note else "") + (
                f"per-sample estimate {ci.estimate:.4g} differs from the logged value"
            )
        if vals.kind == "auroc" and vals.y is not None and vals.y.min() != vals.y.max():
            fpr, tpr, _ = roc_curve(vals.y, vals.x)
            row.roc[metric.id] = (fpr, tpr)
    elif metric.interval.kind != "none" and cell.present and note:
        note = f"no interval: {note}"
    elif row.is_slice and logged and metric.interval.kind == "none":
        note = "only a run-level value in the log (no per-sample path): not shown for parts"
    if not cell.present and metric.from_schema:
        note = note or f"'{_subst(metric.key, row.method_key)}' not in this log"
    cell.note = note
    row.cells[metric.id] = cell


def _row_matches_model(row: Row, baseline: str) -> bool:
    return (
        row.model == baseline
        or row.model.split("/", 1)[-1] == baseline
        or (row.model.rsplit("/", 1)[-1] == baseline)
    )


def _compare(lb: Leaderboard, baseline: str | None, n_boot: int, seed: int) -> None:
    mode = None
    if baseline and any(_row_matches_model(r, baseline) for r in lb.rows):
        mode = "model"
    elif baseline and any(r.method == baseline for r in lb.rows):
        mode = "method"
    elif baseline:
        lb.notes.append(f"baseline '{baseline}' is neither a model nor a method of this task")
    elif lb.schema.baseline_method and any(r.method == lb.schema.baseline_method for r in lb.rows):
        baseline, mode = lb.schema.baseline_method, "method"
    if mode is None:
        return
    lb.baseline = f"{mode} {baseline}"

    def partner(row: Row) -> Row | None:
        for other in lb.rows:
            if other is row:
                continue
            if other.part != row.part:  # a part is compared with the baseline's same part
                continue
            if mode == "model":
                if (
                    _row_matches_model(other, baseline)
                    and other.method == row.method
                    and other.settings == row.settings
                ):
                    return other
            elif (
                other.method == baseline
                and other.model == row.model
                and other.settings == row.settings
            ):
                return other
        return None

    for row in lb.rows:
        is_base = _row_matches_model(row, baseline) if mode == "model" else row.method == baseline
        if is_base:
            continue
        base = partner(row)
        if base is None:
            what = "settings" if row.part is None else "settings and part"
            row.notes.append(f"no baseline row ({lb.baseline}) with the same {what}")
            continue
        for metric in lb.metrics:
            a, b = row.per_sample.get(metric.id), base.per_sample.get(metric.id)
            if a is None or b is None:
                continue
            result, test, n, note = _paired(a, b, n_boot, seed)
            if result is None:
                row.comparisons[metric.id] = Comparison(
                    metric.id, base.label, _NAN, _NAN, _NAN, _NAN, "", n, note=note
                )
                continue
            row.comparisons[metric.id] = Comparison(
                metric.id,
                base.label,
                result.delta,
                result.low,
                result.high,
                result.p_value,
                test,
                n,
                note=note,
            )
    # Holm over every comparison of the task: many rows × metrics are tested at once.
    comps = [c for r in lb.rows for c in r.comparisons.values()]
    adjusted = holm_adjust([c.p_value for c in comps])
    for c, p in zip(comps, adjusted, strict=False):
        c.p_holm = float(p)


def _norm(s: str | None) -> str:
    return (s or "").strip().lower().replace("-", "_").replace(" ", "_")


def _match_reference(lb: Leaderboard) -> None:
    ref = lb.reference
    if ref is None:
        return
    by_name: dict[str, MetricSpec] = {}
    for m in lb.metrics:
        by_name.setdefault(_norm(m.reference_metric or m.id), m)
        by_name.setdefault(_norm(m.metric_name), m)
    for r in ref.rows:
        metric = by_name.get(_norm(r.metric))
        value, note = r.value, ""
        if metric is None:
            note = f"metric '{r.metric}' not on this leaderboard"
        elif metric.format == "percent" and not r.scaled and 1.0 < value <= 100.0:
            value /= 100.0
            note = "paper value read as a percentage (no 'scale' in reference.yaml)"
        ours: list[tuple[str, Cell]] = []
        if metric is not None:
            for row in lb.rows:
                if not _row_matches_ref(row, r):
                    continue
                cell = row.cells.get(metric.id)
                if cell is not None and cell.present:
                    ours.append((row.label, cell))
        lb.reference_matches.append(
            ReferenceMatch(
                ref=r, metric_id=metric.id if metric else None, value=value, ours=ours, note=note
            )
        )


def _is_dataset_arg(name: str) -> bool:
    low = name.lower()
    return any(hint in low for hint in _DATASET_ARG_HINTS)


def _row_has_dataset(row: Row, dataset: str) -> bool:
    """Whether ``row`` measures the paper's ``dataset`` (by its part, else its task arguments)."""
    want = _norm(dataset)
    if row.is_slice:
        return _norm(row.part) == want
    parts = {_norm(p) for p in row.run_parts}
    if len(parts) > 1 and want in parts:
        # The pooled row mixes this dataset with others; the part row carries its number.
        return False
    if len(parts) == 1 and want in parts:
        return True
    args = row.run.task_args
    values = {_norm(_fmt_arg(v)) for v in args.values()}
    if want in values:
        return True
    # A run without any dataset-like argument cannot contradict the paper's dataset; one with
    # such an argument set to something else (e.g. subset=both) does.
    return not any(_is_dataset_arg(k) for k in args)


def _row_matches_ref(row: Row, ref: ReferenceRow) -> bool:
    if ref.method and _norm(row.method) != _norm(ref.method):
        return False
    if ref.dataset:
        return _row_has_dataset(row, ref.dataset)
    # A number for the paper's whole setting belongs beside whole runs, not beside a part.
    return not row.is_slice


def reference_for_row(lb: Leaderboard, row: Row, metric: MetricSpec) -> ReferenceMatch | None:
    """The first reference number for this row's method and ``metric`` (for the table column)."""
    for m in lb.reference_matches:
        if m.metric_id == metric.id and _row_matches_ref(row, m.ref):
            return m
    return None
