"""Real inspect logs for the report tests: tiny tasks run with the scripted offline model."""

from __future__ import annotations

import shutil
from pathlib import Path

import harness.models.scripted  # noqa: F401  - registers the scripted/ provider
from inspect_ai import Task, eval as inspect_eval, task
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


@task
def det_toy(detector: str = "nci", dataset: str = "toyset") -> Task:
    samples = [
        Sample(id=f"d{i}", input=f"row {i}", target=str(i % 2),
               metadata={"kind": "early" if i < 20 else "late"})
        for i in range(40)
    ]
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=suspicion(), version=1)


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
    weak = get_model("scripted/weak", responder=_qa_responder(
        wrong={2, 5, 7, 9, 11, 13, 17, 19, 23, 29}, unparseable={21, 22}))
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
