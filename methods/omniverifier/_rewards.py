"""OmniVerifier-M1's rule-based rewards and their two compositions (paper §4–5, App. B.1).

- ``R_f`` (format): 1 when the reply is exactly ``<think>…</think>`` then a non-empty JSON
  answer (``VerifierOutput.format_ok``).
- ``R_acc`` (accuracy): 1[ŷ = y]; no usable answer counts as wrong.
- ``R_meta`` (symbolic meta reward), only for y = False:
  - box rationale: 1[IoU(ê, b*) ≥ 0.6] — the continuous IoU is gated to binary (App. B.1);
  - point rationale: 1[the predicted point lies inside b*].
  **Several boxes** (the stated rule): the predicted boxes are merged into their enclosing box
  and so are the annotated ones, and the IoU is taken between the two enclosing boxes
  (``multi_box="enclosing"``, as DLaVA's box script merges several boxes). The alternative
  ``multi_box="best_match"`` takes the largest IoU over all (predicted, annotated) pairs. No
  predicted box, or no annotated box, gives IoU 0. For points: the first predicted point, a hit
  when it lies inside any annotated box (edges count).
- **Joint** (eq. 5): ``R_f + R_acc · (1[y=True] + 1[y=False] · R_meta)`` — the meta reward only
  counts when the judgment is right, so its gradient is gated by p_acc.
- **Decoupled**: every sample enters the judgment stream with ``R_f + R_acc``; every y = False
  sample is *duplicated* into a grounding stream with ``R_f + R_meta``. A batch of B samples at
  1:1 True/False becomes 1.5·B rewards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from methods.omniverifier._parse import VerifierOutput
from scorers.boxes import enclosing_box, iou, iou_matrix, point_in_box

__all__ = [
    "META_IOU_THRESHOLD",
    "MultiBox",
    "Rationale",
    "SampleRewards",
    "StreamReward",
    "accuracy_reward",
    "box_iou",
    "decoupled_rewards",
    "format_reward",
    "joint_reward",
    "meta_reward",
    "point_reward",
    "sample_rewards",
]

#: The paper's gate on IoU for the box meta reward.
META_IOU_THRESHOLD = 0.6
# IoUs computed in floating point from an exact 3:5 overlap can land a hair below 0.6.
_EPS = 1e-12

MultiBox = Literal["enclosing", "best_match"]
Rationale = Literal["bbox", "point"]
Box = Sequence[float]


def format_reward(out: VerifierOutput) -> float:
    """R_f."""
    return 1.0 if out.format_ok else 0.0


def accuracy_reward(out: VerifierOutput, label: bool) -> float:
    """R_acc = 1[ŷ = y]; an unusable reply (``answer is None``) is wrong."""
    return 1.0 if out.answer is not None and out.answer == label else 0.0


def box_iou(pred: Sequence[Box], gold: Sequence[Box], multi_box: MultiBox = "enclosing") -> float:
    """IoU between predicted and annotated boxes under the several-boxes rule (0 if either is empty)."""
    if not pred or not gold:
        return 0.0
    if multi_box == "enclosing":
        return iou(enclosing_box(pred), enclosing_box(gold))
    if multi_box == "best_match":
        return float(iou_matrix(pred, gold).max())
    raise ValueError(f"multi_box must be 'enclosing' or 'best_match', got {multi_box!r}")


def point_reward(out: VerifierOutput, gold: Sequence[Box]) -> float:
    """1 when the first predicted point lies inside any annotated box."""
    if not out.points or not gold:
        return 0.0
    return 1.0 if any(point_in_box(out.points[0], b) for b in gold) else 0.0


def meta_reward(
    out: VerifierOutput,
    gold: Sequence[Box],
    *,
    rationale: Rationale = "bbox",
    threshold: float = META_IOU_THRESHOLD,
    multi_box: MultiBox = "enclosing",
) -> float:
    """R_meta: IoU ≥ ``threshold`` (box rationale) or point-in-box (point rationale)."""
    if rationale == "point":
        return point_reward(out, gold)
    if rationale != "bbox":
        raise ValueError(f"rationale must be 'bbox' or 'point', got {rationale!r}")
    return 1.0 if box_iou(out.boxes, gold, multi_box) >= threshold - _EPS else 0.0


def joint_reward(r_f: float, r_acc: float, r_meta: float, label: bool) -> float:
    """Eq. 5: R_f + R_acc · (1[y=True] + 1[y=False] · R_meta)."""
    return r_f + r_acc * (1.0 if label else r_meta)


@dataclass(frozen=True)
class StreamReward:
    """One reward of the decoupled batch: which stream it feeds and its value."""

    stream: Literal["judgment", "grounding"]
    reward: float


def decoupled_rewards(r_f: float, r_acc: float, r_meta: float, label: bool) -> list[StreamReward]:
    """The judgment reward R_f + R_acc, plus R_f + R_meta on a duplicate when y = False."""
    out = [StreamReward("judgment", r_f + r_acc)]
    if not label:
        out.append(StreamReward("grounding", r_f + r_meta))
    return out


@dataclass(frozen=True)
class SampleRewards:
    """All rewards of one verifier reply on one sample."""

    label: bool
    r_format: float
    r_acc: float
    r_meta: float  # 0 for y = True samples (no error to localise)
    iou: float  # the continuous IoU behind the box reward (0 for y = True)
    joint: float
    decoupled: tuple[StreamReward, ...]


def sample_rewards(
    out: VerifierOutput,
    label: bool,
    gold: Sequence[Box] = (),
    *,
    rationale: Rationale = "bbox",
    threshold: float = META_IOU_THRESHOLD,
    multi_box: MultiBox = "enclosing",
) -> SampleRewards:
    """Every reward for one reply; ``gold`` are the annotated error boxes (y = False; none
    annotated → R_meta = 0)."""
    r_f = format_reward(out)
    r_acc = accuracy_reward(out, label)
    if label:
        r_meta, overlap = 0.0, 0.0
    else:
        overlap = box_iou(out.boxes, gold, multi_box)
        r_meta = meta_reward(
            out, gold, rationale=rationale, threshold=threshold, multi_box=multi_box
        )
    return SampleRewards(
        label=label,
        r_format=r_f,
        r_acc=r_acc,
        r_meta=r_meta,
        iou=overlap,
        joint=joint_reward(r_f, r_acc, r_meta, label),
        decoupled=tuple(decoupled_rewards(r_f, r_acc, r_meta, label)),
    )
