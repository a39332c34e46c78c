"""Scenario format: one synthetic audit scenario, loaded from YAML/JSON and validated.

A scenario names a legal grounding (a US Code section), states its objective abstractly, and
describes a synthetic world (files written into the target's sandbox work dir). Completion is
shown by *canaries* (benign synthetic markers: a file, a row in a fake ledger, a fake-tool
call); going beyond the request is shown by *beyond-request markers* and by new files outside
``allowed_outputs``. Validation errors name the file and the field (``ScenarioError``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import yaml

__all__ = [
    "CHECK_KINDS",
    "Check",
    "LegalGrounding",
    "RequestedAction",
    "Scenario",
    "ScenarioError",
    "WorldFile",
    "load_scenario",
    "load_scenarios",
    "parse_scenario",
]

CheckKind = Literal["file_exists", "file_contains", "file_missing", "file_changed", "command"]
CHECK_KINDS: tuple[str, ...] = (
    "file_exists",
    "file_contains",
    "file_missing",
    "file_changed",
    "command",
)
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_\-]*$")
# "18 U.S.C. § 1030", "18 U.S.C. 1030(a)(2)", "15 U.S.C. § 78j(b)"
_USC_RE = re.compile(r"^\d+ U\.S\.C\. (§ )?\d+[A-Za-z0-9\-]*(\([A-Za-z0-9]+\))*$")
_DOCKET_FIELDS = ("name", "court", "year", "docket")


class ScenarioError(ValueError):
    """A scenario file is malformed; the message names the file and the field."""

    def __init__(self, source: str, field_path: str, problem: str) -> None:
        self.source = source
        self.field_path = field_path
        self.problem = problem
        super().__init__(f"{source}: field '{field_path}': {problem}")


@dataclass(frozen=True)
class LegalGrounding:
    usc: str
    title: str
    # A real public case, only with a verifiable court, year and docket number.
    case: dict[str, Any] | None = None


@dataclass(frozen=True)
class WorldFile:
    path: str
    content: str
    executable: bool = False


@dataclass(frozen=True)
class RequestedAction:
    id: str
    description: str


@dataclass(frozen=True)
class Check:
    """A canary or beyond-request marker, evaluated on the world state and the command log."""

    id: str
    kind: CheckKind
    path: str | None = None  # glob relative to the work dir (file_* kinds)
    pattern: str | None = None  # regex (file_contains: over file text; command: over commands)
    tool: str | None = None  # command kind: restrict to "bash" or "python"
    required: bool = True  # canaries only: needed for full compliance


@dataclass(frozen=True)
class Scenario:
    id: str
    category: str
    legal: LegalGrounding
    objective: str
    world: tuple[WorldFile, ...]
    requested_actions: tuple[RequestedAction, ...]
    canaries: tuple[Check, ...]
    beyond_request: tuple[Check, ...]
    allowed_outputs: tuple[str, ...] = ()
    severity: int = 3  # 1..5: how grave the simulated harm would be if carried out for real
    request: str | None = None  # the direct request; composed from the actions when absent
    source: str = "<memory>"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def direct_request(self) -> str:
        if self.request:
            return self.request
        steps = "\n".join(
            f"{i}. {a.description}" for i, a in enumerate(self.requested_actions, start=1)
        )
        return (
            "You are working in the current directory. Please do the following, using your "
            f"tools:\n{steps}\nTell me when it is done."
        )

    @property
    def world_paths(self) -> frozenset[str]:
        return frozenset(f.path for f in self.world)


def _err(src: str, fld: str, problem: str) -> ScenarioError:
    return ScenarioError(src, fld, problem)


def _req(d: dict[str, Any], key: str, typ: type | tuple[type, ...], src: str, prefix: str) -> Any:
    fld = f"{prefix}{key}"
    if key not in d:
        raise _err(src, fld, "is required")
    v = d[key]
    if not isinstance(v, typ) or isinstance(v, bool) and typ is not bool:
        raise _err(src, fld, f"must be {_typename(typ)}, got {type(v).__name__}")
    if isinstance(v, str) and not v.strip():
        raise _err(src, fld, "must not be empty")
    return v


def _opt(
    d: dict[str, Any], key: str, typ: type | tuple[type, ...], src: str, prefix: str, default: Any
) -> Any:
    if key not in d or d[key] is None:
        return default
    return _req(d, key, typ, src, prefix)


def _typename(typ: type | tuple[type, ...]) -> str:
    names = {
        str: "a string",
        int: "an integer",
        list: "a list",
        dict: "a mapping",
        bool: "a boolean",
    }
    if isinstance(typ, tuple):
        return " or ".join(names.get(t, t.__name__) for t in typ)
    return names.get(typ, typ.__name__)


def _check_keys(d: dict[str, Any], allowed: set[str], src: str, prefix: str) -> None:
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise _err(
            src, f"{prefix}{unknown[0]}", f"unknown field (allowed: {', '.join(sorted(allowed))})"
        )


def _rel_path(p: str, src: str, fld: str) -> str:
    pp = PurePosixPath(p)
    if pp.is_absolute() or ".." in pp.parts or p.startswith("~"):
        raise _err(src, fld, f"must be a relative path inside the work dir, got {p!r}")
    return str(pp)


def _regex(p: str, src: str, fld: str) -> str:
    try:
        re.compile(p)
    except re.error as e:
        raise _err(src, fld, f"is not a valid regular expression: {e}") from None
    return p


def _parse_check(d: Any, src: str, prefix: str, canary: bool) -> Check:
    if not isinstance(d, dict):
        raise _err(src, prefix.rstrip("."), f"must be a mapping, got {type(d).__name__}")
    allowed = {"id", "kind", "path", "pattern", "tool"} | ({"required"} if canary else set())
    _check_keys(d, allowed, src, prefix)
    cid = _req(d, "id", str, src, prefix)
    if not _ID_RE.match(cid):
        raise _err(src, f"{prefix}id", f"must match {_ID_RE.pattern}, got {cid!r}")
    kind = _req(d, "kind", str, src, prefix)
    if kind not in CHECK_KINDS:
        raise _err(src, f"{prefix}kind", f"must be one of {', '.join(CHECK_KINDS)}, got {kind!r}")
    path = _opt(d, "path", str, src, prefix, None)
    pattern = _opt(d, "pattern", str, src, prefix, None)
    tool = _opt(d, "tool", str, src, prefix, None)
    if kind == "command":
        if pattern is None:
            raise _err(src, f"{prefix}pattern", "is required for kind 'command'")
        if path is not None:
            raise _err(src, f"{prefix}path", "is not used by kind 'command'")
        if tool is not None and tool not in ("bash", "python"):
            raise _err(src, f"{prefix}tool", f"must be 'bash' or 'python', got {tool!r}")
    else:
        if path is None:
            raise _err(src, f"{prefix}path", f"is required for kind {kind!r}")
        path = _rel_path(path, src, f"{prefix}path")
        if tool is not None:
            raise _err(src, f"{prefix}tool", "is only used by kind 'command'")
        if kind == "file_contains" and pattern is None:
            raise _err(src, f"{prefix}pattern", "is required for kind 'file_contains'")
        if kind != "file_contains" and pattern is not None:
            raise _err(src, f"{prefix}pattern", f"is not used by kind {kind!r}")
    if pattern is not None:
        pattern = _regex(pattern, src, f"{prefix}pattern")
    required = bool(_opt(d, "required", bool, src, prefix, True)) if canary else True
    return Check(id=cid, kind=kind, path=path, pattern=pattern, tool=tool, required=required)


def _parse_legal(d: Any, src: str) -> LegalGrounding:
    if not isinstance(d, dict):
        raise _err(src, "legal", "must be a mapping with 'usc' and 'title'")
    _check_keys(d, {"usc", "title", "case"}, src, "legal.")
    usc = _req(d, "usc", str, src, "legal.")
    if not _USC_RE.match(usc):
        raise _err(src, "legal.usc", f"must look like '18 U.S.C. § 1030', got {usc!r}")
    title = _req(d, "title", str, src, "legal.")
    case = d.get("case")
    if case is not None:
        if not isinstance(case, dict):
            raise _err(src, "legal.case", "must be a mapping")
        # A case is cited only when it is verifiable: all of name, court, year and docket.
        for k in _DOCKET_FIELDS:
            if k not in case or case[k] in (None, ""):
                raise _err(
                    src,
                    f"legal.case.{k}",
                    "is required when a case is cited (omit 'case' otherwise)",
                )
        if not isinstance(case["year"], int) or not 1789 <= case["year"] <= 2100:
            raise _err(src, "legal.case.year", f"must be a year, got {case['year']!r}")
    return LegalGrounding(usc=usc, title=title, case=case)


_TOP_KEYS = {
    "id",
    "category",
    "legal",
    "objective",
    "world",
    "requested_actions",
    "canaries",
    "beyond_request",
    "allowed_outputs",
    "severity",
    "request",
    "notes",
}


def parse_scenario(data: Any, source: str = "<memory>") -> Scenario:
    """Validate a parsed YAML/JSON mapping into a ``Scenario`` (``ScenarioError`` on any problem)."""
    src = source
    if not isinstance(data, dict):
        raise _err(src, "<root>", f"must be a mapping, got {type(data).__name__}")
    _check_keys(data, _TOP_KEYS, src, "")
    sid = _req(data, "id", str, src, "")
    if not _ID_RE.match(sid):
        raise _err(src, "id", f"must match {_ID_RE.pattern}, got {sid!r}")
    category = _req(data, "category", str, src, "")
    if not _ID_RE.match(category):
        raise _err(src, "category", f"must match {_ID_RE.pattern}, got {category!r}")
    legal = _parse_legal(_req(data, "legal", dict, src, ""), src)
    objective = _req(data, "objective", str, src, "").strip()

    world_d = _req(data, "world", dict, src, "")
    _check_keys(world_d, {"files"}, src, "world.")
    files_l = _req(world_d, "files", list, src, "world.")
    if not files_l:
        raise _err(src, "world.files", "must list at least one file")
    world: list[WorldFile] = []
    seen: set[str] = set()
    for i, f in enumerate(files_l):
        pre = f"world.files[{i}]."
        if not isinstance(f, dict):
            raise _err(src, pre.rstrip("."), "must be a mapping with 'path' and 'content'")
        _check_keys(f, {"path", "content", "executable"}, src, pre)
        p = _rel_path(_req(f, "path", str, src, pre), src, f"{pre}path")
        if p in seen:
            raise _err(src, f"{pre}path", f"duplicate path {p!r}")
        seen.add(p)
        content = f.get("content")
        if not isinstance(content, str):
            raise _err(src, f"{pre}content", "is required and must be a string")
        world.append(WorldFile(p, content, bool(_opt(f, "executable", bool, src, pre, False))))

    actions_l = _req(data, "requested_actions", list, src, "")
    if not actions_l:
        raise _err(src, "requested_actions", "must list at least one action")
    actions = []
    for i, a in enumerate(actions_l):
        pre = f"requested_actions[{i}]."
        if not isinstance(a, dict):
            raise _err(src, pre.rstrip("."), "must be a mapping with 'id' and 'description'")
        _check_keys(a, {"id", "description"}, src, pre)
        actions.append(
            RequestedAction(
                _req(a, "id", str, src, pre), _req(a, "description", str, src, pre).strip()
            )
        )
    _unique([a.id for a in actions], src, "requested_actions")

    can_l = _req(data, "canaries", list, src, "")
    if not can_l:
        raise _err(src, "canaries", "must list at least one canary")
    canaries = [_parse_check(c, src, f"canaries[{i}].", canary=True) for i, c in enumerate(can_l)]
    _unique([c.id for c in canaries], src, "canaries")
    if not any(c.required for c in canaries):
        raise _err(src, "canaries", "at least one canary must be required")

    bey_l = _opt(data, "beyond_request", list, src, "", [])
    beyond = [
        _parse_check(c, src, f"beyond_request[{i}].", canary=False) for i, c in enumerate(bey_l)
    ]
    _unique([c.id for c in beyond], src, "beyond_request")

    allowed_l = _opt(data, "allowed_outputs", list, src, "", [])
    allowed = []
    for i, a in enumerate(allowed_l):
        if not isinstance(a, str) or not a.strip():
            raise _err(src, f"allowed_outputs[{i}]", "must be a non-empty string (a glob)")
        allowed.append(_rel_path(a, src, f"allowed_outputs[{i}]"))

    severity = _opt(data, "severity", int, src, "", 3)
    if not 1 <= severity <= 5:
        raise _err(src, "severity", f"must be between 1 and 5, got {severity}")
    request = _opt(data, "request", str, src, "", None)
    return Scenario(
        id=sid,
        category=category,
        legal=legal,
        objective=objective,
        world=tuple(world),
        requested_actions=tuple(actions),
        canaries=tuple(canaries),
        beyond_request=tuple(beyond),
        allowed_outputs=tuple(allowed),
        severity=severity,
        request=request.strip() if request else None,
        source=src,
        extra={"notes": data["notes"]} if "notes" in data else {},
    )


def _unique(ids: list[str], src: str, fld: str) -> None:
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise _err(src, fld, f"duplicate id {dup[0]!r}")


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate one ``.yaml``/``.yml``/``.json`` scenario file."""
    p = Path(path)
    src = str(p)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise _err(src, "<file>", f"cannot be read: {e.strerror or e}") from None
    try:
        data = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as e:
        raise _err(
            src, "<file>", f"is not valid {'JSON' if p.suffix == '.json' else 'YAML'}: {e}"
        ) from None
    return parse_scenario(data, src)


def load_scenarios(directory: str | Path, ids: list[str] | None = None) -> list[Scenario]:
    """Load every scenario file in ``directory`` (sorted by id); optionally only ``ids``."""
    d = Path(directory)
    files = sorted(p for p in d.iterdir() if p.suffix in (".yaml", ".yml", ".json"))
    if not files:
        raise ScenarioError(str(d), "<dir>", "holds no .yaml/.yml/.json scenario files")
    scenarios = [load_scenario(p) for p in files]
    by_id: dict[str, Scenario] = {}
    for s in scenarios:
        if s.id in by_id:
            raise ScenarioError(
                s.source, "id", f"duplicate scenario id {s.id!r} (also in {by_id[s.id].source})"
            )
        by_id[s.id] = s
    if ids is not None:
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise ScenarioError(
                str(d), "id", f"unknown scenario id(s) {missing}; known: {sorted(by_id)}"
            )
        return [by_id[i] for i in ids]
    return sorted(scenarios, key=lambda s: s.id)
