"""End to end through inspect on the scripted model, with a small fake white-box handle.

The fake stands in for WhiteBoxLM (char-level tokenizer, random linear head with a bias) so the
whole task — solver, scorer, per-detector metrics, log — runs offline in seconds; the detector
values in the log are checked against methods.ood run directly on the fake's features.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from harness.models.whitebox import ForwardOutput, Generation
from methods.ood import LMHead, TokenTrace, make_detector
from tasks.ood_hallucination import solver as solver_module
from tasks.ood_hallucination.task import RUN_ALL_ARGS, ood_hallucination

V, D = 128, 8


class _Tok:
    eos_token = "\x03"

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict[str, list[int]]:
        return {"input_ids": [ord(c) % V for c in text]}


class FakeWhiteBox:
    """Deterministic features per (position, token): enough to exercise every code path."""

    name = "fake"

    def __init__(self, answers: dict[str, str]) -> None:
        rng = np.random.default_rng(0)
        self.lm_head_weight = rng.normal(size=(V, D)).astype(np.float32)
        self.lm_head_bias = rng.normal(size=V).astype(np.float32)
        self._emb = rng.normal(size=(V, D)).astype(np.float32)
        self.tokenizer = _Tok()
        self.answers = answers
        self.generate_calls = 0
        self.generated_prompts = 0

    def chat_prompt(self, user: str, system: str | None = None) -> str:
        return f"<user>{user}<assistant>"

    def _features(self, ids: list[int]) -> np.ndarray:
        # Feature at t depends on the prefix up to t (a running mean), like a causal LM.
        e = self._emb[ids]
        return (np.cumsum(e, axis=0) / np.arange(1, len(ids) + 1)[:, None]).astype(np.float32)

    def forward(self, texts: list[str]) -> list[ForwardOutput]:
        outs = []
        for text in texts:
            ids = self.tokenizer(text)["input_ids"]
            f = self._features(ids)
            outs.append(ForwardOutput(ids, f @ self.lm_head_weight.T + self.lm_head_bias, f))
        return outs

    def generate(
        self,
        prompts: list[str],
        max_new_tokens: int,
        *,
        record: bool = True,
        batch_size: int = 8,
        stop: Any = None,
    ) -> list[Generation]:
        self.generate_calls += 1
        self.generated_prompts += len(prompts)
        gens = []
        for prompt in prompts:
            question = prompt[len("<user>") : -len("<assistant>")]
            text = self.answers[question.split("\n")[0]]
            n = len(self.tokenizer(prompt)["input_ids"])
            if text == "":  # nothing generated at all (T = 0)
                gens.append(
                    Generation(
                        prompt,
                        "",
                        [],
                        "length",
                        n,
                        np.zeros((0, D), np.float32),
                        np.zeros((0, V), np.float32),
                    )
                )
                continue
            out = self.forward([prompt + text + self.tokenizer.eos_token])[0]
            n = len(self.tokenizer(prompt)["input_ids"])
            gens.append(
                Generation(
                    prompt,
                    text,
                    out.token_ids[n:],
                    "stop",
                    n,
                    out.features[n - 1 : -1],
                    out.logits[n - 1 : -1],
                )
            )
        return gens


QUESTIONS = {  # question line -> (answer the model gives, correct?)
    "What is 1 times 2?": ("The answer is 2.", True),
    "What is 3 times 3?": ("I think 3 * 3 = 6. The answer is 6.", False),
    "What is 2 times 4?": ("The answer is 8.", True),
    "What is 5 times 5?": ("hmm", False),
}


def _task_args(tmp_path, questions: dict[str, tuple[str, bool]] = QUESTIONS) -> dict[str, Any]:
    import json

    recs = [
        {"question": q + "\nignored", "answer": "#### " + str(eval(q[8:-1].replace("times", "*")))}
        for q in questions
    ]
    path = tmp_path / "gsm.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs))
    return {
        "dataset": "gsm8k",
        "data_file": str(path),
        "n_boot": 50,
        "detectors": "nci,fdbd@5,perplexity,msp,entropy,energy",
        "split": "all",  # the four questions fall on both sides of the frozen split
    }


def _run(task, model) -> Any:
    log = inspect_eval(task, model=model, display="none", log_dir=None, log_samples=True)[0]
    assert log.status == "success", log.error
    return log


@pytest.fixture()
def fake(monkeypatch) -> FakeWhiteBox:
    fake = FakeWhiteBox({q: a for q, (a, _) in QUESTIONS.items()})
    seen: list[str] = []

    def resolve(name: str) -> FakeWhiteBox:
        seen.append(name)
        return fake

    monkeypatch.setattr(solver_module, "whitebox_for_model", resolve)
    fake.seen = seen  # type: ignore[attr-defined]
    return fake


def _check_log(log, fake: FakeWhiteBox, mode: str) -> None:
    head = LMHead(fake.lm_head_weight, fake.lm_head_bias)
    nci = make_detector("nci").fit(head)
    by_q = {s.input.split("\n")[0]: s for s in log.samples}
    for q, (answer, correct) in QUESTIONS.items():
        s = by_q[q]
        value = s.scores["hallucination_detection"].value
        assert value["correct"] == float(correct) and value["hallucinated"] == float(not correct)
        assert set(value) >= {"nci", "fdbd@5", "perplexity", "msp", "entropy", "energy"}
        assert s.output.completion == answer  # the answer is in the log
        # Same features either way: the detector score in the log is NCI on those tokens.
        out = fake.forward([fake.chat_prompt(s.input) + answer + "\x03"])[0]
        n = len(fake.tokenizer(fake.chat_prompt(s.input))["input_ids"])
        trace = TokenTrace(out.features[n - 1 : -1], out.logits[n - 1 : -1], out.token_ids[n:])
        assert value["nci"] == pytest.approx(-nci.score_one(trace), rel=1e-5)
        assert s.metadata["ood"]["features"] == mode
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == 0.5
    for det in ("nci", "fdbd@5", "perplexity"):
        assert 0.0 <= metrics[f"{det}/auroc"].value <= 1.0
        assert metrics[f"{det}/n_missing"].value == 0.0
    # Headline first: accuracy then the AUROCs.
    assert list(metrics)[:2] == ["accuracy", "nci/auroc"]
    assert log.eval.metadata["features"] == mode and log.eval.metadata["deviations"] is not None


def test_end_to_end_generate_mode(tmp_path, fake) -> None:
    log = _run(ood_hallucination(**_task_args(tmp_path)), get_model("scripted/unused", reply="x"))
    # The answers came from the white-box handle (not inspect), batched across samples.
    assert fake.generated_prompts == 4 and fake.generate_calls < 4
    assert all(name == "scripted/unused" for name in fake.seen)
    _check_log(log, fake, "generate")


def test_the_log_records_the_split_and_each_side_keeps_its_questions(tmp_path, fake) -> None:
    from harness.splits import load_source_split
    from tasks.ood_hallucination.dataset import _text_source

    questions = {
        f"What is {a} times {b}?": (f"The answer is {a * b}.", True)
        for a in (1, 2)
        for b in (6, 7, 8)
    }
    fake.answers.update({q: a for q, (a, _) in questions.items()})
    frozen = load_source_split("ood_hallucination")
    sides = {q: frozen.side(_text_source("gsm8k", q + "\nignored")) for q in questions}
    assert set(sides.values()) == {"dev", "test"}  # the questions exercise both sides
    model = get_model("scripted/unused", reply="x")
    args = _task_args(tmp_path, questions)
    for split in ("dev", "test"):
        log = _run(ood_hallucination(**{**args, "split": split}), model)
        asked = {s.input.split("\n")[0] for s in log.samples}
        assert asked == {q for q, side in sides.items() if side == split}
        meta = log.eval.metadata
        assert meta["data_split"] == split and meta["split_questions"] == len(asked)
        assert meta["data_split_unit"] == frozen.unit
    log = _run(ood_hallucination(**args), model)
    assert log.eval.metadata["data_split"] == "all" and len(log.samples) == 6


def test_batch_size_one_generates_each_prompt_alone(tmp_path, fake) -> None:
    log = _run(
        ood_hallucination(**_task_args(tmp_path), batch_size=1),
        get_model("scripted/unused", reply="x"),
    )
    assert fake.generate_calls == 4 == fake.generated_prompts
    _check_log(log, fake, "generate")


def test_end_to_end_teacher_forced_on_scripted_replies(tmp_path, fake) -> None:
    def responder(messages) -> str:
        return QUESTIONS[messages[-1].text.split("\n")[0]][0]

    model = get_model("scripted/tf", responder=responder)
    log = _run(ood_hallucination(**_task_args(tmp_path), features="teacher_forced"), model)
    assert fake.generate_calls == 0
    _check_log(log, fake, "teacher_forced")
    assert any("teacher_forced" in d for d in log.eval.metadata["deviations"])


def test_empty_answer_is_a_scored_failure_not_a_crash(tmp_path, fake) -> None:
    fake.answers["What is 5 times 5?"] = ""
    log = _run(ood_hallucination(**_task_args(tmp_path)), get_model("scripted/x", reply="x"))
    s = next(s for s in log.samples if s.input.startswith("What is 5 times 5?"))
    score = s.scores["hallucination_detection"]
    assert score.value["hallucinated"] == 1.0 and np.isnan(score.value["nci"])
    assert "generated no tokens" in score.explanation
    metrics = log.results.scores[0].metrics
    assert metrics["nci/n_missing"].value == 1.0 and metrics["n_scored"].value == 4.0


def test_task_argument_errors(tmp_path) -> None:
    with pytest.raises(ValueError, match="unknown detector 'knn'"):
        ood_hallucination(detectors="nci,knn")
    with pytest.raises(ValueError, match="duplicates"):
        ood_hallucination(detectors="nci,nci")


def test_choice_parameters_are_literals_the_cli_checks() -> None:
    """Choices are ``Literal`` types (the CLI refuses others, naming them), equal to what the
    dataset, detector and solver modules accept; no hand-written checks in the task."""
    import inspect
    import typing

    from harness.cli.config import ConfigError, build_eval_config
    from harness.cli.discovery import TaskEntry
    from tasks.ood_hallucination.dataset import DATASETS

    fn = inspect.unwrap(ood_hallucination)
    hints = typing.get_type_hints(fn)
    assert typing.get_args(hints["dataset"]) == DATASETS
    assert typing.get_args(hints["aggregation"]) == ("mean", "min", "last_k")
    assert typing.get_args(hints["features"]) == ("generate", "teacher_forced", "greybox")
    style, none = typing.get_args(hints["prompt_style"])  # Literal[...] | None
    assert typing.get_args(style) == ("cot", "short") and none is type(None)
    tasks = {"ood_hallucination": TaskEntry.from_function("ood_hallucination", fn)}
    for bad in ("aggregation=max", "features=sampled", "dataset=mmlu", "prompt_style=long"):
        with pytest.raises(ConfigError, match=bad.split("=")[0]):
            build_eval_config(["task=ood_hallucination", bad], tasks, all_tasks=list(tasks))
    _, args, _ = build_eval_config(
        ["task=ood_hallucination", "aggregation=last_k", "features=greybox"],
        tasks,
        all_tasks=list(tasks),
    )
    assert args["ood_hallucination"] == {"aggregation": "last_k", "features": "greybox"}


def test_run_all_args_are_small_and_valid() -> None:
    assert RUN_ALL_ARGS["limit"] <= 30
    task = ood_hallucination(**{k: v for k, v in RUN_ALL_ARGS.items() if k != "limit"})
    assert len(task.dataset) >= RUN_ALL_ARGS["limit"]


def _greybox_output(text: str, chosen: list[float], tops: list[list[float]] | None):
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        Logprob,
        Logprobs,
        ModelOutput,
        TopLogprob,
    )

    content = [
        Logprob(
            token=f"t{i}",
            logprob=c,
            top_logprobs=None
            if tops is None
            else [TopLogprob(token=f"a{j}", logprob=v) for j, v in enumerate(tops[i])],
        )
        for i, c in enumerate(chosen)
    ]
    return ModelOutput(
        model="scripted",
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(content=text),
                stop_reason="stop",
                logprobs=Logprobs(content=content),
            )
        ],
    )


def test_end_to_end_greybox_from_scripted_logprobs(tmp_path) -> None:
    from methods.ood import greybox_scores

    chosen = [-0.1, -0.7, -0.2]
    tops = [[-0.1, -2.4], [-0.7, -0.9], [-0.2, -1.8]]

    def responder(messages):
        q = messages[-1].text.split("\n")[0]
        if q == "What is 5 times 5?":
            return _greybox_output("The answer is 25.", chosen, None)  # no top_logprobs
        return _greybox_output(QUESTIONS[q][0], chosen, tops)

    log = _run(
        ood_hallucination(
            **{
                **_task_args(tmp_path),
                "detectors": ",".join(
                    [
                        "nci",
                        "fdbd@1",
                        "fdbd@100",
                        "fdbd@1000",
                        "perplexity",
                        "msp",
                        "entropy",
                        "energy",
                    ]
                ),
            },
            features="greybox",
        ),
        get_model("scripted/gb", responder=responder),
    )
    expected = greybox_scores(chosen, tops)
    for s in log.samples:
        value = s.scores["hallucination_detection"].value
        assert set(value) == {"correct", "hallucinated", "perplexity", "msp", "entropy"}
        if s.input.startswith("What is 5 times 5?"):
            assert np.isnan(value["msp"]) and value["correct"] == 1.0
            assert "no top_logprobs at token 0" in s.scores["hallucination_detection"].explanation
        else:
            assert value["msp"] == pytest.approx(-expected["msp"])
            assert value["entropy"] == pytest.approx(-expected["entropy"])
    assert log.results.scores[0].metrics["msp/n_missing"].value == 1.0
    with pytest.raises(ValueError, match="greybox supports only"):
        ood_hallucination(features="greybox", detectors="nci")


def test_report_cells_equal_the_logged_detection_metrics(tmp_path, fake) -> None:
    """One statistics core: the report's AUROC/AUPR cells (value and bootstrap bounds, computed
    from the per-sample scores with the packaged leaderboard schema) equal the values the eval's
    metric logged, when the report uses the eval's n_boot and seed."""
    from reports import build_report

    # Twelve questions, half answered wrong, so that the intervals are not degenerate.
    questions = {
        f"What is {a} times {b}?": (f"The answer is {a * b + (a + b) % 2}.", (a + b) % 2 == 0)
        for a in range(1, 4)
        for b in range(6, 10)
    }
    fake.answers.update({q: a for q, (a, _) in questions.items()})
    log_dir = tmp_path / "logs"
    args = {**_task_args(tmp_path, questions), "n_boot": 300, "seed": 5}
    [log] = inspect_eval(
        ood_hallucination(**args),
        model=get_model("scripted/unused", reply="x"),
        display="none",
        log_dir=str(log_dir),
    )
    assert log.status == "success", log.error
    logged = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    result = build_report(log_dir, tmp_path / "out", n_boot=300, seed=5)
    [board] = [lb for lb in result.leaderboards if lb.task == "ood_hallucination"]
    rows = {row.method: row for row in board.rows}
    assert set(rows) >= {"nci", "fdbd@5", "perplexity"}
    for det, row in rows.items():
        for metric in ("auroc", "aupr"):
            cell = row.cells[metric]
            assert cell.interval == "bootstrap" and cell.n == 12
            assert (cell.value, cell.low, cell.high) == (
                logged[f"{det}/{metric}"],
                logged[f"{det}/{metric}_lo"],
                logged[f"{det}/{metric}_hi"],
            ), (det, metric)
            assert cell.note == ""  # no "per-sample estimate differs" note
    # The report states the FPR@95 convention in its method notes.
    text = result.markdown.read_text()
    assert "FPR@95%TPR: FPR at the first threshold" in text and "pytorch-ood" in text
