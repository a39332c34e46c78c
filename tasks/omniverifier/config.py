"""omniverifier's frozen config (one field per `@task` parameter) and its deviations, as data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.splits import SplitName
from methods.omniverifier import MultiBox
from scorers.boxes import BoxFormat
from tasks._config import Deviation, TaskConfig
from tasks.omniverifier.scenes import ERROR_TYPES
from tasks.omniverifier.solver import Observation, Rationale, ReplyFormat, VerifierName
from tasks.omniverifier.split import check_dataset_split, load_seed_ranges
from tasks.omniverifier.tts import EditScope

__all__ = ["DEVIATIONS", "OmniConfig"]

Mode = Literal["verify", "tts"]
DatasetName = Literal["generated", "viverbench", "quokka"]
Level = Literal["easy", "medium", "hard"]
Generator = Literal["model", "simulated"]


@dataclass(frozen=True)
class OmniConfig(TaskConfig):
    """The `omniverifier` task's parameters (see its docstring), checked on construction."""

    mode: Mode
    verifier: VerifierName
    dataset: DatasetName
    level: Level
    split: str
    n: int
    seed: int | None
    error_types: str
    observation: Observation
    rationale: Rationale
    box_format: BoxFormat
    multi_box: MultiBox
    max_tokens: int
    reply_format: ReplyFormat
    generator: Generator
    max_rounds: int
    edit_scope: EditScope
    p_error: float
    generator_max_tokens: int
    data_file: str | None

    def __post_init__(self) -> None:
        check_dataset_split(self.dataset, self.split)
        if self.dataset == "generated":
            self.scene_seed  # noqa: B018 - a seed off the split's range is an error at task load
        types = self.types
        unknown = sorted(set(types) - set(ERROR_TYPES))
        if unknown or not types:
            raise ValueError(
                f"error_types: unknown {unknown or 'empty'}; choose from {', '.join(ERROR_TYPES)}"
            )
        if self.n < 1:
            raise ValueError(f"n must be ≥ 1, got {self.n}")
        if self.max_rounds < 1:
            raise ValueError(f"max_rounds must be ≥ 1, got {self.max_rounds}")
        if not 0.0 <= self.p_error <= 1.0:
            raise ValueError(f"p_error must lie in [0, 1], got {self.p_error}")
        if self.mode == "tts" and self.dataset != "generated":
            raise ValueError("mode=tts draws generated scenes; use dataset=generated")
        if self.dataset != "generated":
            if self.observation != "image" and self.verifier == "model":
                raise ValueError(
                    f"dataset={self.dataset} has real images: use observation=image with a VLM "
                    "(the object detector only knows the generated scenes' vocabulary)"
                )
            if self.verifier in ("classical", "oracle"):
                raise ValueError(
                    f"verifier={self.verifier} needs generated scenes (dataset=generated)"
                )
        if self.reply_format == "yes_no" and self.mode == "tts":
            raise ValueError("reply_format=yes_no gives no box to edit: use mode=verify")

    @property
    def split_name(self) -> SplitName:
        return check_dataset_split(self.dataset, self.split)

    @property
    def scene_seed(self) -> int:
        """The seed the scenes (and the TTS loop) draw from: `seed` on the split's seed range,
        or the split's first seed (dev 0, test 1000; tasks/omniverifier/splits.yaml)."""
        return load_seed_ranges().scene_seed(self.seed, self.split_name)

    @property
    def types(self) -> list[str]:
        """The injected error types, in turn."""
        return [t.strip() for t in self.error_types.split(",") if t.strip()]


def _tts(c: OmniConfig) -> bool:
    return c.mode == "tts"


#: Every way a run departs from OmniVerifier-M1, in the order the log lists them.
DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "dataset=generated: seeded synthetic scenes with one injected error stand in for "
        "ViVerBench (not reachable offline); subtasks mapped to ViVerBench names where they fit",
        when=lambda c: c.dataset == "generated",
    ),
    Deviation(
        "viverbench: rule-based score only (no GPT-4.1 explanation judge)",
        when=lambda c: c.dataset == "viverbench",
    ),
    Deviation(
        "observation=objects: the text-only model reads the classical detector's object list "
        "with pixel boxes instead of the image",
        when=lambda c: c.observation == "objects" and c.verifier == "model",
    ),
    Deviation(
        "reply_format=yes_no: one-word judgment instead of <think>+JSON (no box, R_f = R_meta = 0)",
        when=lambda c: c.reply_format == "yes_no",
    ),
    Deviation(
        "rationale=point: meta reward = point inside the annotated box",
        when=lambda c: c.rationale == "point",
    ),
    Deviation(
        "multi_box={multi_box}: several boxes compared by their best pair",
        when=lambda c: c.multi_box != "enclosing",
    ),
    Deviation(
        "generator=simulated: prompt-following layouts with a random error (p={p_error}) stand "
        "in for an image generator; edits redraw only the flagged region",
        when=lambda c: _tts(c) and c.generator == "simulated",
    ),
    Deviation(
        "generator=model: the model writes a scene description (JSON) that the renderer draws, "
        "instead of an image generator",
        when=lambda c: _tts(c) and c.generator != "simulated",
    ),
    Deviation(
        "edit_scope=free: the generator may rewrite the whole scene",
        when=lambda c: _tts(c) and c.edit_scope == "free",
    ),
)
