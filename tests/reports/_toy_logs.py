"""Real inspect logs for the report tests: tiny tasks run with the scripted offline model."""

from __future__ import annotations

import shutil
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ChatMessage, get_model
from inspect_ai.scorer import (
    Score,
    Target,
    accuracy,
    mean,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import Generate, TaskState, generate, solver

import harness.models.scripted  # noqa: F401  - registers the scripted/ provider

N_QA = 30


def _qa_samples() -> MemoryDataset:
    return MemoryDataset(
        [Sample(id=f"q{i}", input=f"What is {i} + 1?", target=str(i + 1)) for i in range(N_QA)]
    )


@scorer(metrics=[accuracy(), stderr()])
def exact():
    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion.strip()
        if not answer.isdigit():
            # A scored model failure: the reply could not be parsed.
            return Score(value=0, answer=answer, metadata={"failure": "no number in reply"})
        return Score(value=1 if answer == target.text else 0, answer=answer)

    return score


@task
def qa_toy(method: str = "plain") -> Task:
    return Task(dataset=_qa_samples(), solver=generate(), scorer=exact(), version=1)


@solver
def flaky():
    """Raises on one sample: an infrastructure error, not a model failure."""

    async def solve(state: TaskState, generate_fn: Generate) -> TaskState:
        if state.sample_id == "q3":
            raise RuntimeError("sandbox unavailable (simulated)")
        return await generate_fn(state)

    return solve


@task
def qa_flaky(method: str = "plain") -> Task:
    return Task(dataset=_qa_samples(), solver=flaky(), scorer=exact(), version=1)


@metric
def auroc():
    from sklearn.metrics import roc_auc_score

    def compute(scores) -> float:
        # Depending on the annotation inspect passes Score or SampleScore objects.
        items = [getattr(s, "score", s) for s in scores]
        y = [sc.metadata["label"] for sc in items]
        x = [sc.as_float() for sc in items]
        # inspect also calls metrics on partial results (no sample, one sample) while running:
        # undefined there, NaN like scorers.stats, instead of scikit-learn's warning.
        if len(set(y)) < 2:
            return float("nan")
        return float(roc_auc_score(y, x))

    return compute


@scorer(metrics=[auroc(), mean()])
def suspicion():
    async def score(state: TaskState, target: Target) -> Score:
        try:
            value = float(state.output.completion.strip())
        except ValueError:
            value = 0.0
        return Score(value=value, metadata={"label": int(target.text)})

    return score


# What `harness eval preset=paper` records when nothing departs from the paper's protocol; only
# such runs are set against reference numbers (issue 30).
PAPER_PROTOCOL = {"harness_preset": {"name": "paper", "protocol_met": True}}


@task
def det_toy(detector: str = "nci", dataset: str = "toyset", preset: str = "paper") -> Task:
    samples = [
        Sample(
            id=f"d{i}",
            input=f"row {i}",
            target=str(i % 2),
            metadata={"kind": "early" if i < 20 else "late"},
        )
        for i in range(40)
    ]
    metadata = {
        "paper": PAPER_PROTOCOL,
        "off": {"harness_preset": {"name": "paper", "protocol_met": False}},
    }.get(preset, {})
    return Task(
        dataset=MemoryDataset(samples),
        solver=generate(),
        scorer=suspicion(),
        version=1,
        metadata=metadata,
    )


def _qa_responder(wrong: set[int], unparseable: set[int] = frozenset()):
    def respond(messages: list[ChatMessage]) -> str:
        n = int(messages[-1].text.split()[2])
        if n in unparseable:
            return "I am not sure."
        return str(n + 1 + (1 if n in wrong else 0))

    return respond


def _det_responder(strength: float):
    def respond(messages: list[ChatMessage]) -> str:
        i = int(messages[-1].text.split()[1])
        label = i % 2
        # Deterministic pseudo-noise: separation grows with `strength`.
        noise = ((i * 37) % 11) / 10.0
        return f"{label * strength + noise:.3f}"

    return respond


def _run(t: Task, model, log_dir: Path, **kw) -> Path:
    [log] = inspect_eval(t, model=model, log_dir=str(log_dir), display="none", **kw)
    return Path(log.location)


def build_log_dir(root: Path) -> dict[str, Path]:
    """Write a log directory exercising selection, errors, pairing, ROC and corrupt logs."""
    root.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    strong = get_model("scripted/strong", responder=_qa_responder(wrong={2, 5}))
    weak = get_model(
        "scripted/weak",
        responder=_qa_responder(wrong={2, 5, 7, 9, 11, 13, 17, 19, 23, 29}, unparseable={21, 22}),
    )
    # An older complete run of weak (different answers) that the newer one supersedes.
    old_weak = get_model("scripted/weak", responder=_qa_responder(wrong=set(range(30))))
    paths["old_weak"] = _run(qa_toy(), old_weak, root)
    paths["weak"] = _run(qa_toy(), weak, root)
    paths["strong"] = _run(qa_toy(), strong, root)
    paths["flaky"] = _run(qa_flaky(), strong, root, fail_on_error=False)
    for detector, strength in (("nci", 1.2), ("fdbd", 0.4)):
        m = get_model(f"scripted/det-{detector}", responder=_det_responder(strength))
        paths[f"det_{detector}"] = _run(det_toy(detector=detector), m, root)
    # Unfinished run: the same log rewritten with status "started" (a run killed mid-way).
    log = read_eval_log(str(paths["strong"]))
    log.status = "started"
    log.eval.created = "2099-01-01T00:00:00+00:00"  # newest, yet must not win
    unfinished = root / "unfinished_qa_toy.json"
    write_eval_log(log, str(unfinished))
    paths["unfinished"] = unfinished
    corrupt = root / "corrupt.eval"
    corrupt.write_bytes(b"PK\x03\x04 this is not a zip archive")
    paths["corrupt"] = corrupt
    return paths


def copy_log_dir(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


# ---------------------------------------------------------------- correct-like runs (split rows)

# Which trajectories each method localises correctly (step, agent), by subset and index.
CORRECT_PLAN: dict[str, dict[str, dict[str, set[int]]]] = {
    "all_at_once": {
        "algorithm_generated": {"step": {0, 1, 2, 3}, "agent": {0, 1, 2, 3, 4, 5}},
        "hand_crafted": {"step": {0}, "agent": {0, 1, 2}},
    },
    "step_by_step": {
        "algorithm_generated": {"step": set(range(8)), "agent": set(range(10))},
        "hand_crafted": {"step": {0, 1, 2, 3}, "agent": {0}},
    },
    "random": {
        "algorithm_generated": {"step": {9}, "agent": {8, 9}},
        "hand_crafted": {"step": set(), "agent": {4}},
        # One trajectory whose sample has no "subset" metadata: the "(none)" part.
        "": {"step": {0}, "agent": {0}},
    },
    "binary_search": {"hand_crafted": {"step": {1, 2}, "agent": {0, 1, 2, 3}}},
}
CORRECT_SIZES = {"algorithm_generated": 10, "hand_crafted": 5, "": 1}
GOLD_STEP = 3


def correct_tokens(subset: str, i: int) -> float:
    """Tokens spent on trajectory i of a subset (same for every method)."""
    return {"algorithm_generated": 100.0 + 10 * i, "hand_crafted": 300.0 + 20 * i}.get(subset, 50.0)


@metric
def total():
    def compute(scores) -> float:
        return float(sum(getattr(s, "score", s).as_float() for s in scores))

    return compute


@scorer(metrics=[total()])
def budget():
    """A scorer whose only metric is run-level (no per-sample path in the correct schema)."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=1.0)

    return score


@solver
def planned_localiser(method: str):
    """Writes the prediction the plan dictates, as CORRECT's solvers do, without a model call."""

    async def solve(state: TaskState, generate_fn: Generate) -> TaskState:
        subset = state.metadata.get("subset", "")
        i = int(str(state.sample_id).rpartition("/")[2])
        plan = CORRECT_PLAN[method][subset]
        state.metadata["localisation"] = {
            "agent": "Coder" if i in plan["agent"] else "Planner",
            "step": GOLD_STEP if i in plan["step"] else GOLD_STEP + 5,
            "tokens": correct_tokens(subset, i),
            "seconds": 1.0,
        }
        return state

    return solve


@task
def correct_toy(method: str = "all_at_once", subset: str = "both") -> Task:
    from scorers.localisation import localisation_scorer

    samples = []
    for name in CORRECT_PLAN[method]:
        for i in range(CORRECT_SIZES[name]):
            meta = {"mistake_agent": "Coder", "mistake_step": GOLD_STEP}
            if name:
                meta["subset"] = name
            samples.append(Sample(id=f"{name or 'extra'}/{i}", input="trajectory", metadata=meta))
    # Named "correct" so the packaged correct schema (split_rows_by: metadata.subset) applies.
    return Task(
        dataset=MemoryDataset(samples),
        solver=planned_localiser(method),
        scorer=[localisation_scorer(), budget()],
        name="correct",
        version=1,
        metadata=PAPER_PROTOCOL,
    )


def build_correct_log_dir(root: Path) -> dict[str, Path]:
    """Four correct-like runs: three with subset=both, one with subset=hand_crafted only."""
    root.mkdir(parents=True, exist_ok=True)
    model = get_model("scripted/gpt-toy", reply="unused")
    runs = {
        "all_at_once": "both",
        "step_by_step": "both",
        "random": "both",
        "binary_search": "hand_crafted",
    }
    return {
        method: _run(correct_toy(method=method, subset=subset), model, root)
        for method, subset in runs.items()
    }
