"""Measurement grid outside inspect (same splits, detectors and metrics as the task).

The task scores one inspect sample per test row, which costs ~10-100 ms of framework time per row
on this machine; the 16-set x seeds PyOD grid (~14k test rows per seed) is therefore measured
through the task's own runner (``DetectorRunner._run``) and metric (``per_split_metrics``)
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

from methods.dispat import DiSPaTConfig, LMDetectorConfig, seed_summary
from tasks.dispat._runner import DetectorRunner, LLMSettings
from tasks.dispat.dataset import expand_datasets, make_split, resolve_dataset
from tasks.dispat.scorer import per_split_metrics


def run_grid(datasets, methods, seeds, *, nonfinite, max_test_rows, llm, out_csv, log=print):
    fields = ["dataset", "seed", "method", "auroc", "aupr", "f1", "fit_s", "score_s", "n_train",
              "n_test", "n_test_anom", "n_nonfinite_replaced", "error", "diagnostics"]
    rows = []
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with open(out_csv, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for name in datasets:
            ds = resolve_dataset(name)
            splits = {(ds.name, s): make_split(ds, s, max_test_rows=max_test_rows) for s in seeds}
            runner = DetectorRunner(splits, nonfinite=nonfinite, llm=llm, model_name=lambda: "default")
            for seed in seeds:
                sp = splits[(ds.name, seed)]
                for m in methods:
                    res = runner._run(ds.name, seed, m)
                    vals = per_split_metrics(sp.y_test, res.scores) if res.scores is not None else {}
                    row = {
                        "dataset": ds.name, "seed": seed, "method": m,
                        "auroc": vals.get("auroc", ""), "aupr": vals.get("aupr", ""), "f1": vals.get("f1", ""),
                        "fit_s": round(res.fit_seconds, 4), "score_s": round(res.score_seconds, 4),
                        "n_train": len(sp.X_train), "n_test": len(sp.y_test),
                        "n_test_anom": int(sp.y_test.sum()), "n_nonfinite_replaced": res.n_nonfinite_replaced,
                        "error": res.error or "", "diagnostics": repr(res.diagnostics) if res.diagnostics else "",
                    }
                    writer.writerow(row)
                    fh.flush()
                    rows.append(row)
                    log(f"{ds.name} seed={seed} {m}: auroc={row['auroc']!s:.6} aupr={row['aupr']!s:.6} "
                        f"fit={res.fit_seconds:.2f}s score={res.score_seconds:.2f}s {res.error or ''}")
    return rows


def markdown_table(rows, metric: str, methods) -> str:
    cell = defaultdict(list)
    failed = defaultdict(int)
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
    lines.append("| **mean** | " + " | ".join(
        f"{np.mean(means[m]):.3f} (n={len(means[m])})" if means[m] else "–" for m in methods) + " |")
    return "\n".join(lines)


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
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    import torch

    torch.set_num_threads(a.threads)
    lm_cfg = LMDetectorConfig(
        train_steps=a.train_steps, batch_size=a.batch_size, lr=a.lr, finetune=a.finetune,
        max_train_rows=a.max_train_rows, n_permutations=a.n_permutations,
    )
    llm = LLMSettings(
        "default", lm_cfg,
        DiSPaTConfig(lm=lm_cfg, iterations=a.dispat_iterations, samples_per_iteration=a.dispat_samples,
                     steps_per_iteration=a.dispat_steps, lr=a.dispat_lr, f_divergence=a.f_divergence),
        "standard", a.column_names,
    )
    methods = [m.strip() for m in a.methods.split(",")]
    t0 = time.time()
    rows = run_grid(
        expand_datasets(a.datasets), methods, [int(s) for s in a.seeds.split(",")],
        nonfinite=a.nonfinite, max_test_rows=a.max_test_rows, llm=llm, out_csv=a.out,
        log=lambda s: print(s, flush=True),
    )
    for metric in ("auroc", "aupr", "f1"):
        print(f"\n### {metric.upper()} (mean±std over seeds)\n")
        print(markdown_table(rows, metric, methods))
    print(f"\ntotal {time.time() - t0:.1f}s; rows in {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
