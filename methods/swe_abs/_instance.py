"""SWE-bench instances and the candidate patches re-evaluated against them.

The SWE-bench format (``instance_id, repo, base_commit, patch, test_patch, problem_statement,
hints_text, created_at, version, FAIL_TO_PASS, PASS_TO_PASS, environment_setup_commit``;
FAIL_TO_PASS/PASS_TO_PASS are JSON-encoded lists in the released files) plus what this harness
adds for its offline instances: the candidate patches, the tests an instance removed from the
project's suite (``removed_tests``, with the patch that restores them), how the sandbox imports
the project, and the call the model-free differential generator drives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

CandidateKind = Literal["correct", "wrong", "model", "unknown"]

SWEBENCH_FIELDS = (
    "instance_id",
    "repo",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
)


class InstanceFormatError(ValueError):
    """A malformed instance record; the message names the record and the field."""


@dataclass(frozen=True)
class Candidate:
    """A patch to re-evaluate. ``kind`` is the ground truth where known (hand-written correct or
    wrong patches), ``system`` names who wrote it (the leaderboard row it counts for)."""

    system: str
    patch: str
    kind: CandidateKind = "unknown"
    note: str = ""
    trusted: bool = False  # hand-written data: may run in the warm runner; else a fresh tree
    origin: str = "own"  # the candidate set: own (bundled), outside (written apart), model


@dataclass(frozen=True)
class DifferentialSpec:
    """How the model-free generator calls the changed code: ``setup`` (imports), ``call`` (an
    expression over the argument names) and ``args`` (name → Hypothesis strategy expression
    over ``st``)."""

    setup: str
    call: str
    args: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {"setup": self.setup, "call": self.call, "args": dict(self.args)}


@dataclass(frozen=True)
class Instance:
    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    problem_statement: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    version: str = ""
    hints_text: str = ""
    created_at: str = ""
    environment_setup_commit: str = ""
    candidates: tuple[Candidate, ...] = ()
    removed_tests: tuple[str, ...] = ()
    removed_tests_patch: str = ""
    sys_path: tuple[str, ...] = (".",)
    differential: DifferentialSpec | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def test_files(self) -> list[str]:
        """The test files SWE-bench runs: those the test patch touches."""
        from methods.swe_abs._diff import parse_patch

        if not self.test_patch.strip():
            files = {t.split("::", 1)[0] for t in (*self.fail_to_pass, *self.pass_to_pass)}
            return sorted(files)
        return sorted({fp.path for fp in parse_patch(self.test_patch)})


def _json_list(record: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = record.get(key)
    if value is None:
        raise InstanceFormatError(f"{where}: missing field {key!r}")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InstanceFormatError(
                f"{where}: field {key!r} is a string but not a JSON list ({exc})"
            ) from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InstanceFormatError(f"{where}: field {key!r} must be a list of test ids")
    return tuple(value)


def _str(record: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = record.get(key)
    if value is None:
        if required:
            raise InstanceFormatError(f"{where}: missing field {key!r}")
        return ""
    if not isinstance(value, str):
        raise InstanceFormatError(
            f"{where}: field {key!r} must be a string, got {type(value).__name__}"
        )
    return value


def instance_from_record(record: Mapping[str, Any], *, where: str = "record") -> Instance:
    """A SWE-bench record (plus this harness's optional fields) → Instance, checked."""
    if not isinstance(record, Mapping):
        raise InstanceFormatError(f"{where}: expected a JSON object, got {type(record).__name__}")
    iid = _str(record, "instance_id", where)
    where = f"{where} ({iid})"
    for key in ("repo", "base_commit", "patch", "test_patch", "problem_statement"):
        _str(record, key, where)
    if not _str(record, "patch", where).strip():
        raise InstanceFormatError(f"{where}: field 'patch' (the gold patch) is empty")
    from methods.swe_abs._diff import PatchError, parse_patch

    for key in ("patch", "test_patch", "removed_tests_patch"):
        text = record.get(key) or ""
        if text.strip():
            try:
                parse_patch(text)
            except PatchError as exc:
                raise InstanceFormatError(
                    f"{where}: field {key!r} is not a unified diff: {exc}"
                ) from None
    candidates = []
    for i, c in enumerate(record.get("candidates") or []):
        cw = f"{where}: candidates[{i}]"
        if not isinstance(c, Mapping):
            raise InstanceFormatError(f"{cw}: expected an object")
        kind = c.get("kind", "unknown")
        if kind not in ("correct", "wrong", "model", "unknown"):
            raise InstanceFormatError(f"{cw}: kind {kind!r} is not correct/wrong/model/unknown")
        candidates.append(
            Candidate(
                system=_str(c, "system", cw),
                patch=_str(c, "patch", cw),
                kind=kind,
                note=_str(c, "note", cw, required=False),
                trusted=bool(c.get("trusted", False)),
                origin=_str(c, "origin", cw, required=False) or "own",
            )
        )
    diff_spec = None
    if record.get("differential"):
        d = record["differential"]
        dw = f"{where}: differential"
        if not isinstance(d, Mapping) or not isinstance(d.get("args"), Mapping):
            raise InstanceFormatError(f"{dw}: expected {{setup, call, args: {{name: strategy}}}}")
        diff_spec = DifferentialSpec(
            setup=_str(d, "setup", dw, required=False),
            call=_str(d, "call", dw),
            args={str(k): str(v) for k, v in d["args"].items()},
        )
    removed = record.get("removed_tests") or []
    if not isinstance(removed, list):
        raise InstanceFormatError(f"{where}: field 'removed_tests' must be a list")
    known = {
        *SWEBENCH_FIELDS,
        "version",
        "hints_text",
        "created_at",
        "environment_setup_commit",
        "candidates",
        "removed_tests",
        "removed_tests_patch",
        "sys_path",
        "differential",
    }
    return Instance(
        instance_id=iid,
        repo=_str(record, "repo", where),
        base_commit=_str(record, "base_commit", where),
        patch=_str(record, "patch", where),
        test_patch=_str(record, "test_patch", where),
        problem_statement=_str(record, "problem_statement", where),
        fail_to_pass=_json_list(record, "FAIL_TO_PASS", where),
        pass_to_pass=_json_list(record, "PASS_TO_PASS", where),
        version=str(record.get("version") or ""),
        hints_text=_str(record, "hints_text", where, required=False),
        created_at=str(record.get("created_at") or ""),
        environment_setup_commit=str(record.get("environment_setup_commit") or ""),
        candidates=tuple(candidates),
        removed_tests=tuple(str(t) for t in removed),
        removed_tests_patch=_str(record, "removed_tests_patch", where, required=False),
        sys_path=tuple(record.get("sys_path") or (".",)),
        differential=diff_spec,
        extra={k: v for k, v in record.items() if k not in known},
    )


def instance_to_record(inst: Instance) -> dict[str, Any]:
    """The SWE-bench record (F2P/P2P JSON-encoded as in the released files) plus our fields."""
    out: dict[str, Any] = {
        "instance_id": inst.instance_id,
        "repo": inst.repo,
        "base_commit": inst.base_commit,
        "patch": inst.patch,
        "test_patch": inst.test_patch,
        "problem_statement": inst.problem_statement,
        "hints_text": inst.hints_text,
        "created_at": inst.created_at,
        "version": inst.version,
        "FAIL_TO_PASS": json.dumps(list(inst.fail_to_pass)),
        "PASS_TO_PASS": json.dumps(list(inst.pass_to_pass)),
        "environment_setup_commit": inst.environment_setup_commit,
        "candidates": [
            {
                "system": c.system,
                "kind": c.kind,
                "note": c.note,
                "trusted": c.trusted,
                "origin": c.origin,
                "patch": c.patch,
            }
            for c in inst.candidates
        ],
        "removed_tests": list(inst.removed_tests),
        "removed_tests_patch": inst.removed_tests_patch,
        "sys_path": list(inst.sys_path),
        "differential": inst.differential.as_dict() if inst.differential else None,
    }
    out.update(inst.extra)
    return out
