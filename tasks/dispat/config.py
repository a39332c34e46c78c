"""dispat's frozen config (one field per `@task` parameter) and its deviations, as data.

The detector configs (`LMDetectorConfig`, `DiSPaTConfig`) are built here once, for the task and
for `measure.py`'s grid alike (`DispatConfig.llm_settings`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.splits import SplitName, check_split
from methods.dispat import LLM_METHODS, PYOD_DETECTORS, DiSPaTConfig, LMDetectorConfig
from tasks._config import Deviation, TaskConfig
from tasks.dispat.runner import LLMSettings

__all__ = ["ALL_METHODS", "DEVIATIONS", "DispatConfig"]

ALL_METHODS: tuple[str, ...] = (*PYOD_DETECTORS, *LLM_METHODS)

# The choices below are those of methods.dispat (a test checks they agree).
NonFinite = Literal["fail", "max_finite"]
Finetune = Literal["full", "lora"]
ScoreTokens = Literal["values", "all"]
Binning = Literal["standard", "quantile", "equal_width", "language", "none"]
ColumnNames = Literal["dataset", "letters"]
FDivergenceName = Literal["kl", "reverse_kl", "pearson", "squared_hellinger", "js", "gan"]
DiSPaTObjective = Literal["f_gan", "spin"]
F1Rule = Literal["percentile", "top_k"]


@dataclass(frozen=True)
class DispatConfig(TaskConfig):
    """The `dispat` task's parameters (see the task's docstring), checked on construction."""

    method: str
    dataset: str
    seeds: list[int] | None
    nonfinite: NonFinite
    max_test_rows: int | None
    lm: str
    finetune: Finetune
    train_steps: int
    batch_size: int
    lr: float
    max_train_rows: int | None
    n_permutations: int
    score_tokens: ScoreTokens
    binning: Binning
    column_names: ColumnNames
    dispat_iterations: int
    dispat_samples: int
    dispat_steps: int
    f_divergence: FDivergenceName
    dispat_objective: DiSPaTObjective
    f1_threshold: F1Rule
    beta: float
    dispat_lr: float
    nll_weight: float
    temperature: float
    max_new_tokens: int | None
    split: SplitName

    def __post_init__(self) -> None:
        check_split(self.split, task="dispat")
        unknown = [m for m in self.methods if m not in ALL_METHODS]
        if unknown or not self.methods:
            raise ValueError(
                f"unknown method(s) {unknown or self.method!r}; choose from all, "
                f"{', '.join(ALL_METHODS)}"
            )
        seeds = self.seed_list
        if not seeds or len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds must be a non-empty list of distinct integers, got {seeds}")
        self.llm_settings()  # the detector configs check their own ranges here, at task load

    @property
    def methods(self) -> list[str]:
        if self.method.strip() == "all":
            return list(ALL_METHODS)
        return [m.strip() for m in self.method.split(",") if m.strip()]

    @property
    def seed_list(self) -> list[int]:
        return list(self.seeds) if self.seeds is not None else [0, 1, 2]

    @property
    def uses_llm(self) -> bool:
        return any(m in LLM_METHODS for m in self.methods)

    @property
    def shares_warm_start(self) -> bool:
        return "AnoLLM" in self.methods and "DiSPaT" in self.methods

    def llm_settings(self) -> LLMSettings:
        """What AnoLLM and DiSPaT are built from (the one place their configs are made)."""
        lm_config = LMDetectorConfig(
            train_steps=self.train_steps,
            batch_size=self.batch_size,
            lr=self.lr,
            finetune=self.finetune,
            max_train_rows=self.max_train_rows,
            n_permutations=self.n_permutations,
            score_tokens=self.score_tokens,
        )
        dispat_config = DiSPaTConfig(
            lm=lm_config,
            iterations=self.dispat_iterations,
            samples_per_iteration=self.dispat_samples,
            steps_per_iteration=self.dispat_steps,
            f_divergence=self.f_divergence,
            objective=self.dispat_objective,
            beta=self.beta,
            lr=self.dispat_lr,
            nll_weight=self.nll_weight,
            temperature=self.temperature,
            max_new_tokens=self.max_new_tokens,
        )
        return LLMSettings(self.lm, lm_config, dispat_config, self.binning, self.column_names)

    @property
    def lora_r(self) -> int:
        return self.llm_settings().config.lora_r

    @property
    def lora_alpha(self) -> int:
        return self.llm_settings().config.lora_alpha

    @property
    def objective_text(self) -> str:
        if self.dispat_objective == "spin":
            return (
                "SPIN's logistic loss on the real - synthetic gap (dispat_objective=spin, f unused)"
            )
        return f"f-GAN bound with f={self.f_divergence}"


def _llm(c: DispatConfig) -> bool:
    return c.uses_llm


#: Every way a run departs from AnoLLM / ADBench, in the order the log lists them.
DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "f1_threshold=top_k: F1 flags the top round-half-up(rate*n) scores, ties included "
        "(PyOD/ADBench flag scores > the (1-rate) percentile; F1 not comparable with theirs)",
        when=lambda c: c.f1_threshold == "top_k",
    ),
    Deviation(
        "nonfinite=max_finite: +inf/-inf detector scores mapped to max/min finite +/- 1",
        when=lambda c: c.nonfinite == "max_finite",
    ),
    Deviation(
        "max_test_rows={max_test_rows}: stratified subsample of each split's test rows",
        when=lambda c: c.max_test_rows is not None,
    ),
    Deviation(
        "lm={lm}: SmolLM2-135M-Instruct (embedded) instead of AnoLLM's SmolLM-135M/360M/1.7B",
        when=_llm,
    ),
    Deviation(
        "train_steps={train_steps} batch_size={batch_size} (AnoLLM: 2000 steps, batch 8)",
        when=_llm,
    ),
    Deviation(
        "max_train_rows={max_train_rows}: LM methods train on a subsample of the normal rows",
        when=_llm,
    ),
    Deviation("n_permutations={n_permutations} (AnoLLM ODDS script: 21)", when=_llm),
    Deviation(
        "finetune=lora r={lora_r} alpha={lora_alpha} (AnoLLM default: full; LoRA is its option)",
        when=lambda c: c.uses_llm and c.finetune == "lora",
    ),
    Deviation("lr={lr} (AnoLLM: 5e-5)", when=lambda c: c.uses_llm and c.lr != 5e-5),
    Deviation(
        "binning={binning} statistics fit on the training normals (AnoLLM fits on the whole table)",
        when=_llm,
    ),
    Deviation(
        "score_tokens=values: NLL summed over value tokens (AnoLLM repo sums all tokens for "
        "numeric-only tables)",
        when=lambda c: c.uses_llm and c.score_tokens == "values",
    ),
    Deviation(
        "DiSPaT objective inferred (no paper text/code): SPIN-style critic "
        "beta*log(pi_theta/pi_t), {objective_text}, warm start = AnoLLM fine-tuning, score = "
        "AnoLLM NLL; iterations={dispat_iterations} samples={dispat_samples} "
        "steps={dispat_steps}",
        when=lambda c: c.uses_llm and "DiSPaT" in c.methods,
    ),
)
