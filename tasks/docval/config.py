"""docval's frozen config (one field per `@task` parameter) and its deviations, as data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from methods.docval import BaselineRule, PromptStyle, ValConfig
from scorers.anls import AnlsVariant
from scorers.boxes import BoxFormat
from tasks._config import Deviation, TaskConfig
from tasks.docval.dataset import (
    LoadedDataset,
    Split,
    load_docvqa,
    load_rendered,
    load_sroie_samples,
)
from tasks.docval.render import Degradation
from tasks.docval.solver import FeedbackApplier, FeedbackSource, Method, ModelInput, OcrChoice

__all__ = ["DEVIATIONS", "DocvalConfig"]

DatasetName = Literal["rendered", "sroie", "docvqa"]


@dataclass(frozen=True)
class DocvalConfig(TaskConfig):
    """The `docval` task's parameters (see its docstring)."""

    dataset: DatasetName
    method: Method
    split: Split
    ocr_engine: OcrChoice
    answer_rule: BaselineRule
    model_input: ModelInput
    box_format: BoxFormat
    prompt_style: PromptStyle
    max_new_tokens: int
    feedback_source: FeedbackSource
    feedback_applier: FeedbackApplier
    feedback_rounds: int
    anls_variant: AnlsVariant
    q_min: float
    n_docs: int
    questions_per_doc: int
    degradation: Degradation
    seed: int
    limit_docs: int | None
    docvqa_file: str

    @property
    def val_config(self) -> ValConfig:
        return ValConfig(q_min=self.q_min, anls_variant=self.anls_variant)

    def load(self) -> LoadedDataset:
        """The questions of `dataset` on `split`; none at all is an error naming both."""
        if self.dataset == "rendered":
            loaded = load_rendered(
                self.n_docs,
                seed=self.seed,
                split=self.split,
                degradation=self.degradation,
                questions_per_doc=self.questions_per_doc,
            )
        elif self.dataset == "sroie":
            loaded = load_sroie_samples(self.split, limit_docs=self.limit_docs)
        else:
            loaded = load_docvqa(self.docvqa_file, self.split, limit_docs=self.limit_docs)
        if not loaded.samples:
            raise ValueError(f"docval: dataset={self.dataset} split={self.split} has no questions")
        return loaded


def _feedback(c: DocvalConfig) -> bool:
    return c.method == "feedback"


#: Every way a run departs from DocVAL, in the order the log lists them.
DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "ocr_engine=gold: the source's own word boxes replace the text detector (an oracle OCR)",
        when=lambda c: c.ocr_engine == "gold",
    ),
    Deviation(
        "ocr_engine={ocr_engine}: OCR regions from {ocr_engine} instead of docTR DB-ResNet50",
        when=lambda c: c.ocr_engine != "gold",
    ),
    Deviation(
        "dataset=rendered: generated documents stand in for DocVQA/FUNSD/CORD",
        when=lambda c: c.dataset == "rendered",
    ),
    Deviation(
        "sroie answer boxes matched from line annotations (union of lines; one line cut by "
        "character share); equally good boxes kept as alternatives, IoU with the best",
        when=lambda c: c.dataset == "sroie",
    ),
    Deviation(
        "method=ocr: a rule-based OCR reader (answer_rule={answer_rule}), no model",
        when=lambda c: c.method == "ocr",
    ),
    Deviation(
        "model_input=ocr: the model reads OCR lines with boxes instead of the image (text-only)",
        when=lambda c: c.method in ("model", "feedback") and c.model_input == "ocr",
    ),
    Deviation(
        "feedback at test time with label-free checks only (DocVAL trains on VAL feedback "
        "instead); applier={feedback_applier}, rounds={feedback_rounds}",
        when=lambda c: _feedback(c) and c.feedback_source == "gold_free",
    ),
    Deviation(
        "feedback_source=oracle: VAL's gold feedback reaches the model — a leakage control, not "
        "comparable with DocVAL's numbers",
        when=lambda c: _feedback(c) and c.feedback_source != "gold_free",
    ),
    Deviation(
        "method=distill: the teacher is role.teacher (default: the model under test)",
        when=lambda c: c.method == "distill",
    ),
    Deviation(
        "anls_variant=docval_repo: 1 - NL, no tau cut-off, first answer only",
        when=lambda c: c.anls_variant != "standard",
    ),
    Deviation("q_min={q_min} (paper 0.85)", when=lambda c: c.q_min != 0.85),
    Deviation(
        "box_format={box_format}: the model reads and writes scaled boxes",
        when=lambda c: c.box_format != "pixels",
    ),
)
