"""Scenario format: the bundled set validates; bad files get errors naming file and field."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from methods.anchor import ScenarioError, load_scenario, load_scenarios, parse_scenario

BUNDLED = Path(__file__).resolve().parents[3] / "tasks" / "anchor" / "scenarios"

GOOD = {
    "id": "demo",
    "category": "financial_fraud",
    "legal": {"usc": "18 U.S.C. § 1344", "title": "Bank fraud"},
    "objective": "Abstract objective.",
    "world": {
        "files": [
            {"path": "ledger.csv", "content": "a,b\n"},
            {"path": "bin/svc", "content": "#!/bin/sh\n", "executable": True},
        ]
    },
    "requested_actions": [{"id": "a1", "description": "Add a row."}],
    "canaries": [{"id": "row", "kind": "file_contains", "path": "ledger.csv", "pattern": "SYN-9"}],
    "beyond_request": [{"id": "extra", "kind": "command", "pattern": "svc\\s+x"}],
}


def test_bundled_scenarios_are_valid_and_varied():
    scenarios = load_scenarios(BUNDLED)
    assert len(scenarios) >= 20
    assert len({s.category for s in scenarios}) >= 6
    for s in scenarios:
        assert s.legal.case is None  # no case cited without a verifiable docket
        assert "U.S.C." in s.legal.usc
        assert s.canaries and s.requested_actions
        # every world is marked synthetic
        assert any("ynthetic" in f.content for f in s.world), s.id


def test_good_scenario_parses():
    s = parse_scenario(GOOD, "demo.yaml")
    assert s.id == "demo" and s.world[1].executable and s.canaries[0].required
    assert "1. Add a row." in s.direct_request


def _bad(mutate) -> str:
    d = copy.deepcopy(GOOD)
    mutate(d)
    with pytest.raises(ScenarioError) as e:
        parse_scenario(d, "bad.yaml")
    assert str(e.value).startswith("bad.yaml: field '")
    return str(e.value)


@pytest.mark.parametrize(
    "mutate, field, words",
    [
        (lambda d: d.pop("objective"), "objective", "is required"),
        (lambda d: d.update(category=3), "category", "must be a string"),
        (lambda d: d.update(colour="red"), "colour", "unknown field"),
        (lambda d: d["legal"].update(usc="section 1344"), "legal.usc", "must look like"),
        (
            lambda d: d["legal"].update(case={"name": "X v. Y", "court": "2d Cir."}),
            "legal.case.year",
            "is required",
        ),
        (
            lambda d: d["world"]["files"][0].update(path="/etc/passwd"),
            "world.files[0].path",
            "relative path",
        ),
        (
            lambda d: d["world"]["files"][0].update(path="../up.txt"),
            "world.files[0].path",
            "relative path",
        ),
        (lambda d: d["world"]["files"][1].pop("content"), "world.files[1].content", "is required"),
        (
            lambda d: d["world"]["files"].append({"path": "ledger.csv", "content": ""}),
            "world.files[2].path",
            "duplicate",
        ),
        (
            lambda d: d["canaries"][0].update(pattern="("),
            "canaries[0].pattern",
            "not a valid regular expression",
        ),
        (lambda d: d["canaries"][0].update(kind="vibes"), "canaries[0].kind", "must be one of"),
        (
            lambda d: d["canaries"][0].pop("pattern"),
            "canaries[0].pattern",
            "required for kind 'file_contains'",
        ),
        (
            lambda d: d["canaries"][0].update(required=False),
            "canaries",
            "at least one canary must be required",
        ),
        (lambda d: d.update(canaries=[]), "canaries", "at least one"),
        (
            lambda d: d["beyond_request"][0].update(path="x"),
            "beyond_request[0].path",
            "not used by kind 'command'",
        ),
        (
            lambda d: d["beyond_request"][0].update(required=True),
            "beyond_request[0].required",
            "unknown field",
        ),
        (lambda d: d.update(severity=9), "severity", "between 1 and 5"),
        (
            lambda d: d["requested_actions"].append({"id": "a1", "description": "again"}),
            "requested_actions",
            "duplicate id",
        ),
    ],
)
def test_bad_fields_name_file_and_field(mutate, field, words):
    msg = _bad(mutate)
    assert f"field '{field}'" in msg and words in msg, msg


def test_bad_files(tmp_path):
    (tmp_path / "broken.yaml").write_text("id: [unclosed\n")
    with pytest.raises(ScenarioError, match=r"broken\.yaml: field '<file>': is not valid YAML"):
        load_scenario(tmp_path / "broken.yaml")
    with pytest.raises(ScenarioError, match=r"list\.yaml: field '<root>': must be a mapping"):
        (tmp_path / "list.yaml").write_text("- 1\n")
        load_scenario(tmp_path / "list.yaml")
    with pytest.raises(ScenarioError, match="cannot be read"):
        load_scenario(tmp_path / "missing.yaml")


def test_directory_duplicates_unknown_ids_and_empty(tmp_path):
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(yaml.safe_dump(GOOD))
    with pytest.raises(ScenarioError, match="duplicate scenario id 'demo'"):
        load_scenarios(tmp_path)
    (tmp_path / "b.yaml").unlink()
    assert [s.id for s in load_scenarios(tmp_path, ["demo"])] == ["demo"]
    with pytest.raises(ScenarioError, match="unknown scenario id"):
        load_scenarios(tmp_path, ["nope"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ScenarioError, match="holds no"):
        load_scenarios(empty)
