"""Error-injection generator: new Who&When-format failure trajectories from correct team runs.

A small team of our own (User question → Planner → Solver → Verifier), driven by the model under
test, answers GSM8K questions. Runs whose final answer equals the GSM8K answer are kept (option
`require_correct`); in each kept run one turn (a chosen step ≥ 1) is corrupted with an error of a
MAST type, every later turn is regenerated from the corrupted history, and the run is kept as a
failure when its final answer is now wrong. Labels: `mistake_agent` = the corrupted turn's agent,
`mistake_step` = its history index, `mistake_reason` = the MAST mode and the edit made.

Injection: the model is first asked to rewrite the turn with the error; if the rewrite does not
change the turn's numbers (small models often copy), a deterministic edit of the same MAST type is
applied instead (`injection_mode` = "model" | "rule" in the record).

CLI (writes `<out>/Injected/<n>.json` + `<out>/stats.json`; `subset=injected injected_dir=<out>`
then evaluates them):

    python -m tasks.correct.inject --model harness/default --n 10 --out .cache/harness/correct/injected
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from methods.correct import Generate, Step, Trajectory, call_model

# MAST (Cemri et al., NeurIPS 2025 D&B) failure modes used here: id -> (name, where it can occur).
MAST_MODES: dict[str, tuple[str, tuple[str, ...]]] = {
    "FM-1.1": ("Disobey task specification", ("Planner", "Solver")),
    "FM-2.6": ("Reasoning-action mismatch", ("Solver",)),
    "FM-3.1": ("Premature termination", ("Solver",)),
    "FM-3.3": ("Incorrect verification", ("Verifier",)),
}
AGENTS = ("User", "Planner", "Solver", "Verifier")  # step i is spoken by AGENTS[i]
_NUM = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_ANSWER = re.compile(r"answer\s*(?:is)?\s*[:=]?\s*\$?\s*(-?\d[\d,]*(?:\.\d+)?)", re.IGNORECASE)


def _num(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def final_answer(text: str) -> float | None:
    """The last 'Answer: N' in a turn, else its last number."""
    hits = _ANSWER.findall(text or "")
    if hits:
        return _num(hits[-1])
    nums = _NUM.findall(text or "")
    return _num(nums[-1]) if nums else None


def gsm8k_answer(answer_field: str) -> float:
    if "####" not in answer_field:
        raise ValueError(f"GSM8K answer without '####': {answer_field[-80:]!r}")
    value = _num(answer_field.split("####")[-1].strip())
    if value is None:
        raise ValueError(f"GSM8K final answer is not a number: {answer_field.split('####')[-1]!r}")
    return value


def _turn_prompt(agent: str, question: str, history: Sequence[Step]) -> str:
    shown = "\n".join(f"{s.agent}: {s.content}" for s in history[1:])
    if agent == "Planner":
        return f"Question: {question}\nWrite a short numbered plan (2-4 steps) to solve it. Do not compute the answer."
    if agent == "Solver":
        return f"Question: {question}\n{shown}\nSolver, carry out the plan step by step and end with 'Answer: N'."
    return (
        f"Question: {question}\n{shown}\nVerifier, check the solution. If it is right, reply "
        "'Verified. Answer: N'; if it is wrong, correct it and end with 'Answer: N'."
    )


async def run_team(question: str, generate: Generate, start: Sequence[Step] = ()) -> list[Step]:
    """Complete the team's turns after `start` (default: from the user question)."""
    history = list(start) or [Step(0, "User", "User", question)]
    for i in range(len(history), len(AGENTS)):
        agent = AGENTS[i]
        reply = await call_model(
            generate, [{"role": "user", "content": _turn_prompt(agent, question, history)}]
        )
        history.append(Step(i, agent, agent, reply.strip()))
    return history


def _rule_edit(mode: str, content: str, rng: random.Random) -> tuple[str, str]:
    """A deterministic error of MAST type `mode` in `content`; returns (new content, description)."""
    nums = list(_NUM.finditer(content))
    if mode == "FM-3.1":
        cut = content[: max(len(content) // 3, 1)].rstrip()
        partial = _num(nums[0].group()) if nums else 0.0
        value = partial if partial is not None else 0.0
        return (
            f"{cut}\nThat is enough. Answer: {value:g}",
            f"stopped after the first third of the work and reported {value:g}",
        )
    if not nums:
        bad = rng.randint(2, 97)
        return f"{content}\nAnswer: {bad}", f"appended an unsupported answer {bad}"
    target = nums[-1] if mode in ("FM-2.6", "FM-3.3") else nums[0]
    old = _num(target.group()) or 0.0
    delta = rng.choice([-3, -2, -1, 1, 2, 3, 10])
    new = old + delta if old + delta != old else old + 1
    text = content[: target.start()] + f"{new:g}" + content[target.end() :]
    return text, f"changed {target.group()} to {new:g}"


def _model_edit_prompt(mode: str, question: str, step: Step) -> str:
    name, _ = MAST_MODES[mode]
    return (
        f"Question: {question}\nHere is a turn written by the {step.agent}:\n{step.content}\n\n"
        f"Rewrite this turn so that it contains a mistake of the type '{name}' that makes the final "
        "answer wrong. Keep the same style and length. Reply with the rewritten turn only."
    )


@dataclass
class InjectionStats:
    questions_tried: int = 0
    clean_correct: int = 0
    clean_wrong: int = 0
    injected_kept: int = 0
    injected_recovered: int = 0  # downstream turns repaired the error: not a failure, dropped
    by_mode: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


async def inject_error(
    question: str,
    gold: float,  # noqa: ARG001
    clean: list[Step],
    step: int,
    mode: str,
    generate: Generate,
    rng: random.Random,
) -> tuple[list[Step], str, str]:
    """Corrupt turn `step` with MAST `mode`, regenerate later turns; returns (history, reason, mode)."""
    original = clean[step]
    rewrite = await call_model(
        generate, [{"role": "user", "content": _model_edit_prompt(mode, question, original)}]
    )
    rewrite = rewrite.strip()
    if rewrite and [_num(n) for n in _NUM.findall(rewrite)] != [
        _num(n) for n in _NUM.findall(original.content)
    ]:
        content, how, injection = rewrite, "model rewrite", "model"
    else:
        content, how = _rule_edit(mode, original.content, rng)
        injection = "rule"
    corrupted = Step(step, original.agent, original.label, content)
    history = await run_team(question, generate, clean[:step] + [corrupted])
    name, _ = MAST_MODES[mode]
    return history, f"{mode} {name}: {how} (the {original.agent} at step {step})", injection


async def generate_injected(
    questions: Sequence[dict[str, str]],
    generate: Generate,
    *,
    n: int,
    seed: int = 0,
    modes: Sequence[str] = tuple(MAST_MODES),
    require_correct: bool = True,
) -> tuple[list[Trajectory], InjectionStats]:
    """Up to `n` injected failures from `questions` (GSM8K records with `question`, `answer`)."""
    rng = random.Random(seed)
    stats = InjectionStats()
    out: list[Trajectory] = []
    for qi, record in enumerate(questions):
        if len(out) >= n:
            break
        question, gold = record["question"], gsm8k_answer(record["answer"])
        stats.questions_tried += 1
        clean = await run_team(question, generate)
        ok = final_answer(clean[-1].content) == gold
        stats.clean_correct += ok
        stats.clean_wrong += not ok
        if require_correct and not ok:
            continue
        mode = modes[qi % len(modes)]
        step = AGENTS.index(rng.choice(MAST_MODES[mode][1]))
        history, reason, injection = await inject_error(
            question, gold, clean, step, mode, generate, rng
        )
        if final_answer(history[-1].content) == gold:
            stats.injected_recovered += 1
            continue
        stats.injected_kept += 1
        tid = f"injected/{len(out) + 1}"
        stats.by_mode[tid] = mode
        out.append(
            Trajectory(
                id=tid,
                question=question,
                steps=tuple(history),
                ground_truth=f"{gold:g}",
                mistake_agent=history[step].agent,
                mistake_step=step,
                mistake_reason=reason,
                team=AGENTS,
                metadata={
                    "mistake_type": mode,
                    "injection_mode": injection,
                    "gsm8k_index": qi,
                    "clean_correct": ok,
                },
            )
        )
    return out, stats


def write_injected(
    trajectories: Sequence[Trajectory], stats: InjectionStats, out_dir: Path
) -> Path:
    from tasks.correct.dataset import trajectory_to_record

    folder = Path(out_dir) / "Injected"
    folder.mkdir(parents=True, exist_ok=True)
    for t in trajectories:
        record = trajectory_to_record(t)
        record["injection_mode"] = t.metadata.get("injection_mode")
        (folder / f"{t.id.split('/')[-1]}.json").write_text(json.dumps(record, indent=2))
    (Path(out_dir) / "stats.json").write_text(json.dumps(stats.as_dict(), indent=2))
    return folder


def main(argv: Sequence[str] | None = None) -> None:
    from inspect_ai.model import get_model

    from harness.data import data_path
    from tasks.correct.solver import ModelGenerate

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="harness/default")
    parser.add_argument("--n", type=int, default=10, help="injected trajectories wanted")
    parser.add_argument("--max-questions", type=int, default=200)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument(
        "--no-require-correct", action="store_true", help="keep clean runs with wrong answers too"
    )
    args = parser.parse_args(argv)
    path = data_path(
        "gsm8k/test.jsonl", how_to_get="GSM8K test split from github.com/openai/grade-school-math"
    )
    questions = [json.loads(line) for line in path.read_text().splitlines() if line.strip()][
        : args.max_questions
    ]
    gen = ModelGenerate(get_model(args.model), args.max_tokens)
    trajs, stats = asyncio.run(
        generate_injected(
            questions, gen, n=args.n, seed=args.seed, require_correct=not args.no_require_correct
        )
    )
    folder = write_injected(trajs, stats, Path(args.out))
    print(json.dumps({"written": len(trajs), "folder": str(folder), **stats.as_dict()}, indent=2))


if __name__ == "__main__":
    main()
