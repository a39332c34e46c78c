"""Who&When and CORRECT-Error records -> `Trajectory` -> inspect `Sample`.

Who&When (HARNESS_DATA_DIR/who_and_when/{Algorithm-Generated,Hand-Crafted}/<n>.json):
- `mistake_step` is a *string* index into `history` ("0", "12"); we store an int.
- Algorithm-Generated turns name their speaker in `name` (`role` is user/assistant); Hand-Crafted
  (Magentic-One) turns have only `role`, e.g. "Orchestrator (thought)", whose agent is the part
  before the parenthesis ("Orchestrator").
- Keys present in only some files (`system_prompt`, `level`, `labels`, `mistake_type`,
  `is_correct`/`is_corrected`) go to metadata when present.
CORRECT-Error (HF `yifanyu/CORRECT-Error`, parquet, split `test`): `trajectory_id`, `question`,
`history` [{role, content}], `mistake_agent`, `mistake_step` (int), ...; `groundtruth` is empty in
the release. Not bundled: read from the hub or a local parquet/jsonl through `datasets`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample

from harness.hub import DataSpec, HubDataset, parse_source, read_records
from methods.correct import Step, Trajectory, agent_base, agent_key

logger = logging.getLogger(__name__)

SUBSETS = {
    "algorithm_generated": "Algorithm-Generated",
    "hand_crafted": "Hand-Crafted",
    "injected": "Injected",
}
WHO_AND_WHEN_DIR = "who_and_when"
HOW_TO_GET = (
    "copy the Who&When folder of github.com/ag2ai/Agents_Failure_Attribution (MIT; 184 JSON files "
    "in Algorithm-Generated/ and Hand-Crafted/) to $HARNESS_DATA_DIR/who_and_when/, or download "
    "the HF dataset Kevin355/Who_and_When"
)
# Neither hub copy's commit could be verified offline: both read `main` (logged as unpinned).
WHO_AND_WHEN_HUB = "Kevin355/Who_and_When"
CORRECT_ERROR_HUB = HubDataset("yifanyu/CORRECT-Error", "main", split="test")
DATA: tuple[DataSpec, ...] = (
    DataSpec(
        "Who&When Algorithm-Generated (126)",
        "subset=algorithm_generated",
        f"{WHO_AND_WHEN_DIR}/Algorithm-Generated",
        HubDataset(WHO_AND_WHEN_HUB, "main", config="Algorithm-Generated"),
        HOW_TO_GET,
    ),
    DataSpec(
        "Who&When Hand-Crafted (58)",
        "subset=hand_crafted",
        f"{WHO_AND_WHEN_DIR}/Hand-Crafted",
        HubDataset(WHO_AND_WHEN_HUB, "main", config="Hand-Crafted"),
        HOW_TO_GET,
    ),
    DataSpec(
        "CORRECT-Error (2,226)",
        "load_correct_error()",
        None,
        CORRECT_ERROR_HUB,
        "the HF dataset yifanyu/CORRECT-Error (Apache-2.0, parquet, split test)",
    ),
)
_OPTIONAL_KEYS = ("level", "is_correct", "is_corrected", "question_ID", "mistake_type", "labels")


class RecordError(ValueError):
    """A malformed dataset record; the message names the record and the field."""


def _require(record: Mapping[str, Any], key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    if key not in record:
        raise RecordError(f"{where}: missing field {key!r} (keys present: {sorted(record)})")
    value = record[key]
    if not isinstance(value, kind):
        raise RecordError(f"{where}: field {key!r} should be {kind}, got {type(value).__name__}")
    return value


def _step_index(value: Any, n_steps: int, where: str) -> int:
    try:
        step = int(str(value).strip())
    except (TypeError, ValueError):
        raise RecordError(f"{where}: mistake_step {value!r} is not an integer") from None
    if not 0 <= step < n_steps:
        raise RecordError(f"{where}: mistake_step {step} is outside the history (0..{n_steps - 1})")
    return step


def _steps(history: list[Any], where: str, speaker_keys: tuple[str, ...]) -> tuple[Step, ...]:
    steps = []
    for i, turn in enumerate(history):
        if not isinstance(turn, Mapping):
            raise RecordError(f"{where}: history[{i}] is {type(turn).__name__}, expected an object")
        label = next((str(turn[k]) for k in speaker_keys if turn.get(k)), None)
        if label is None:
            raise RecordError(
                f"{where}: history[{i}] has none of the speaker fields {list(speaker_keys)}"
            )
        content = turn.get("content")
        if content is None:
            content = ""
        steps.append(Step(index=i, agent=agent_base(label), label=label, content=str(content)))
    return tuple(steps)


def _check_mistake_agent(t: Trajectory, where: str, strict: bool) -> Trajectory:
    """A gold `mistake_agent` that is no agent of the trajectory (neither a speaker nor in the
    team) is flagged: an error when `strict`, else a logged warning naming the record and a
    `mistake_agent_unknown` flag in the trajectory's metadata (the task lists them in its log)."""
    if not t.mistake_agent or agent_key(t.mistake_agent) in {agent_key(a) for a in t.agents}:
        return t
    problem = (
        f"{where}: mistake_agent {t.mistake_agent!r} is not an agent of the trajectory "
        f"(agents: {list(t.agents)})"
    )
    if strict:
        raise RecordError(problem)
    logger.warning(problem)
    t.metadata["mistake_agent_unknown"] = True
    return t


def _annotated(
    record: Mapping[str, Any],
    where: str,
    steps: tuple[Step, ...],
    mistake_step: Any,
    *,
    strict: bool,
    **fields: Any,
) -> Trajectory:
    """The trajectory with its gold annotation. Both formats read the question, the mistake
    agent, step and reason alike; `fields` are the format's own (id, ground truth, team, ...)."""
    trajectory = Trajectory(
        question=str(record.get("question") or ""),
        steps=steps,
        mistake_agent=str(_require(record, "mistake_agent", where, str)).strip(),
        mistake_step=_step_index(mistake_step, len(steps), where),
        mistake_reason=str(record.get("mistake_reason") or ""),
        **fields,
    )
    return _check_mistake_agent(trajectory, where, strict)


def who_and_when_record(
    record: Mapping[str, Any], *, subset: str, file_id: str, strict: bool = False
) -> Trajectory:
    """One Who&When JSON object -> Trajectory (id `<subset>/<file stem>`).

    `strict`: a `mistake_agent` that is no agent of the trajectory is an error (else a warning).
    """
    if subset not in SUBSETS:
        raise ValueError(f"unknown Who&When subset {subset!r}: expected one of {sorted(SUBSETS)}")
    where = f"Who&When {SUBSETS[subset]}/{file_id}.json"
    if not isinstance(record, Mapping):
        raise RecordError(f"{where}: expected a JSON object, got {type(record).__name__}")
    history = _require(record, "history", where, list)
    if not history:
        raise RecordError(f"{where}: history is empty")
    # AG turns carry the expert in `name` (role is user/assistant); HC turns only have `role`.
    speaker_keys = ("name", "role") if subset == "algorithm_generated" else ("role", "name")
    steps = _steps(history, where, speaker_keys)
    mistake_step = _require(record, "mistake_step", where, (str, int))
    system_prompt = record.get("system_prompt") or {}
    team = tuple(str(k) for k in system_prompt) if isinstance(system_prompt, Mapping) else ()
    meta = {k: record[k] for k in _OPTIONAL_KEYS if k in record}
    meta.update({"subset": subset, "file": f"{SUBSETS[subset]}/{file_id}.json"})
    return _annotated(
        record,
        where,
        steps,
        mistake_step,
        strict=strict,
        id=f"{subset}/{file_id}",
        ground_truth=str(record.get("ground_truth") or ""),
        team=team,
        metadata=meta,
    )


def correct_error_record(
    record: Mapping[str, Any], *, index: int | None = None, strict: bool = False
) -> Trajectory:
    """One CORRECT-Error row -> Trajectory (id `correct_error/<trajectory_id>`)."""
    tid = record.get("trajectory_id") if isinstance(record, Mapping) else None
    where = f"CORRECT-Error row {index if index is not None else '?'} (trajectory_id={tid!r})"
    if not isinstance(record, Mapping):
        raise RecordError(f"{where}: expected a mapping, got {type(record).__name__}")
    if tid is None or str(tid).strip() == "":
        raise RecordError(f"{where}: missing field 'trajectory_id'")
    history: Any = record.get("history")
    if hasattr(history, "tolist"):  # parquet gives numpy object arrays
        history = history.tolist()
    if not isinstance(history, list) or not history:
        raise RecordError(f"{where}: field 'history' must be a non-empty list of turns")
    steps = _steps(history, where, ("name", "role"))
    meta = {
        k: record[k]
        for k in (
            "dataset",
            "generator_model",
            "question_id",
            "is_corrected",
            "gaia_level",
            "level",
        )
        if k in record
    }
    meta.update({"subset": "correct_error"})
    return _annotated(
        record,
        where,
        steps,
        record.get("mistake_step"),
        strict=strict,
        id=f"correct_error/{tid}",
        ground_truth=str(record.get("groundtruth") or ""),
        metadata=meta,
    )


def _numeric_key(path: Path) -> tuple[int, str]:
    digits = "".join(c for c in path.stem if c.isdigit())
    return (int(digits) if digits else 0, path.stem)


def load_who_and_when(root: Path | str, subset: str, *, strict: bool = False) -> list[Trajectory]:
    """All trajectories of one subset, in numeric file order (the papers' order).

    `root` is the Who&When folder, or a hub id (``hf://Kevin355/Who_and_When[@revision]``:
    the subset's config, read through `datasets`; ids ``<subset>/hf<row>``).
    A file that is not UTF-8 JSON is a `RecordError` naming the file; `strict` as in
    `who_and_when_record`."""
    if isinstance(root, str) and root.startswith("hf://"):
        return _who_and_when_hub(root, subset, strict=strict)
    folder = Path(root) / SUBSETS[subset]
    if not folder.is_dir():
        raise FileNotFoundError(
            f"Who&When subset folder not found: {folder}. How to get it: {HOW_TO_GET}"
        )
    out = []
    for path in sorted(folder.glob("*.json"), key=_numeric_key):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as err:
            raise RecordError(
                f"Who&When {path}: not UTF-8 text (byte {err.start}: {err.reason}); "
                "is it a Who&When JSON file?"
            ) from None
        except json.JSONDecodeError as err:
            raise RecordError(f"Who&When {path}: not valid JSON ({err})") from None
        except OSError as err:
            raise RecordError(f"Who&When {path}: cannot be read ({err})") from None
        out.append(who_and_when_record(record, subset=subset, file_id=path.stem, strict=strict))
    if not out:
        raise FileNotFoundError(f"no *.json files in {folder}. How to get it: {HOW_TO_GET}")
    return out


def _drop_nulls(value: Any) -> Any:
    """Parquet/Arrow rows carry `None` for keys absent from a record (a struct's other fields)."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _who_and_when_hub(source: str, subset: str, *, strict: bool) -> list[Trajectory]:
    if subset not in ("algorithm_generated", "hand_crafted"):
        raise ValueError(f"the hub copy of Who&When has no subset {subset!r}")
    default = HubDataset(WHO_AND_WHEN_HUB, "main", config=SUBSETS[subset])
    hub = parse_source(source, default)
    assert isinstance(hub, HubDataset)
    records = read_records(hub)
    return [
        who_and_when_record(_drop_nulls(row), subset=subset, file_id=f"hf{i}", strict=strict)
        for i, row in enumerate(records.rows)
    ]


def load_correct_error(
    source: Path | str | None = None, *, strict: bool = False
) -> list[Trajectory]:
    """CORRECT-Error from its hub dataset (None: ``yifanyu/CORRECT-Error``; or
    ``hf://<owner>/<name>[@revision]``) or a local parquet / JSON-lines file, read through
    `datasets`; errors name the file (and line) or the hub row."""
    records = read_records(
        CORRECT_ERROR_HUB if source is None else str(source), default=CORRECT_ERROR_HUB
    )
    out = []
    for i, (where, row) in enumerate(records.numbered()):
        try:
            out.append(correct_error_record(_drop_nulls(row), index=i, strict=strict))
        except RecordError as err:
            raise RecordError(f"{where}: {err}") from None
    return out


def trajectory_to_sample(t: Trajectory) -> Sample:
    """A Sample per trajectory. The history itself stays out of the sample (the solver looks it
    up by id) so logs stay small; the gold labels and provenance are in metadata."""
    return Sample(
        id=t.id,
        input=t.question or "(no question recorded)",
        target=str(t.mistake_step),
        metadata={
            "trajectory_id": t.id,
            "mistake_agent": t.mistake_agent,
            "mistake_step": t.mistake_step,
            "mistake_reason": t.mistake_reason,
            "n_steps": t.n_steps,
            "agents": list(t.agents),
            **{k: v for k, v in t.metadata.items() if k != "labels"},
        },
    )


def trajectory_to_record(t: Trajectory) -> dict[str, Any]:
    """Who&When-format JSON object (used by the error-injection generator's output)."""
    return {
        "question": t.question,
        "ground_truth": t.ground_truth,
        "history": [{"content": s.content, "role": s.label, "name": s.label} for s in t.steps],
        "mistake_agent": t.mistake_agent,
        "mistake_step": str(t.mistake_step),
        "mistake_reason": t.mistake_reason,
        "question_ID": t.id,
        **{k: v for k, v in t.metadata.items() if k in ("mistake_type", "level")},
    }
