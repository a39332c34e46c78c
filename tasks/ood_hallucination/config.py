"""ood_hallucination's frozen config (one field per `@task` parameter) and its deviations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.splits import SplitName, check_split
from methods.ood import DEFAULT_DETECTORS, GREYBOX_DETECTORS, Aggregation
from tasks._config import Deviation, TaskConfig
from tasks.ood_hallucination.dataset import PromptStyle
from tasks.ood_hallucination.solver import FeatureMode

__all__ = ["DEVIATIONS", "DatasetName", "OodConfig"]

DatasetName = Literal["generated", "gsm8k", "csqa", "aqua"]  # = dataset.DATASETS (tested)

_DEFAULT_MAX_TOKENS = {"generated": 64, "gsm8k": 256, "csqa": 256, "aqua": 256}


@dataclass(frozen=True)
class OodConfig(TaskConfig):
    """The `ood_hallucination` task's parameters (see its docstring), checked on construction."""

    dataset: DatasetName
    n_generated: int
    seed: int
    detectors: str
    aggregation: Aggregation
    last_k: int
    max_new_tokens: int | None
    prompt_style: PromptStyle | None
    features: FeatureMode
    data_file: str | None
    n_boot: int
    system_prompt: str | None
    batch_size: int
    top_logprobs: int
    split: SplitName

    def __post_init__(self) -> None:
        check_split(self.split, task="ood_hallucination")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be ≥ 1; got {self.batch_size}")
        specs = self.specs
        if self.features == "greybox" and not set(specs) <= set(GREYBOX_DETECTORS):
            raise ValueError(
                f"features=greybox supports only {', '.join(GREYBOX_DETECTORS)}; got {specs}"
            )
        if not specs:
            raise ValueError("detectors is empty")
        if len(set(specs)) != len(specs):
            raise ValueError(f"detectors has duplicates: {specs}")

    @property
    def specs(self) -> list[str]:
        """The detector specs: the comma list, or every grey-box one for `features=greybox`
        with the default list."""
        if self.features == "greybox" and self.detectors == ",".join(DEFAULT_DETECTORS):
            return list(GREYBOX_DETECTORS)
        return [s.strip() for s in self.detectors.split(",") if s.strip()]

    @property
    def max_tokens(self) -> int:
        return self.max_new_tokens or _DEFAULT_MAX_TOKENS[self.dataset]


#: Every way a run departs from the paper; `prompt_style` in the context is the one the dataset
#: resolved (its default depends on the dataset).
DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "dataset=generated: seeded arithmetic questions stand in for CSQA/GSM8K/AQuA (the "
        "embedded 135M model is at ~3% on GSM8K)",
        when=lambda c: c.dataset == "generated",
    ),
    Deviation(
        "prompt_style=short: 'End your reply with The answer is N' instead of the paper's "
        "chain-of-thought prompt",
        when=lambda _, prompt_style: prompt_style == "short",
    ),
    Deviation(
        "aggregation={aggregation}: the paper averages over all tokens",
        when=lambda c: c.aggregation != "mean",
    ),
    Deviation(
        "features=teacher_forced: features re-read from the answer, not recorded during generation",
        when=lambda c: c.features == "teacher_forced",
    ),
    Deviation(
        "features=greybox: only baselines from the top-{top_logprobs} logprobs (no NCI/fDBD); "
        "entropy truncated to the top-k",
        when=lambda c: c.features == "greybox",
    ),
    Deviation(
        "fdbd k fixed per detector (reported for each k) rather than chosen on a validation set",
        when=lambda c: any(s.startswith("fdbd@") for s in c.specs),
    ),
)
