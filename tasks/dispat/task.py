"""dispat: LLM tabular anomaly detection (DiSPaT self-play, AnoLLM) against PyOD baselines.

Paper: "f-Divergence Self-Play for Tabular Anomaly Detection via Large Language Models"
(DiSPaT, ICML 2026), compared with AnoLLM (ICLR 2025) and classical detectors. One sample = one
test row; each detector is fit once per (dataset, seed) split on normal training rows only and
scores every test row (higher = more anomalous). Metrics: AUROC, AUPR, F1 at the contamination
threshold per dataset and method, mean and t-interval over seeds (see scorer.py for the shape).
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from harness.records import task_metadata
from harness.splits import SplitName, load_source_split, split_metadata
from tasks._config import deviations
from tasks.dispat.config import (
    ALL_METHODS,
    DEVIATIONS,
    Binning,
    ColumnNames,
    DispatConfig,
    DiSPaTObjective,
    F1Rule,
    FDivergenceName,
    Finetune,
    NonFinite,
    ScoreTokens,
)
from tasks.dispat.dataset import (
    Split,
    make_split,
    record_to_sample,
    resolve_dataset,
    select_datasets,
    split_records,
)
from tasks.dispat.runner import DetectorRunner
from tasks.dispat.scorer import anomaly_scores, leaderboard
from tasks.dispat.solver import current_model_name, detector_scores

__all__ = ["ALL_METHODS", "RUN_ALL_ARGS", "TASK_VERSION", "dispat"]

# 1.1.0: F1 at the contamination threshold uses PyOD's percentile rule by default (f1_threshold);
# DiSPaT's objective is a parameter (dispat_objective=spin is SPIN's loss).
TASK_VERSION = "1.1.0"
#: `make run`: bundled wbc, every method, one seed, 6 test rows (5 normal, 1 anomaly) and the
#: smallest LLM budgets that still run every step of AnoLLM and DiSPaT: 2 LoRA fine-tuning steps
#: of one row, 1 self-play iteration of 1 synthetic row (16 tokens) and 2 policy steps, 1
#: permutation. The LLM forward passes are the task's time (~200 tokens/s on one float32
#: thread), so the rows are kept short: letters instead of the 30 long WDBC feature names and
#: AnoLLM's `language` binning (~135 tokens per wbc row; `standard`'s "-0.8" values make it
#: ~210). LoRA keeps the fine-tuning memory small beside the other tasks' model servers.
RUN_ALL_ARGS: dict = {
    "dataset": "wbc",
    "method": "all",
    "seeds": [0],
    "max_test_rows": 6,
    "column_names": "letters",
    "binning": "language",
    "train_steps": 2,
    "batch_size": 1,
    "n_permutations": 1,
    "dispat_iterations": 1,
    "dispat_samples": 1,
    "dispat_steps": 2,
    "max_new_tokens": 16,
    "finetune": "lora",
    "lr": 1e-4,
    "dispat_lr": 1e-4,
    "split": "dev",  # wbc is a dev dataset (splits.yaml): the smoke run says so
}


def _cut(
    names: list[str], cfg: DispatConfig
) -> tuple[dict[tuple[str, int], Split], list[Sample], list[str], list[str]]:
    """Every dataset's train/test cut per seed, their samples, sources and content hashes."""
    splits: dict[tuple[str, int], Split] = {}
    samples: list[Sample] = []
    sources, hashes = [], []
    for name in names:
        ds = resolve_dataset(name)
        sources.append(f"{ds.name}: {ds.source}")
        hashes.append(f"{ds.name}={ds.content_hash}")
        for seed in cfg.seed_list:
            cut = make_split(ds, seed, max_test_rows=cfg.max_test_rows)
            splits[(ds.name, seed)] = cut
            samples.extend(record_to_sample(r) for r in split_records(cut))
    return splits, samples, sources, hashes


@task
def dispat(
    method: str = "all",
    dataset: str = "wbc",
    seeds: list[int] | None = None,
    nonfinite: NonFinite = "fail",
    max_test_rows: int | None = None,
    lm: str = "default",
    finetune: Finetune = "full",
    train_steps: int = 30,
    batch_size: int = 4,
    lr: float = 5e-5,
    max_train_rows: int | None = 128,
    n_permutations: int = 3,
    score_tokens: ScoreTokens = "values",
    binning: Binning = "standard",
    column_names: ColumnNames = "dataset",
    dispat_iterations: int = 2,
    dispat_samples: int = 8,
    dispat_steps: int = 4,
    f_divergence: FDivergenceName = "js",
    dispat_objective: DiSPaTObjective = "f_gan",
    f1_threshold: F1Rule = "percentile",
    beta: float = 0.1,
    dispat_lr: float = 5e-5,
    nll_weight: float = 0.0,
    temperature: float = 1.0,
    max_new_tokens: int | None = None,
    split: SplitName = "test",
) -> Task:
    """Tabular anomaly detection: AnoLLM, DiSPaT and PyOD baselines on ADBench/ODDS sets.

    Args:
    method: ``all``, or comma-separated names among IForest, LOF, KNN, ECOD, COPOD, OCSVM, PCA,
        HBOS, AnoLLM, DiSPaT.
    dataset: ``wbc`` (bundled sklearn recipe), an ADBench name (``42_WBC``), ``adbench`` (the
        16), ``all`` (wbc + 16), a path to .npz/.mat/.csv, or a comma-separated list.
    seeds: split seeds (default 0,1,2).
    nonfinite: ``fail`` (a detector returning NaN/inf fails that split, with the reason) or
        ``max_finite`` (+inf -> max finite + 1, the anchor table's rule; NaN still fails).
    max_test_rows: stratified cap on test rows per split (a deviation, for LLM budgets).
    lm: ``default`` (embedded SmolLM2-135M-Instruct), ``model_under_test`` (the eval's local HF
        model via the white-box handle), or a local HF path.
    finetune: ``full`` (AnoLLM default) or ``lora`` (r=8, alpha=32).
    train_steps / batch_size / lr / max_train_rows: LM fine-tuning budget (AnoLLM: 2000 / 8 /
        5e-5 / all rows).
    n_permutations: column orders averaged at scoring (AnoLLM ODDS script: 21).
    score_tokens: ``values`` (NLL of value tokens) or ``all`` (every token, the AnoLLM repo's
        numeric-only path).
    binning: standard, quantile, equal_width, language, none.
    column_names: ``dataset`` (names from the source when it has them) or ``letters``.
    dispat_iterations / dispat_samples / dispat_steps: self-play iterations, synthetic rows per
        iteration, policy steps per iteration.
    f_divergence: kl, reverse_kl, pearson, squared_hellinger, js, gan (for ``f_gan``).
    dispat_objective: ``f_gan`` (the inferred DiSPaT objective, the f-GAN bound with
        ``f_divergence``) or ``spin`` (SPIN's logistic loss on the real − synthetic gap, f-free).
    f1_threshold: ``percentile`` (PyOD's rule: scores strictly above the (1 − rate) percentile
        are flagged; the default, as the PyOD baselines' published F1) or ``top_k`` (the top
        k = round-half-up(rate × n) scores, ties at the k-th all flagged).
    beta / dispat_lr / nll_weight / temperature / max_new_tokens: critic scale, self-play learning
        rate, weight of the real-row NLL term, sampling temperature, synthetic row length cap.
    split: ``test`` (default), ``dev`` or ``all``: ``adbench``/``all`` keep the datasets on that
        side of the frozen split (``splits.yaml``, by dataset; sets of one collection together);
        a dataset named on its own runs whatever its side, with a note, and the log records the
        side its data is on.
    """
    cfg = DispatConfig.from_params(locals())
    frozen = load_source_split("dispat")
    chosen = select_datasets(cfg.dataset, cfg.split, frozen)
    splits, samples, sources, hashes = _cut(chosen.names, cfg)
    runner = DetectorRunner(
        splits,
        nonfinite=cfg.nonfinite,
        llm=cfg.llm_settings(),
        model_name=current_model_name,
        share_warm_start=cfg.shares_warm_start,
    )
    return Task(
        dataset=MemoryDataset(samples, name=f"dispat:{cfg.dataset}"),
        solver=detector_scores(runner, cfg.methods),
        scorer=anomaly_scores(),
        metrics=[leaderboard(f1_threshold=cfg.f1_threshold)],
        version=TASK_VERSION,
        metadata=task_metadata(
            dataset_source="; ".join(sources),
            dataset_hash="; ".join(hashes),
            deviations=deviations(cfg, DEVIATIONS),
            methods=cfg.methods,
            seeds=cfg.seed_list,
            f1_threshold=cfg.f1_threshold,
            score_convention="higher = more anomalous",
            protocol=_PROTOCOL,
            leaderboard_keys=_LEADERBOARD_KEYS,
            **split_metadata(chosen.data_split, frozen),
            data_split_asked=cfg.split,
            data_split_sides=chosen.sides,
            data_split_notes=chosen.notes,
        ),
    )


_PROTOCOL = (
    "AnoLLM semi_supervised: train = floor(n_normal/2) normals permuted by RandomState(seed); "
    "test = other normals + all anomalies; StandardScaler fit on train (PyOD)"
)
_LEADERBOARD_KEYS = (
    "{dataset}/{method}/{auroc|aupr|f1}[_lo|_hi], /n_seeds, /n_failed, /fit_s, /rows_per_s; "
    "{method}/{auroc|aupr|f1}, /n_datasets"
)
