"""One task's leaderboard: rows (model × method × settings) and cells with intervals.

Rows and cells are built here; per-sample values and intervals are ``_values``, paired
comparisons and Holm ``_compare``, paper numbers ``_reference``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ._compare import compare_rows
from ._reference import match_reference
from ._runs import NOT_RECORDED, Run, fmt_arg
from ._samples import SampleRow, lookup, read_sample_rows, to_float
from ._schema import IntervalSpec, LeaderboardSchema, MetricSpec
from ._schema import key_regex as _key_regex
from ._types import Cell, Leaderboard, ReferenceTable, Row
from ._values import CURVE_KINDS, SampleValues, cell_interval, collect_values

__all__ = ["MISSING_PART", "POOLED_PART", "Cell", "Leaderboard", "Row", "build_leaderboard"]

# Metrics inspect adds beside a value; our bootstrap interval replaces them in the table.
_AUX_METRICS = ("stderr",)
_GENERIC_MEAN_METRICS = ("accuracy", "mean")
# Part labels for schemas with ``split_rows_by``: the whole run, and samples without the field.
POOLED_PART = "all"
MISSING_PART = "(none)"


# ------------------------------------------------------------------ building


def _method_of(run: Run, schema: LeaderboardSchema) -> tuple[str, str | None]:
    for arg in schema.method_args:
        if arg in run.task_args and run.task_args[arg] not in (None, ""):
            return str(run.task_args[arg]), arg
    return "", None


_BOUND_SUFFIXES = ("_lo", "_hi", "_low", "_high", "_ci_low", "_ci_high", "_stderr")


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
    keys: set[str] = set()
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
        name = MISSING_PART if raw is None or raw == "" else fmt_arg(raw)
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
        status = _reply_status(scores)
        if status == "truncated" or (status is None and s.limit is not None):
            row.truncated += 1
        elif scores and (
            status == "format_failure"
            or (
                status is None
                and failed
                and s.limit is None
                and not _headline_success(row, s, schema)
            )
            or any(sc["metadata"].get("format_failure") for sc in scores.values())
        ):
            row.format_failures += 1


def _headline_success(row: Row, sample: SampleRow, schema: LeaderboardSchema) -> bool:
    """Whether the sample scored full marks on the headline metric's per-sample 0/1 value: a
    failure key set on such a sample (agent_stress: a planted fault, contained as planned) is
    no reply that failed to parse."""
    head = schema.headline
    if head is None or head.direction != "higher" or not head.interval.value:
        return False
    if head.interval.kind not in ("auto", "binary", "mean"):
        return False
    path = _subst(head.interval.value, row.method_key) or ""
    scorers: list[str | None] = [row.scorer] if row.scorer else [*sample.scores] or [None]
    for scorer in scorers:
        try:
            value = to_float(lookup(sample, path, scorer))
        except KeyError:
            continue
        return value == 1.0
    return False


def _reply_status(scores: dict[str, dict[str, Any]]) -> str | None:
    """The worst ``reply_status`` a scorer recorded (``harness.constrained``'s convention:
    ``ok`` / ``truncated`` / ``format_failure``), None when no scorer records one."""
    found = [sc["metadata"].get("reply_status") for sc in scores.values()]
    found = [f for f in found if isinstance(f, str)]
    for status in ("format_failure", "truncated", "ok"):
        if status in found:
            return status
    return None


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

    # Task arguments that vary between runs (other than the method) distinguish rows; the data
    # split is said from the log's record (`data_split`), not from the argument asked for.
    labels_split = any(r.data_split for r in runs)
    method_arg_names = set(schema.method_args) | ({"split"} if labels_split else set())
    varying = sorted(
        {
            k
            for r in runs
            for k in r.task_args
            if k not in method_arg_names and len({fmt_arg(x.task_args.get(k)) for x in runs}) > 1
        }
    )
    role_varying = sorted(
        {k for r in runs for k in r.model_roles if len({x.model_roles.get(k) for x in runs}) > 1}
    )

    # Runs with fewer scored samples than the task declares comparable are smoke runs.
    min_n = reference.min_samples if reference is not None else None
    rows: list[Row] = []
    for run in runs:
        method, _ = _method_of(run, schema)
        settings = {k: fmt_arg(run.task_args.get(k, "—")) for k in varying}
        if labels_split:
            settings["split"] = run.split_label
        settings.update({f"role.{k}": run.model_roles.get(k, "—") for k in role_varying})
        try:
            samples = read_sample_rows(log_dir / run.path)
        except Exception as exc:  # noqa: BLE001 - a log whose samples cannot be read is noted
            samples = []
            notes.append(f"{run.path}: sample summaries unreadable ({type(exc).__name__}: {exc})")
        run_scored = sum(1 for x in samples if x.error is None and x.scores)
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
                    model=run.model_label,
                    method=row_method or "",
                    settings=settings,
                    scorer=scorer,
                    method_key=method_key,
                    part=part,
                    run_parts=run_parts,
                    is_slice=is_slice,
                    sample_rows=part_samples,
                )
                row.smoke = min_n is not None and run_scored < min_n
                row.off_protocol = not run.on_paper_protocol
                _count_outcomes(row, part_samples, schema)
                for metric in metrics:
                    _fill_cell(row, metric, part_samples, n_boot, seed)
                rows.append(row)

    if any(r.is_slice for r in rows):
        notes.append(_split_note(schema))
    if reference is not None and any(r.smoke for r in rows):
        notes.append(
            f"smoke runs (fewer than {min_n} scored samples, the task's minimum in "
            f"{reference.path}, report.min_samples): marked, and never set "
            f"against the {reference.numbers} numbers"
        )
    notes.extend(_split_notes(runs, labels_split, reference))
    off = [r for r in rows if r.off_protocol and not r.smoke]
    if reference is not None and off:
        notes.append(
            f"{len({r.run.path for r in off})} run(s) not under the paper's protocol "
            "(`preset=paper` with nothing departing from it; see the log's harness_preset): "
            f"the {reference.numbers} numbers are shown as context, not set against them"
        )
    lb = Leaderboard(
        task=task, schema=schema, metrics=metrics, rows=rows, notes=notes, reference=reference
    )
    compare_rows(lb, baseline, n_boot, seed)
    match_reference(lb)
    for metric in metrics:
        if metric.from_schema and not any(r.cells[metric.id].present for r in rows):
            lb.notes.append(
                f"metric '{metric.display}' ({metric.key}) is in the schema but in none of the "
                "logs: shown as —"
            )
    if schema.source == "generic":
        lb.notes.append("no leaderboard schema for this task: every metric in the logs is listed")
    return lb


def _split_notes(
    runs: list[Run], labels_split: bool, reference: ReferenceTable | None
) -> list[str]:
    """What the leaderboard says about data splits: runs that do not record one, and dev runs
    kept away from the reference numbers."""
    notes: list[str] = []
    unrecorded = [r for r in runs if not r.data_split]
    if unrecorded and labels_split:
        notes.append(
            f"{len(unrecorded)} run(s) record no data split (logs from before the task had one): "
            f"labelled split={NOT_RECORDED}, they ran on all of the task's data"
        )
    dev = [r for r in runs if r.data_split == "dev"]
    if dev and reference is not None:
        notes.append(
            f"{len(dev)} run(s) on the dev split (where the task's choices were made): never set "
            f"against the {reference.numbers} numbers; a comparison uses a test or all run"
        )
    return notes


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
    vals, note = collect_values(samples, spec, scorer) if samples else (None, "")
    if vals is not None:
        row.per_sample[metric.id] = vals
        ci = cell_interval(vals, n_boot, seed)
        cell.low, cell.high, cell.n, cell.interval = ci.low, ci.high, len(vals.keys), ci.method
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
            # imported here: scikit-learn costs seconds to import, and every `harness eval`
            # summary loads this module for the headline metric's schema
            from sklearn.metrics import roc_curve

            fpr, tpr, _ = roc_curve(vals.y, vals.x)
            row.roc[metric.id] = (fpr, tpr)
    elif metric.interval.kind != "none" and cell.present and note:
        note = f"no interval: {note}"
    elif row.is_slice and logged and metric.interval.kind == "none":
        note = "only a run-level value in the log (no per-sample path): not shown for parts"
    if not cell.present:
        cell.undefined = _undefined(metric, vals, logged and not row.is_slice)
        if cell.undefined:
            note = f"undefined: {cell.undefined}"
    if not cell.present and metric.from_schema:
        note = note or f"'{_subst(metric.key, row.method_key)}' not in this log"
    cell.note = note
    row.cells[metric.id] = cell


def _undefined(metric: MetricSpec, vals: SampleValues | None, logged: bool) -> str:
    """Why a metric the run has (logged, or per-sample values) has no value; "" when absent."""
    if vals is not None and vals.kind in CURVE_KINDS and vals.y is not None:
        if np.unique(vals.y).size < 2:
            return (
                f"one class only among the {vals.y.size} scored samples "
                f"({metric.display} needs both classes)"
            )
    if vals is not None:
        return f"not a number on the {len(vals.keys)} scored samples"
    return "not a number in the log" if logged else ""
