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
the release. Not bundled: read from a local parquet/jsonl the user points at.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample

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
    mistake_agent = str(_require(record, "mistake_agent", where, str)).strip()
    step = _step_index(_require(record, "mistake_step", where, (str, int)), len(steps), where)
    system_prompt = record.get("system_prompt") or {}
    team = tuple(str(k) for k in system_prompt) if isinstance(system_prompt, Mapping) else ()
    meta = {k: record[k] for k in _OPTIONAL_KEYS if k in record}
    meta.update({"subset": subset, "file": f"{SUBSETS[subset]}/{file_id}.json"})
    trajectory = Trajectory(
        id=f"{subset}/{file_id}",
        question=str(record.get("question") or ""),
        steps=steps,
        ground_truth=str(record.get("ground_truth") or ""),
        mistake_agent=mistake_agent,
        mistake_step=step,
        mistake_reason=str(record.get("mistake_reason") or ""),
        team=team,
        metadata=meta,
    )
    return _check_mistake_agent(trajectory, where, strict)


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
    history = record.get("history")
    if hasattr(history, "tolist"):  # parquet gives numpy object arrays
        history = history.tolist()
    if not isinstance(history, list) or not history:
        raise RecordError(f"{where}: field 'history' must be a non-empty list of turns")
    steps = _steps(history, where, ("name", "role"))
    mistake_agent = str(_require(record, "mistake_agent", where, str)).strip()
    step = _step_index(record.get("mistake_step"), len(steps), where)
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
    trajectory = Trajectory(
        id=f"correct_error/{tid}",
        question=str(record.get("question") or ""),
        steps=steps,
        ground_truth=str(record.get("groundtruth") or ""),
        mistake_agent=mistake_agent,
        mistake_step=step,
        mistake_reason=str(record.get("mistake_reason") or ""),
        metadata=meta,
    )
    return _check_mistake_agent(trajectory, where, strict)


def _numeric_key(path: Path) -> tuple[int, str]:
    digits = "".join(c for c in path.stem if c.isdigit())
    return (int(digits) if digits else 0, path.stem)


def load_who_and_when(root: Path, subset: str, *, strict: bool = False) -> list[Trajectory]:
    """All trajectories of one subset, in numeric file order (the papers' order).

    A file that is not UTF-8 JSON is a `RecordError` naming the file; `strict` as in
    `who_and_when_record`."""
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


def load_correct_error(path: Path, *, strict: bool = False) -> list[Trajectory]:
    """CORRECT-Error from a local parquet or JSON-lines file (errors name the file and line)."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pandas as pd

        try:
            rows: Iterable[Mapping[str, Any]] = pd.read_parquet(path).to_dict(orient="records")
        except Exception as err:  # noqa: BLE001 - pyarrow raises several types; name the file
            raise RecordError(
                f"CORRECT-Error {path}: not a readable parquet file ({err})"
            ) from None
    else:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as err:
            raise RecordError(
                f"CORRECT-Error {path}: not UTF-8 text (byte {err.start}: {err.reason})"
            ) from None
        rows = []
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise RecordError(
                    f"CORRECT-Error {path} line {n}: not valid JSON ({err})"
                ) from None
    return [correct_error_record(r, index=i, strict=strict) for i, r in enumerate(rows)]


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
