"""dispat throughput: rows scored per second and fit time, LLM detectors vs the fastest PyOD one.

Same process, same split (42_WBC seed 0 when HARNESS_DATA_DIR has it, else the bundled wbc): every
PyOD detector is fit on the training normals and scores all test rows; AnoLLM and DiSPaT (embedded
SmolLM2, small budgets below) score a stratified 40-row test subsample. Prints per-method fit
seconds and rows/s, and the ratio of each LLM method's rows/s and fit time to the fastest PyOD
detector's. ``python bench/bench_dispat.py [dataset] [train_steps]``.
"""

from __future__ import annotations

import sys

import torch

from harness.data import DatasetNotFoundError
from methods.dispat import PYOD_DETECTORS, DiSPaTConfig, LMDetectorConfig
from tasks.dispat.dataset import make_split, resolve_dataset
from tasks.dispat.runner import DetectorRunner, LLMSettings


def main() -> int:
    torch.set_num_threads(int(__import__("os").environ.get("OMP_NUM_THREADS", "2")))
    name = sys.argv[1] if len(sys.argv) > 1 else "42_WBC"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    try:
        ds = resolve_dataset(name)
    except DatasetNotFoundError:
        ds = resolve_dataset("wbc")
    lm_cfg = LMDetectorConfig(train_steps=steps, batch_size=4, max_train_rows=64, n_permutations=1)
    llm = LLMSettings(
        "default",
        lm_cfg,
        DiSPaTConfig(lm=lm_cfg, iterations=1, samples_per_iteration=4, steps_per_iteration=2),
        "standard",
        "letters",
    )
    full = {(ds.name, 0): make_split(ds, 0)}
    small = {(ds.name, 0): make_split(ds, 0, max_test_rows=40)}
    results = {}
    for method in PYOD_DETECTORS:
        r = DetectorRunner(full, nonfinite="fail", llm=llm, model_name=lambda: "default").run(
            ds.name, 0, method
        )
        results[method] = (
            r.fit_seconds,
            len(full[(ds.name, 0)].y_test) / max(r.score_seconds, 1e-9),
            r.error,
        )
    for method in ("AnoLLM", "DiSPaT"):
        r = DetectorRunner(small, nonfinite="fail", llm=llm, model_name=lambda: "default").run(
            ds.name, 0, method
        )
        results[method] = (r.fit_seconds, 40 / max(r.score_seconds, 1e-9), r.error)
    ok = {m: v for m, v in results.items() if m in PYOD_DETECTORS and v[2] is None}
    fastest = max(ok, key=lambda m: ok[m][1])
    print(
        f"dataset {ds.name}: n_train={len(full[(ds.name, 0)].X_train)} n_test={len(full[(ds.name, 0)].y_test)} "
        f"(LLM methods: 40 test rows, {steps} train steps, 1 permutation, threads={torch.get_num_threads()})"
    )
    print(f"{'method':<10}{'fit s':>10}{'rows/s':>14}{'rows/s ratio':>16}{'fit ratio':>12}")
    for m, (fit_s, rps, err) in results.items():
        if err:
            print(f"{m:<10} failed: {err}")
            continue
        print(
            f"{m:<10}{fit_s:>10.3f}{rps:>14.1f}{rps / ok[fastest][1]:>16.2e}{fit_s / max(ok[fastest][0], 1e-9):>12.1f}"
        )
    print(f"reference (ratio 1): fastest PyOD scorer = {fastest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
