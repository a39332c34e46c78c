"""Questions with checkable final answers: a seeded generator (default), GSM8K, CommonsenseQA, AQuA.

One ``record_to_sample`` per source format. Every Sample carries ``metadata["answer_type"]``
("number" or "choice") and the prompt it was asked with (``input``), so the scorer needs nothing
else. Malformed records raise ``ValueError`` naming the file, line and missing field.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable
from typing import Any, Literal

from inspect_ai.dataset import MemoryDataset, Sample

from harness.data import content_hash, text_hash
from harness.hub import DataSpec, HubDataset, Records, read_json_records, resolve_records
from tasks.ood_hallucination.answers import normalize_number

__all__ = [
    "DATA",
    "DATASETS",
    "GENERATOR_VERSION",
    "PromptStyle",
    "aqua_record_to_sample",
    "csqa_record_to_sample",
    "generate_records",
    "generated_record_to_sample",
    "gsm8k_record_to_sample",
    "load_dataset",
    "question_source",
]

PromptStyle = Literal["cot", "short"]
GENERATOR_VERSION = 1
DATASETS = ("generated", "gsm8k", "csqa", "aqua")

_NUMBER_SUFFIX = {
    # The short form is the note's "P1" prompt (SmolLM2: 50 % on one-digit products, 32 % on
    # one-step word problems); "cot" is the paper's chain-of-thought style.
    "short": "End your reply with 'The answer is N'.",
    "cot": "Let's think step by step. At the end, write 'The answer is N' where N is the final number.",
}
_CHOICE_SUFFIX = {
    "short": "End your reply with 'The answer is X' where X is the letter of the correct option.",
    "cot": "Let's think step by step. At the end, write 'The answer is X' where X is the letter "
    "of the correct option.",
}

_NAMES = [
    "Tom",
    "Anna",
    "Ravi",
    "Mia",
    "Lucas",
    "Sara",
    "Omar",
    "Lena",
    "Ken",
    "Julia",
    "Pedro",
    "Amy",
    "Ivan",
    "Nora",
    "Sam",
    "Zoe",
]
_OBJECTS = [
    "apples",
    "pencils",
    "marbles",
    "stickers",
    "books",
    "cookies",
    "coins",
    "cards",
    "balloons",
    "shells",
]


# ---------------------------------------------------------------- generated
def generate_records(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` seeded questions: half one-digit products, half one-step word problems (± one
    operation, results ≤ 40), in a seeded random order. Exact integer answers."""
    if n < 1:
        raise ValueError(f"n_generated must be ≥ 1; got {n}")
    rng = random.Random(seed)
    records = []
    for i in range(n):
        kind = "mul_1digit" if rng.random() < 0.5 else "word_1step"
        if kind == "mul_1digit":
            a, b = rng.randint(1, 9), rng.randint(1, 9)
            question, answer = f"What is {a} times {b}?", a * b
        else:
            name, obj = rng.choice(_NAMES), rng.choice(_OBJECTS)
            if rng.random() < 0.5:
                a = rng.randint(1, 30)
                b = rng.randint(1, 40 - a)
                question = (
                    f"{name} has {a} {obj} and buys {b} more. How many {obj} does {name} have now?"
                )
                answer = a + b
            else:
                a = rng.randint(2, 40)
                b = rng.randint(1, a - 1)
                question = (
                    f"{name} has {a} {obj} and gives {b} of them to a friend. "
                    f"How many {obj} does {name} have now?"
                )
                answer = a - b
        records.append(
            {"id": f"gen-{seed}-{i}", "kind": kind, "question": question, "answer": answer}
        )
    return records


def generated_record_to_sample(
    record: dict[str, Any], prompt_style: PromptStyle = "short"
) -> Sample:
    question, answer, _ = _require(record, "question", "answer", "id")
    return Sample(
        input=f"{question}\n{_NUMBER_SUFFIX[prompt_style]}",
        target=str(int(answer)),
        id=str(record["id"]),
        metadata={
            "answer_type": "number",
            "source": "generated",
            "kind": record.get("kind", ""),
            "split_source": generated_source(str(question)),
        },
    )


# ---------------------------------------------------------------- GSM8K
def gsm8k_record_to_sample(
    record: dict[str, Any], index: int, prompt_style: PromptStyle = "cot"
) -> Sample:
    """GSM8K JSONL: ``{"question", "answer"}``; the gold number follows ``####``."""
    question, answer = _require(record, "question", "answer")
    if "####" not in answer:
        raise ValueError("GSM8K answer has no '####' final-answer marker")
    gold = normalize_number(answer.split("####")[-1])
    if gold is None:
        raise ValueError(f"GSM8K final answer {answer.split('####')[-1].strip()!r} is not a number")
    return Sample(
        input=f"{question}\n{_NUMBER_SUFFIX[prompt_style]}",
        target=gold,
        id=f"gsm8k-{index}",
        metadata={
            "answer_type": "number",
            "source": "gsm8k",
            "split_source": _text_source("gsm8k", question),
        },
    )


# ---------------------------------------------------------------- CommonsenseQA
def csqa_record_to_sample(
    record: dict[str, Any], index: int, prompt_style: PromptStyle = "cot"
) -> Sample:
    """CommonsenseQA JSONL (``dev_rand_split.jsonl``): ``{"id", "answerKey", "question":
    {"stem", "choices": [{"label", "text"}, ...]}}``; or the hub's flat rows (``tau/commonsense_qa``:
    ``{"id", "question": str, "choices": {"label": [...], "text": [...]}, "answerKey"}``)."""
    if isinstance(record, dict) and isinstance(record.get("question"), str):
        choices = record.get("choices")
        if not isinstance(choices, dict) or not {"label", "text"} <= set(choices):
            raise ValueError("CommonsenseQA 'choices' must be {'label': [...], 'text': [...]}")
        pairs = zip(choices["label"], choices["text"], strict=True)
        question = {
            "stem": record["question"],
            "choices": [{"label": a, "text": b} for a, b in pairs],
        }
        record = {**record, "question": question}
    key, q = _require(record, "answerKey", "question")
    if not isinstance(q, dict):
        raise ValueError("CommonsenseQA 'question' must be an object with 'stem' and 'choices'")
    stem, choices = _require(q, "stem", "choices")
    if not isinstance(choices, list) or not choices:
        raise ValueError("CommonsenseQA 'question.choices' must be a non-empty list")
    lines = []
    for c in choices:
        label, text = _require(c, "label", "text")
        lines.append(f"{label}) {text}")
    labels = {str(c["label"]).upper() for c in choices}
    if str(key).upper() not in labels:
        raise ValueError(
            f"CommonsenseQA answerKey {key!r} is not one of the choice labels {sorted(labels)}"
        )
    return Sample(
        input=f"{stem}\n" + "\n".join(lines) + f"\n{_CHOICE_SUFFIX[prompt_style]}",
        target=str(key).upper(),
        id=str(record.get("id", f"csqa-{index}")),
        metadata={
            "answer_type": "choice",
            "source": "csqa",
            "split_source": _csqa_source(record, q, stem),
        },
    )


# ---------------------------------------------------------------- AQuA
def aqua_record_to_sample(
    record: dict[str, Any], index: int, prompt_style: PromptStyle = "cot"
) -> Sample:
    """AQuA-RAT JSON lines (``test.json``): ``{"question", "options": ["A)...", ...],
    "rationale", "correct": "A"}``."""
    question, options, correct = _require(record, "question", "options", "correct")
    if not isinstance(options, list) or not options:
        raise ValueError("AQuA 'options' must be a non-empty list like ['A)21', 'B)22']")
    labels = []
    for opt in options:
        if not isinstance(opt, str) or len(opt) < 2 or opt[1] != ")" or opt[0] not in "ABCDE":
            raise ValueError(f"AQuA option {opt!r} is not of the form 'X)text'")
        labels.append(opt[0])
    if str(correct).upper() not in labels:
        raise ValueError(f"AQuA 'correct' {correct!r} is not one of the option labels {labels}")
    return Sample(
        input=f"{question}\n" + "\n".join(options) + f"\n{_CHOICE_SUFFIX[prompt_style]}",
        target=str(correct).upper(),
        id=f"aqua-{index}",
        metadata={
            "answer_type": "choice",
            "source": "aqua",
            "split_source": _text_source("aqua", question),
        },
    )


# ---------------------------------------------------------------- split sources
# The unit of the dev/test split (tasks/ood_hallucination/splits.yaml, harness/splits.py) is
# the question's *source*, what repeats in the data: for the generator, the arithmetic problem
# ("What is 3 times 4?" comes back many times in 500 questions, "4 times 3" and word problems
# over the same two numbers with other names and objects ask the same sum); for CommonsenseQA,
# the ConceptNet concept several questions are written around; for GSM8K and AQuA, which do not
# repeat, the question itself (a hash of its text).
# (pattern, operation, sign, operands commute)
_PROBLEMS = (
    (re.compile(r"What is (\d+) times (\d+)\?"), "mul", "x", True),
    (re.compile(r" has (\d+) \w+ and buys (\d+) more\."), "add", "+", True),
    (re.compile(r" has (\d+) \w+ and gives (\d+) of them"), "sub", "-", False),
)


def generated_source(question: str) -> str:
    """The generator's problem behind a question: ``mul 3x4`` (operands sorted), ``add 5+12``
    (sorted), ``sub 20-7``; a question of no template of the generator is its own source (a
    hash of its text, as for GSM8K)."""
    for rx, op, sign, commutes in _PROBLEMS:
        m = rx.search(question)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if commutes:
                a, b = min(a, b), max(a, b)
            return f"{op} {a}{sign}{b}"
    return _text_source("generated", question)


def generated_sources() -> list[str]:
    """Every problem the generator (version 1) can ask, whatever the seed."""
    muls = {f"mul {a}x{b}" for a in range(1, 10) for b in range(a, 10)}
    adds = {f"add {min(a, b)}+{max(a, b)}" for a in range(1, 31) for b in range(1, 41 - a)}
    subs = {f"sub {a}-{b}" for a in range(2, 41) for b in range(1, a)}
    return sorted(muls | adds | subs)


def _text_source(name: str, text: str) -> str:
    return f"{name}:{hashlib.sha256(' '.join(str(text).split()).encode()).hexdigest()[:12]}"


def _csqa_source(record: dict[str, Any], question: dict[str, Any], stem: str) -> str:
    concept = question.get("question_concept") or record.get("question_concept")
    return f"csqa-concept:{concept}" if concept else _text_source("csqa", stem)


def question_source(sample: Sample) -> str:
    """A converted sample's split source (``metadata["split_source"]``)."""
    return str((sample.metadata or {})["split_source"])


# ---------------------------------------------------------------- loading
def _require(record: Any, *keys: str) -> list[Any]:
    if not isinstance(record, dict):
        raise ValueError(f"record must be a JSON object; got {type(record).__name__}")
    missing = [k for k in keys if k not in record or record[k] is None]
    if missing:
        raise ValueError(f"record is missing field(s) {missing}; has {sorted(record)}")
    return [record[k] for k in keys]


# Revisions pinned by inspect_evals 0.28.0 (gsm8k.py, commonsense_qa.py); AQuA's is not pinned
# there, so it reads the hub's current `main` (logged as unpinned) until a commit is verified.
DATA: tuple[DataSpec, ...] = (
    DataSpec(
        "GSM8K test",
        "dataset=gsm8k",
        "gsm8k/test.jsonl",
        HubDataset(
            "openai/gsm8k",
            "cc7b047b6e5bb11b4f1af84efc572db110a51b3c",
            config="main",
            split="test",
            pin_source="inspect_evals 0.28.0",
        ),
        "GSM8K test split: openai/grade-school-math grade_school_math/data/test.jsonl",
    ),
    DataSpec(
        "CommonsenseQA validation",
        "dataset=csqa",
        "commonsenseqa/dev_rand_split.jsonl",
        HubDataset(
            "tau/commonsense_qa",
            "94630fe30dad47192a8546eb75f094926d47e155",
            split="validation",
            pin_source="inspect_evals 0.28.0",
        ),
        "CommonsenseQA validation split (dev_rand_split.jsonl) from "
        "https://s3.amazonaws.com/commensenseqa/dev_rand_split.jsonl",
    ),
    DataSpec(
        "AQuA-RAT test",
        "dataset=aqua",
        "aqua/test.json",
        HubDataset("deepmind/aqua_rat", "main", config="raw", split="test"),
        "AQuA-RAT test split (JSON lines) from github.com/google-deepmind/AQuA test.json",
    ),
)
_FILES: dict[str, tuple[DataSpec, Callable[..., Sample]]] = {
    "gsm8k": (DATA[0], gsm8k_record_to_sample),
    "csqa": (DATA[1], csqa_record_to_sample),
    "aqua": (DATA[2], aqua_record_to_sample),
}


def load_dataset(
    name: str,
    *,
    n_generated: int = 500,
    seed: int = 0,
    prompt_style: PromptStyle | None = None,
    data_file: str | None = None,
) -> tuple[MemoryDataset, dict[str, Any]]:
    """The dataset and its provenance (``dataset_source``, ``dataset_hash``, ``generated``,
    ``prompt_style``)."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")
    if name == "generated":
        style: PromptStyle = prompt_style or "short"
        records = generate_records(n_generated, seed)
        digest = text_hash(json.dumps(records, sort_keys=True))
        samples = [generated_record_to_sample(r, style) for r in records]
        info = {
            "dataset_source": f"generated (arithmetic v{GENERATOR_VERSION}, seed={seed}, n={n_generated})",
            "dataset_hash": digest,
            "generated": True,
            "prompt_style": style,
        }
        return MemoryDataset(samples, name="ood_hallucination_generated"), info
    style = prompt_style or "cot"
    spec, convert = _FILES[name]
    found = resolve_records(data_file, spec, task="ood_hallucination")
    if isinstance(found, Records):  # an hf:// id or a local file, read through `datasets`
        source, digest = found.source, found.content_hash
        numbered = found.numbered()
    else:
        if not found.is_file():
            raise FileNotFoundError(
                f"{name} data file not found: {found}. How to obtain it: {spec.how_to_get}"
            )
        source, digest = str(found), content_hash(found)
        numbered = read_json_records(found)
    samples = []
    for index, (where, record) in enumerate(numbered):
        try:
            samples.append(convert(record, index, style))
        except ValueError as exc:
            raise ValueError(f"{where}: malformed {name} record: {exc}") from exc
    if not samples:
        raise ValueError(f"{source}: no records")
    info = {
        "dataset_source": source,
        "dataset_hash": digest,
        "generated": False,
        "prompt_style": style,
    }
    return MemoryDataset(samples, name=f"ood_hallucination_{name}"), info
