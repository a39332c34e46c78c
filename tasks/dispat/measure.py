"""Measurement grid outside inspect (same splits, detectors and metrics as the task).

The task scores one inspect sample per test row, which costs ~10-100 ms of framework time per row
on this machine; the 16-set x seeds PyOD grid (~14k test rows per seed) is therefore measured
through the task's own runner (``DetectorRunner.run``) and metric (``per_split_metrics``)
directly. ``python -m tasks.dispat.measure --help``.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from methods.dispat import F1_THRESHOLDS, OBJECTIVES, F1Threshold, seed_summary
from tasks._config import task_defaults
from tasks.dispat.config import DispatConfig
from tasks.dispat.dataset import expand_datasets, make_split, resolve_dataset
from tasks.dispat.runner import DetectorRunner
from tasks.dispat.scorer import per_split_metrics
from tasks.dispat.task import dispat


def run_grid(
    datasets,
    methods,
    seeds,
    *,
    nonfinite,
    max_test_rows,
    llm,
    out_csv,
    f1_threshold: F1Threshold = "percentile",
    log=print,
):
    fields = [
        "dataset",
        "seed",
        "method",
        "auroc",
        "aupr",
        "f1",
        "f1_threshold",
        "fit_s",
        "score_s",
        "n_train",
        "n_test",
        "n_test_anom",
        "n_nonfinite_replaced",
        "error",
        "diagnostics",
    ]
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    # Resume: cells already in the CSV (same columns) are kept and not run again.
    rows = read_csvs([out_csv]) if out_csv.exists() and out_csv.stat().st_size else []
    if rows and list(rows[0]) != fields:
        raise ValueError(
            f"{out_csv} has other columns than this grid writes; move it away to start afresh"
        )
    other_rule = {r["f1_threshold"] for r in rows} - {f1_threshold}
    if other_rule:
        raise ValueError(
            f"{out_csv} holds F1 under f1_threshold={sorted(other_rule)}, not {f1_threshold!r}; "
            "use another --out"
        )
    done = {(r["dataset"], str(r["seed"]), r["method"]) for r in rows}
    if done:
        log(f"resuming: {len(done)} cell(s) already in {out_csv}")
    with open(out_csv, "a" if rows else "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        if not rows:
            writer.writeheader()
        for name in datasets:
            ds = resolve_dataset(name)
            splits = {(ds.name, s): make_split(ds, s, max_test_rows=max_test_rows) for s in seeds}
            runner = DetectorRunner(
                splits,
                nonfinite=nonfinite,
                llm=llm,
                model_name=lambda: "default",
                share_warm_start="AnoLLM" in methods and "DiSPaT" in methods,
            )
            for seed in seeds:
                sp = splits[(ds.name, seed)]
                for m in methods:
                    if (ds.name, str(seed), m) in done:
                        continue
                    res = runner.run(ds.name, seed, m)
                    vals = (
                        per_split_metrics(sp.y_test, res.scores, f1_threshold)
                        if res.scores is not None
                        else {}
                    )
                    row = {
                        "dataset": ds.name,
                        "seed": seed,
                        "method": m,
                        "auroc": vals.get("auroc", ""),
                        "aupr": vals.get("aupr", ""),
                        "f1": vals.get("f1", ""),
                        "f1_threshold": f1_threshold,
                        "fit_s": round(res.fit_seconds, 4),
                        "score_s": round(res.score_seconds, 4),
                        "n_train": len(sp.X_train),
                        "n_test": len(sp.y_test),
                        "n_test_anom": int(sp.y_test.sum()),
                        "n_nonfinite_replaced": res.n_nonfinite_replaced,
                        "error": res.error or "",
                        "diagnostics": repr(res.diagnostics) if res.diagnostics else "",
                    }
                    writer.writerow(row)
                    fh.flush()
                    rows.append(row)
                    log(
                        f"{ds.name} seed={seed} {m}: auroc={row['auroc']!s:.6} aupr={row['aupr']!s:.6} "
                        f"fit={res.fit_seconds:.2f}s score={res.score_seconds:.2f}s {res.error or ''}"
                    )
    return rows


def markdown_table(rows, metric: str, methods) -> str:
    cell = defaultdict(list)
    failed: defaultdict[tuple[str, str], int] = defaultdict(int)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    for r in rows:
        if r["error"]:
            failed[(r["dataset"], r["method"])] += 1
        elif r[metric] != "" and math.isfinite(float(r[metric])):
            cell[(r["dataset"], r["method"])].append(float(r[metric]))
    lines = ["| dataset | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    means = defaultdict(list)
    for ds in datasets:
        parts = []
        for m in methods:
            v = cell.get((ds, m), [])
            if not v:
                parts.append(f"failed ({failed[(ds, m)]} seeds)" if failed[(ds, m)] else "–")
                continue
            s = seed_summary(v)
            txt = f"{s.mean:.3f}" + (f"±{s.std:.3f}" if s.n > 1 else "")
            if failed[(ds, m)]:
                txt += f" ({failed[(ds, m)]} failed)"
            parts.append(txt)
            means[m].append(s.mean)
        lines.append(f"| {ds} | " + " | ".join(parts) + " |")
    lines.append(
        "| **mean** | "
        + " | ".join(
            f"{np.mean(means[m]):.3f} (n={len(means[m])})" if means[m] else "–" for m in methods
        )
        + " |"
    )
    return "\n".join(lines)


def read_csvs(paths) -> list[dict]:
    """Rows of one or more grid CSVs (e.g. one file per seed), in file order."""
    rows: list[dict] = []
    for path in paths:
        with open(path, newline="") as fh:
            rows.extend(csv.DictReader(fh))
    return rows


def _scored(rows, metric: str) -> dict[tuple[str, str, str], float]:
    """(dataset, seed, method) -> metric, for scored cells with a finite value only."""
    out = {}
    for r in rows:
        if not r["error"] and r[metric] != "" and math.isfinite(float(r[metric])):
            out[(r["dataset"], str(r["seed"]), r["method"])] = float(r[metric])
    return out


def paired_difference(rows, a: str, b: str, metric: str = "auroc") -> dict:
    """``a - b`` over the (dataset, seed) splits both methods scored: mean, 95% t-interval,
    wins/ties/losses of ``a``. Pairing by split removes the between-dataset spread."""
    vals = _scored(rows, metric)
    keys = sorted({(d, s) for d, s, m in vals if m == a} & {(d, s) for d, s, m in vals if m == b})
    diffs = [vals[(d, s, a)] - vals[(d, s, b)] for d, s in keys]
    summary = seed_summary(diffs)
    return {
        "n": len(diffs),
        "mean": summary.mean,
        "lo": summary.low,
        "hi": summary.high,
        "wins": sum(x > 0 for x in diffs),
        "ties": sum(x == 0 for x in diffs),
        "losses": sum(x < 0 for x in diffs),
    }


def mean_ranks(rows, methods, metric: str = "auroc") -> dict[str, float]:
    """ADBench's average rank: per dataset, rank the methods' seed-mean metric (1 = best, ties
    averaged), then average over the datasets where every listed method has a value."""
    from scipy.stats import rankdata

    vals = _scored(rows, metric)
    per = defaultdict(list)
    for (d, _, m), v in vals.items():
        per[(d, m)].append(v)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    ranks = defaultdict(list)
    for d in datasets:
        if not all(per.get((d, m)) for m in methods):
            continue
        means = [float(np.mean(per[(d, m)])) for m in methods]
        for m, rk in zip(methods, rankdata([-x for x in means]), strict=False):
            ranks[m].append(float(rk))
    return {m: float(np.mean(ranks[m])) if ranks[m] else math.nan for m in methods}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--datasets", default="all")
    p.add_argument("--methods", default="IForest,LOF,KNN,ECOD,COPOD,OCSVM,PCA,HBOS")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--nonfinite", default="fail", choices=["fail", "max_finite"])
    p.add_argument("--max-test-rows", type=int, default=None)
    p.add_argument("--out", type=Path, default=Path("/tmp/dispat_measure/grid.csv"))
    p.add_argument("--train-steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--finetune", default="full")
    p.add_argument("--max-train-rows", type=int, default=128)
    p.add_argument("--n-permutations", type=int, default=3)
    p.add_argument("--column-names", default="letters")
    p.add_argument("--dispat-iterations", type=int, default=2)
    p.add_argument("--dispat-samples", type=int, default=8)
    p.add_argument("--dispat-steps", type=int, default=4)
    p.add_argument("--dispat-lr", type=float, default=5e-5)
    p.add_argument("--f-divergence", default="js")
    p.add_argument("--objective", default="f_gan", choices=list(OBJECTIVES))
    p.add_argument(
        "--f1-threshold",
        default="percentile",
        choices=list(F1_THRESHOLDS),
        help="F1's contamination threshold: PyOD's percentile rule (default) or top-k",
    )
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--from-csv",
        nargs="+",
        type=Path,
        default=None,
        help="summarise existing grid CSVs (e.g. one per seed) instead of running",
    )
    a = p.parse_args(argv)
    if a.from_csv:
        rows = read_csvs(a.from_csv)
        methods = list(dict.fromkeys(r["method"] for r in rows))
        _print_summary(rows, methods)
        return 0
    import torch

    torch.set_num_threads(a.threads)
    # The task's own config (its defaults, these knobs changed) builds the detector configs.
    llm = DispatConfig.from_params(
        {
            **task_defaults(dispat),
            "train_steps": a.train_steps,
            "batch_size": a.batch_size,
            "lr": a.lr,
            "finetune": a.finetune,
            "max_train_rows": a.max_train_rows,
            "n_permutations": a.n_permutations,
            "column_names": a.column_names,
            "dispat_iterations": a.dispat_iterations,
            "dispat_samples": a.dispat_samples,
            "dispat_steps": a.dispat_steps,
            "dispat_lr": a.dispat_lr,
            "f_divergence": a.f_divergence,
            "dispat_objective": a.objective,
        }
    ).llm_settings()
    methods = [m.strip() for m in a.methods.split(",")]
    t0 = time.time()
    rows = run_grid(
        expand_datasets(a.datasets),
        methods,
        [int(s) for s in a.seeds.split(",")],
        nonfinite=a.nonfinite,
        max_test_rows=a.max_test_rows,
        llm=llm,
        out_csv=a.out,
        f1_threshold=a.f1_threshold,
        log=lambda s: print(s, flush=True),
    )
    _print_summary(rows, methods)
    print(f"\ntotal {time.time() - t0:.1f}s; rows in {a.out}", file=sys.stderr)
    return 0


def _print_summary(rows, methods) -> None:
    for metric in ("auroc", "aupr", "f1"):
        print(f"\n### {metric.upper()} (mean±std over seeds)\n")
        print(markdown_table(rows, metric, methods))
        ranks = mean_ranks(rows, methods, metric)
        print(
            "\nmean rank over datasets (1 = best): "
            + ", ".join(f"{m} {r:.2f}" for m, r in sorted(ranks.items(), key=lambda kv: kv[1]))
        )
    if {"DiSPaT", "AnoLLM"} <= set(methods):
        print("\n### Paired differences over (dataset, seed) splits\n")
        print(
            "| comparison | metric | n | mean Δ [95% t] | wins/ties/losses |\n|---|---|---|---|---|"
        )
        others = [m for m in methods if m not in ("DiSPaT",)]
        for b in others:
            for metric in ("auroc", "aupr"):
                d = paired_difference(rows, "DiSPaT", b, metric)
                if d["n"]:
                    print(
                        f"| DiSPaT − {b} | {metric} | {d['n']} | {d['mean']:+.3f} [{d['lo']:+.3f}, "
                        f"{d['hi']:+.3f}] | {d['wins']}/{d['ties']}/{d['losses']} |"
                    )


if __name__ == "__main__":
    raise SystemExit(main())
