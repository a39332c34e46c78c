"""Log folders shaped like a new user's first hour (issue 31): `make run`, fourteen small runs.

Toy tasks named after the project's tasks (``dispat``, ``ood_hallucination``, ``agent_stress``)
write the result keys and per-sample values of the real scorers, so the packaged
``leaderboard.yaml`` and ``reference.yaml`` of those tasks apply; no model is run (the scripted
provider stands in, or the solver writes the answer itself).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from _toy_logs import _qa_responder, _run, correct_toy, qa_flaky, qa_toy
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import Score, Target, metric, scorer
from inspect_ai.solver import Generate, TaskState, solver
from sklearn.metrics import average_precision_score, roc_auc_score

DISPAT_METHODS = ("COPOD", "ECOD", "HBOS", "IForest", "KNN", "LOF", "OCSVM", "PCA")
DISPAT_LLM = ("AnoLLM", "DiSPaT")
OOD_DETECTORS = (
    "nci",
    "fdbd@5",
    "perplexity",
    "msp",
    "entropy",
    "max_logit",
    "energy",
    "mahalanobis",
)
# What `harness eval` records beside inspect's own header (harness.cli.eval).
HARNESS_META = {"harness_version": "0.1", "harness_constrained": {"constrained": "off"}}
CONSTRAINED_META = {"harness_version": "0.1", "harness_constrained": {"constrained": "on"}}


def _items(scores: list[Any]) -> list[Score]:
    return [getattr(s, "score", s) for s in scores]


def _auc(kind: str, y: list[int], x: list[float]) -> float:
    if len(set(y)) < 2:
        return math.nan
    return float(roc_auc_score(y, x) if kind == "auroc" else average_precision_score(y, x))


@solver
def _idle():
    """No model call: the scorer reads what it needs from the sample."""

    async def solve(state: TaskState, generate_fn: Generate) -> TaskState:
        return state

    return solve


def _score_for(method_index: int, label: int, i: int, strength: float = 1.0) -> float:
    noise = ((i * 37 + method_index * 11) % 13) / 13.0
    return round(label * strength * (0.3 + 0.1 * method_index) + noise, 4)


# ------------------------------------------------------------------------------------ dispat


@metric
def dispat_board():
    """`tasks/dispat/scorer.py`'s keys: `{dataset}/{method}/{m}` and `{method}/{m}` (mean)."""

    def compute(scores) -> dict[str, float]:
        items = _items(scores)
        methods = sorted({m for sc in items for m in sc.value})
        out: dict[str, float] = {}
        for method in methods:
            per: dict[str, list[float]] = {"auroc": [], "aupr": [], "f1": []}
            for ds in sorted({sc.metadata["dataset"] for sc in items}):
                rows = [sc for sc in items if sc.metadata["dataset"] == ds]
                y = [sc.metadata["label"] for sc in rows]
                x = [sc.value[method] for sc in rows]
                for m in ("auroc", "aupr"):
                    out[f"{ds}/{method}/{m}"] = v = _auc(m, y, x)
                    per[m].append(v)
                out[f"{ds}/{method}/f1"] = f1 = per["aupr"][-1]
                per["f1"].append(f1)
            for m, values in per.items():
                finite = [v for v in values if math.isfinite(v)]
                out[f"{method}/{m}"] = sum(finite) / len(finite) if finite else math.nan
            out[f"{method}/n_datasets"] = float(len(per["auroc"]))
        return out

    return compute


@scorer(metrics=[dispat_board()])
def anomaly_scores():
    async def score(state: TaskState, target: Target) -> Score:
        label = int(target.text)
        i = int(str(state.sample_id).rsplit("/", 1)[1])
        methods = state.metadata["methods"].split(",")
        value = {m: _score_for(j, label, i) for j, m in enumerate(methods)}
        return Score(value=value, metadata={"label": label, "dataset": state.metadata["dataset"]})

    return score


@task
def dispat_toy(
    dataset: str = "wbc",
    method: str = "all",
    seeds: str = "0",
    max_test_rows: int = 0,
    column_names: str = "dataset",
    binning: str = "standard",
    train_steps: int = 100,
    batch_size: int = 8,
    n_permutations: int = 4,
    dispat_iterations: int = 3,
    dispat_samples: int = 8,
    dispat_steps: int = 10,
    max_new_tokens: int = 64,
    finetune: str = "full",
) -> Task:
    methods = (*DISPAT_METHODS, *DISPAT_LLM) if method == "all" else tuple(method.split(","))
    n = max_test_rows or 12
    samples = [
        Sample(
            id=f"{ds}/0/{i}",
            input="row",
            target=str(int(i % 3 == 0)),
            metadata={"dataset": ds, "methods": ",".join(methods)},
        )
        for ds in dataset.split(",")
        for i in range(n)
    ]
    return Task(
        dataset=MemoryDataset(samples),
        solver=_idle(),
        scorer=anomaly_scores(),
        name="dispat",
        version=1,
    )


# Two runs of one configuration differ in everything `make run` shortens (issue 31: "every
# dispat row carries a 12-line settings cell").
DISPAT_RUN_ALL = dict(
    dataset="wbc",
    method="all",
    seeds="0",
    max_test_rows=6,
    column_names="letters",
    binning="language",
    train_steps=2,
    batch_size=1,
    n_permutations=1,
    dispat_iterations=1,
    dispat_samples=1,
    dispat_steps=2,
    max_new_tokens=16,
    finetune="lora",
)


# ------------------------------------------------------------------------- ood_hallucination


@metric
def ood_board():
    """`scorers.detection`'s keys: `{detector}/{auroc,aupr,fpr95,n_missing}`, `accuracy`."""

    def compute(scores) -> dict[str, float]:
        items = _items(scores)
        y = [int(sc.value["hallucinated"]) for sc in items]
        out: dict[str, float] = {"accuracy": 1 - sum(y) / len(y) if y else math.nan}
        for det in OOD_DETECTORS:
            x = [sc.value[det] for sc in items]
            out[f"{det}/auroc"] = _auc("auroc", y, x)
            out[f"{det}/aupr"] = _auc("aupr", y, x)
            out[f"{det}/fpr95"] = math.nan if len(set(y)) < 2 else 0.5
            out[f"{det}/n_missing"] = 0.0
        return out

    return compute


@scorer(metrics=[ood_board()])
def hallucination_detection():
    async def score(state: TaskState, target: Target) -> Score:
        wrong = int(target.text)
        i = int(str(state.sample_id).rsplit("-", 1)[1])
        value: dict[str, float] = {"correct": 1.0 - wrong, "hallucinated": float(wrong)}
        value.update({d: _score_for(j, wrong, i, 0.8) for j, d in enumerate(OOD_DETECTORS)})
        return Score(value=value)

    return score


@task
def ood_toy(dataset: str = "gsm8k", n: int = 24, all_wrong: bool = False) -> Task:
    samples = [
        Sample(id=f"{dataset}-{i}", input="q", target="1" if all_wrong else str(i % 2))
        for i in range(n)
    ]
    return Task(
        dataset=MemoryDataset(samples),
        solver=_idle(),
        scorer=hallucination_detection(),
        name="ood_hallucination",
        version=1,
    )


# ------------------------------------------------------------------------------ agent_stress

STRESS_KINDS = (
    "fork_bomb",
    "memory_hog",
    "runaway_loop",
    "output_flood",
    "ignore_sigterm",
    "network",
    "killed_mid_command",
    "compute",
    "files",
    "shell",
)


@metric
def stress_summary():
    def compute(scores) -> dict[str, float]:
        values = [sc.value for sc in _items(scores)]
        faults = [v for v in values if v["fault"]]
        good = [v for v in values if not v["fault"]]
        return {
            "samples": float(len(values)),
            "ok_rate": sum(v["ok"] for v in values) / len(values),
            "faults": float(len(faults)),
            "contained": float(sum(v["contained"] for v in faults)),
            "contained_rate": sum(v["contained"] for v in faults) / max(len(faults), 1),
            "completed_rate": sum(v["completed"] for v in good) / max(len(good), 1),
        }

    return compute


@scorer(metrics=[stress_summary()])
def stress_scorer():
    """As `tasks/agent_stress/scorer.py`: a contained fault is a failure of its sample (the
    failure key is set) that went as planned."""

    async def score(state: TaskState, target: Target) -> Score:
        kind = state.metadata["kind"]
        fault = kind in STRESS_KINDS[:7]
        failure = f"{kind} contained: killed at its limit" if fault else None
        return Score(
            value={
                "ok": 1,
                "completed": int(not fault),
                "contained": int(fault),
                "fault": int(fault),
            },
            answer="contained" if fault else "completed",
            metadata={"kind": kind, "failure": failure},
        )

    return score


@task
def stress_toy(sandbox: str = "bwrap", samples: int = 10) -> Task:
    data = [
        Sample(id=f"s{i}", input="work", metadata={"kind": STRESS_KINDS[i % 10], "fault": i < 7})
        for i in range(samples)
    ]
    return Task(
        dataset=MemoryDataset(data),
        solver=_idle(),
        scorer=stress_scorer(),
        name="agent_stress",
        version=1,
    )


# --------------------------------------------------------------------------------- folders


def _scripted(name: str = "scripted/agent") -> Any:
    return get_model(name, reply="unused")


def build_run_all_dir(root: Path) -> dict[str, Path]:
    """What `make run` leaves: one run per task at RUN_ALL_ARGS' sizes (dispat: 6 test rows)."""
    root.mkdir(parents=True, exist_ok=True)
    model = _scripted("scripted/embedded")
    weak = get_model("scripted/embedded", responder=_qa_responder(wrong={2, 5, 7}))
    return {
        "dispat": _run(dispat_toy(**DISPAT_RUN_ALL), model, root, metadata=HARNESS_META),
        "ood": _run(ood_toy(n=24), model, root, metadata=HARNESS_META),
        "stress": _run(stress_toy(), _scripted(), root, metadata=HARNESS_META),
        "correct": _run(correct_toy(method="all_at_once"), model, root, metadata=HARNESS_META),
        "qa": _run(qa_toy(), weak, root, metadata=HARNESS_META),
    }


def build_fourteen_run_dir(root: Path) -> dict[str, Path]:
    """Fourteen small runs: `harness eval … limit=2` per task, `inspect eval` of some of the same
    configurations (two of them identical to a harness run), a dispat grid over datasets."""
    root.mkdir(parents=True, exist_ok=True)
    model = _scripted("scripted/embedded")
    answers = get_model("scripted/embedded", responder=_qa_responder(wrong={1}))
    paths: dict[str, Path] = {}
    two = {**DISPAT_RUN_ALL, "max_test_rows": 2}
    paths["dispat_harness"] = _run(dispat_toy(**two), model, root, metadata=HARNESS_META)
    paths["dispat_inspect"] = _run(dispat_toy(max_test_rows=2), model, root)
    for ds in ("14_glass", "42_WBC", "wbc,14_glass"):
        paths[f"dispat_{ds}"] = _run(
            dispat_toy(dataset=ds, max_test_rows=2, seeds="0,1"), model, root, metadata=HARNESS_META
        )
    paths["ood_inspect"] = _run(ood_toy(n=2, dataset="csqa"), model, root)
    # Two questions, both answered wrong: AUROC is undefined for every detector (the latest
    # run: the one the summary shows).
    paths["ood_harness"] = _run(ood_toy(n=2, all_wrong=True), model, root, metadata=HARNESS_META)
    paths["stress_constrained"] = _run(stress_toy(), _scripted(), root, metadata=CONSTRAINED_META)
    paths["stress"] = _run(stress_toy(samples=2), _scripted(), root, metadata=HARNESS_META)
    paths["correct"] = _run(correct_toy(method="all_at_once"), model, root, metadata=HARNESS_META)
    paths["correct_random"] = _run(correct_toy(method="random"), model, root)
    # One configuration run twice, by `harness eval` and by `inspect eval`: the same numbers.
    paths["qa_harness"] = _run(qa_toy(), answers, root, metadata=HARNESS_META)
    paths["qa_inspect"] = _run(qa_toy(), answers, root)
    paths["flaky"] = _run(qa_flaky(), answers, root, fail_on_error=False, metadata=HARNESS_META)
    return paths
