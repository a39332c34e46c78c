"""Scorers: a verdict's rewards and judgment (verify), the loop's true outcome (tts)."""

from __future__ import annotations

import re

from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from methods.omniverifier import (
    META_IOU_THRESHOLD,
    MultiBox,
    Rationale,
    VerifierOutput,
    parse_verifier_output,
    sample_rewards,
)
from scorers.boxes import BoxFormat
from scorers.verification import tts_metrics, verification_metrics
from tasks.omniverifier.solver import TTS_KEY, ReplyFormat

__all__ = ["parse_yes_no", "tts_scorer", "verification_scorer"]

_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def parse_yes_no(reply: str) -> VerifierOutput:
    """reply_format=yes_no: the first "yes"/"no" word is the judgment (no think block, no box,
    so R_f = 0 and R_meta = 0: judgment skill measured apart from the M1 format)."""
    found = _YES_NO.search(reply or "")
    if found is None:
        return VerifierOutput(answer=None, problems=("no yes/no in the reply",), raw=reply or "")
    return VerifierOutput(answer=found.group(1).lower() == "yes", how="yes_no", raw=reply)


@scorer(metrics=[verification_metrics()])
def verification_scorer(
    *,
    rationale: Rationale,
    box_format: BoxFormat,
    multi_box: MultiBox,
    threshold: float = META_IOU_THRESHOLD,
    reply_format: ReplyFormat,
) -> Scorer:
    """Score value: ``judgment`` (R_acc), ``format`` (R_f), ``localised`` (R_meta; y = False
    samples with an annotated box), ``iou``, ``joint`` and the decoupled streams' sum and count;
    ``label`` 1 = consistent. An unusable reply is a scored failure (metadata ``failure``)."""

    async def score(state: TaskState, target: Target) -> Score:
        label_text = target.text.strip().lower()
        if label_text not in ("true", "false"):
            raise ValueError(
                f"sample {state.sample_id}: target must be 'true' or 'false', got {target.text!r}"
            )
        label = label_text == "true"
        gold = [tuple(b) for b in state.metadata.get("error_boxes", [])]
        size = (int(state.metadata["width"]), int(state.metadata["height"]))
        reply = state.output.completion if state.output else ""
        if reply_format == "yes_no":
            out = parse_yes_no(reply)
        else:
            out = parse_verifier_output(reply, image_size=size, box_format=box_format)
        has_box = (not label) and bool(gold)
        rewards = sample_rewards(
            out,
            label,
            gold,
            rationale=rationale,
            threshold=threshold,
            multi_box=multi_box,
        )
        decoupled = [r.reward for r in rewards.decoupled]
        value = {
            "judgment": rewards.r_acc,
            "format": rewards.r_format,
            "label": 1.0 if label else 0.0,
            "has_gold_box": 1.0 if has_box else 0.0,
            "localised": rewards.r_meta if has_box else 0.0,
            "iou": rewards.iou if has_box else 0.0,
            "joint": rewards.joint,
            "decoupled_sum": float(sum(decoupled)),
            "decoupled_n": float(len(decoupled)),
        }
        if out.answer is None:
            explanation = f"no usable verdict: {out.failure}"
        else:
            explanation = f"answer {out.answer} vs label {label}"
            if has_box:
                explanation += f"; IoU {rewards.iou:.3f} with {gold}; boxes {list(out.boxes)}"
        if out.problems:
            explanation += f" (parser: {'; '.join(out.problems)})"
        return Score(
            value=value,
            answer=None if out.answer is None else str(out.answer).lower(),
            explanation=explanation,
            metadata={
                "failure": out.failure,
                "format_problems": list(out.problems),
                "action": None if out.action is None else f"{out.action.type}: {out.action.text}",
                "pred_boxes": [list(b) for b in out.boxes],
            },
        )

    return score


@scorer(metrics=[tts_metrics()])
def tts_scorer() -> Scorer:
    """Score value: true success of M1-TTS and of best-of-N, rounds, generator calls, and the
    verifier's confusion counts inside both loops (truth = the exact check of each scene)."""

    async def score(state: TaskState, target: Target) -> Score:  # noqa: ARG001 - truth is the spec
        result = state.metadata.get(TTS_KEY)
        if not isinstance(result, dict):
            raise RuntimeError(f"sample {state.sample_id}: the TTS solver left no result")
        v = result["verifier"]
        value = {
            "tts_success": float(result["tts_success"]),
            "bon_success": float(result["bon_success"]),
            "tts_gain": float(result["tts_success"]) - float(result["bon_success"]),
            "initial_success": float(result["initial_success"]),
            "tts_rounds": float(result["tts_rounds"]),
            "tts_calls": float(result["tts_calls"]),
            "bon_calls": float(result["bon_calls"]),
            "verifier_tp": float(v["tp"]),
            "verifier_fp": float(v["fp"]),
            "verifier_fn": float(v["fn"]),
            "verifier_tn": float(v["tn"]),
            "generation_failures": float(result["generation_failures"]),
        }
        failure = None
        if (
            result["tts_calls"]
            and result["generation_failures"] >= result["tts_calls"] + result["bon_calls"]
        ):
            failure = (
                f"no usable scene description in any round: {result['first_generation_failure']}"
            )
        return Score(
            value=value,
            answer=result["final_scene"][:2000],
            explanation=(
                f"M1-TTS {'succeeded' if result['tts_success'] else 'failed'} in {result['tts_rounds']} "
                f"round(s) (verifier accepted: {result['tts_accepted']}); best-of-{result['bon_calls']} "
                f"{'succeeded' if result['bon_success'] else 'failed'}"
            ),
            metadata={
                "failure": failure,
                "verifier_no_verdict": v["no_verdict"],
                "tts_accepted": result["tts_accepted"],
                "bon_accepted": result["bon_accepted"],
            },
        )

    return score
