"""Grounding-signal measurement on rendered data: Thm 5.3 and the SNR under joint vs decoupled.

For each level, the classical verifier (or the per-sample scores of an eval log) gives, on every
y = False sample, R_acc (right judgment) and R_meta (IoU ≥ 0.6). The classical verifier is run
at several decision thresholds (False above t violations), which lowers p_acc on the false
samples while its boxes stay the same — the regime the theorem is about. The grounding signal is
``G_joint = R_acc · R_meta`` under the joint reward and ``G_dec = R_meta`` in the decoupled
grounding stream. Printed per level: p_acc, both sides of Thm 5.3 on the paired streams (and
the remainder their dependence leaves), both sides on the product distribution (exact), the SNR
of each scheme and Cor 5.4's bound p_acc · SNR_dec, and the mean joint / decoupled rewards.

    python -m tasks.omniverifier.measure --pairs 70 --levels easy,medium,hard
    python -m tasks.omniverifier.measure --from-log logs/<file>.eval
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence

import numpy as np

from methods.omniverifier import (
    ClassicalVerifier,
    decoupled_rewards,
    format_reward,
    joint_reward,
    meta_reward,
)
from scorers.verification import macro_accuracy, thm53, thm53_independent
from tasks.omniverifier.render import render
from tasks.omniverifier.scenes import ERROR_TYPES, SUBTASK_OF, make_pair

__all__ = ["main", "measure_level", "streams", "summarise"]


def measure_level(level: str, pairs: int, seed: int = 0) -> dict[str, list]:
    """Per-sample classical-verifier outputs on ``pairs`` rendered pairs: its violation count
    (decision score), whether its first violation's box meets IoU ≥ 0.6, the label, the subtask
    and the format reward."""
    verifier = ClassicalVerifier()
    rows: dict[str, list] = {k: [] for k in ("label", "score", "box_hit", "format", "subtask")}
    for i in range(pairs):
        pair = make_pair(seed, i, level, ERROR_TYPES[i % len(ERROR_TYPES)])
        for label, scene in ((True, pair.consistent), (False, pair.erroneous)):
            out = verifier.verify(render(scene).pixels, pair.spec)
            rows["label"].append(label)
            rows["score"].append(float(out.score or 0.0))
            rows["box_hit"].append(0.0 if label else meta_reward(out, [pair.error_box]))
            rows["format"].append(format_reward(out))
            rows["subtask"].append(SUBTASK_OF[pair.error_type])
    return rows


def streams(rows: Mapping[str, Sequence], threshold: int) -> dict[str, list]:
    """The reward streams when the verifier answers False above ``threshold`` violations.

    The box (first violation) does not depend on the threshold: the decoupled grounding stream
    rewards it on every y = False sample, the joint reward only where the judgment is right.
    """
    out: dict[str, list] = {k: [] for k in ("label", "r_acc", "r_meta", "joint", "dec", "subtask")}
    for label, score, hit, fmt, subtask in zip(
        rows["label"], rows["score"], rows["box_hit"], rows["format"], rows["subtask"], strict=True
    ):
        r_acc = 1.0 if (score <= threshold) == label else 0.0
        r_meta = 0.0 if label else hit
        out["label"].append(label)
        out["r_acc"].append(r_acc)
        out["r_meta"].append(r_meta)
        out["joint"].append(joint_reward(fmt, r_acc, r_meta, label))
        out["dec"].extend(s.reward for s in decoupled_rewards(fmt, r_acc, r_meta, label))
        out["subtask"].append(subtask)
    return out


def summarise(rows: Mapping[str, Sequence]) -> dict[str, float]:
    label = np.asarray(rows["label"], dtype=bool)
    acc = np.asarray(rows["r_acc"], dtype=float)
    meta = np.asarray(rows["r_meta"], dtype=float)
    paired = thm53(acc[~label], meta[~label])
    product = thm53_independent(acc[~label], meta[~label])
    macro, _ = macro_accuracy(acc.tolist(), list(rows["subtask"]))
    return {
        "n": float(label.size),
        "n_false": float((~label).sum()),
        "macro_acc": macro,
        "micro_acc": float(acc.mean()),
        "localisation": float(meta[~label].mean()),
        "p_acc_false": paired.p_acc,
        "var_joint": paired.var_joint,
        "thm53_rhs": paired.rhs,
        "dependence": paired.dependence,
        "product_var_joint": product.var_joint,
        "product_rhs": product.rhs,
        "snr_joint": paired.snr_joint,
        "snr_dec": paired.snr_dec,
        "bound_p_snr_dec": paired.p_acc * paired.snr_dec,
        "joint_reward": float(np.mean(rows["joint"])),
        "decoupled_reward": float(np.mean(rows["dec"])),
    }


def _from_log(path: str) -> dict[str, list]:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(path)
    rows: dict[str, list] = {k: [] for k in ("label", "r_acc", "r_meta", "joint", "dec", "subtask")}
    for s in log.samples or []:
        score = (s.scores or {}).get("verification_scorer")
        if score is None or not isinstance(score.value, dict):
            continue
        v = score.value
        label = bool(v["label"])
        if not label and not v.get("has_gold_box", 1.0):
            continue
        rows["label"].append(label)
        rows["r_acc"].append(float(v["judgment"]))
        rows["r_meta"].append(float(v["localised"]))
        rows["joint"].append(float(v["joint"]))
        rows["dec"].append(float(v["format"]) + float(v["judgment"]))
        if not label:
            rows["dec"].append(float(v["format"]) + float(v["localised"]))
        rows["subtask"].append(str((s.metadata or {}).get("subtask", "all")))
    return rows


_COLUMNS = (
    "n", "macro_acc", "micro_acc", "localisation", "p_acc_false", "var_joint", "thm53_rhs",
    "dependence", "product_var_joint", "product_rhs", "snr_joint", "snr_dec", "bound_p_snr_dec",
    "joint_reward", "decoupled_reward",
)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=70, help="scene pairs per level")
    parser.add_argument("--levels", default="easy,medium,hard")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--thresholds",
        default="0,1,2",
        help="the classical verifier answers False above this many violations (0 = its default)",
    )
    parser.add_argument(
        "--from-log", default=None, help="read the streams from an eval log instead"
    )
    args = parser.parse_args(argv)
    if args.from_log:
        results = {args.from_log: summarise(_from_log(args.from_log))}
    else:
        results = {}
        thresholds = [int(t) for t in args.thresholds.split(",") if t.strip()]
        for level in [x.strip() for x in args.levels.split(",") if x.strip()]:
            rows = measure_level(level, args.pairs, args.seed)
            for t in thresholds:
                results[f"{level}, t={t}"] = summarise(streams(rows, t))
            print(f"{level}: done", file=sys.stderr)
    print("| set | " + " | ".join(_COLUMNS) + " |")
    print("|---" * (len(_COLUMNS) + 1) + "|")
    for name, r in results.items():
        print(f"| {name} | " + " | ".join(f"{r[c]:.4g}" for c in _COLUMNS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
