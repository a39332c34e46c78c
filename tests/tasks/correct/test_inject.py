import asyncio
import json
import re

from tasks.correct.dataset import load_who_and_when
from tasks.correct.inject import (
    AGENTS,
    final_answer,
    generate_injected,
    gsm8k_answer,
    write_injected,
)

QUESTIONS = [
    {"question": "Tom has 3 apples and buys 4 more. How many?", "answer": "3+4=7\n#### 7"},
    {"question": "A box holds 5 pens; 6 boxes hold how many?", "answer": "5*6=30\n#### 30"},
    {"question": "Sue had 10 cookies and ate 2. How many left?", "answer": "10-2=8\n#### 8"},
]
GOLD = {q["question"]: q["answer"].split("####")[-1].strip() for q in QUESTIONS}


def scripted_team(rewrite_changes_numbers: bool, verifier_repairs: bool = False):
    """A team that solves correctly, and copies (or really rewrites) a turn when asked to inject."""

    def gen(messages):
        text = messages[-1]["content"]
        question = re.search(r"Question: (.*?)\n", text).group(1)
        gold = GOLD[question]
        if "Rewrite this turn" in text:
            turn = text.split("written by the ")[1].split(":\n", 1)[1].split("\n\nRewrite")[0]
            return re.sub(r"\d+", "99", turn) if rewrite_changes_numbers else turn
        if "Write a short numbered plan" in text:
            return "1. Read the numbers. 2. Combine them."
        if "Solver, carry out" in text:
            return f"Combining gives {gold}. Answer: {gold}"
        # verifier: approve the solver's answer (or repair it to the gold answer)
        solver_answer = final_answer(text.split("Solver:")[-1].split("Verifier,")[0])
        value = gold if verifier_repairs else f"{solver_answer:g}"
        return f"Verified. Answer: {value}"

    return gen


def test_gsm8k_answer_and_final_answer():
    assert gsm8k_answer("blah\n#### 1,234") == 1234
    assert final_answer("first 3 then Answer: 12 and 5") == 12
    assert final_answer("no number") is None


def test_injection_labels_and_failure(tmp_path):
    trajs, stats = asyncio.run(generate_injected(QUESTIONS, scripted_team(False), n=3, seed=0))
    assert stats.clean_correct == 3 and len(trajs) == stats.injected_kept > 0
    for t in trajs:
        assert [s.agent for s in t.steps] == list(AGENTS)
        assert t.steps[t.mistake_step].agent == t.mistake_agent and t.mistake_step >= 1
        assert final_answer(t.steps[-1].content) != float(t.ground_truth)  # it is a failure
        assert t.metadata["injection_mode"] == "rule"  # the copy was not an error: rule edit used
        assert t.metadata["mistake_type"] in t.mistake_reason
    write_injected(trajs, stats, tmp_path)
    loaded = load_who_and_when(tmp_path, "injected")
    assert [(t.mistake_agent, t.mistake_step) for t in loaded] == [
        (t.mistake_agent, t.mistake_step) for t in trajs
    ]
    assert json.loads((tmp_path / "stats.json").read_text())["injected_kept"] == len(trajs)


def test_model_rewrite_is_used_when_it_changes_numbers():
    trajs, _ = asyncio.run(generate_injected(QUESTIONS[:1], scripted_team(True), n=1, seed=0))
    assert trajs and trajs[0].metadata["injection_mode"] == "model"


def test_wrong_clean_runs_are_dropped_and_repaired_injections_too():
    def wrong(m):
        return "Answer: 1" if "Rewrite" not in m[-1]["content"] else "x"

    trajs, stats = asyncio.run(generate_injected(QUESTIONS, wrong, n=3))
    assert trajs == [] and stats.clean_wrong == 3
    trajs, stats = asyncio.run(
        generate_injected(
            QUESTIONS, scripted_team(False, verifier_repairs=True), n=3, modes=("FM-2.6",)
        )
    )
    assert trajs == [] and stats.injected_recovered == 3  # the verifier fixed every solver error
