"""Leaderboard schemas and reference files: parsing, errors that name the place, packaged files."""

from __future__ import annotations

import pytest
import yaml

from reports import SchemaError, load_schema, parse_reference, parse_schema
from reports._leaderboard import _key_regex
from reports._schema import schema_paths

TASKS = ["swe_abs", "anchor", "correct", "ood_hallucination", "omniverifier", "docval", "dispat"]


@pytest.mark.parametrize("task", TASKS)
def test_packaged_schema_loads(task):
    schema = load_schema(task)
    assert schema is not None and schema.task == task
    assert schema.headline is not None and schema.headline.headline
    assert schema.plots


def test_every_task_has_its_schema_in_its_folder():
    from pathlib import Path

    tasks_dir = Path(__file__).resolve().parents[2] / "tasks"
    task_folders = [p.name for p in tasks_dir.iterdir() if (p / "task.py").is_file()]
    assert set(TASKS) <= set(task_folders)
    assert sorted(schema_paths()) == sorted(task_folders)


def _minimal(**over):
    data = {"task": "t", "metrics": [{"id": "acc", "key": "s/accuracy"}]}
    data.update(over)
    return data


def test_parse_defaults():
    s = parse_schema(_minimal(), "x.yaml")
    [m] = s.metrics
    assert (m.direction, m.format, m.interval.kind) == ("higher", "float", "none")
    assert s.headline is m  # first metric when none is marked


@pytest.mark.parametrize(
    "bad,match",
    [
        (_minimal(colour="red"), r"x.yaml: unknown schema field\(s\) \['colour'\]"),
        (
            _minimal(plots=[{"kind": "bars", "metric": "acc", "titel": "x"}]),
            r"x.yaml: plots\[0\]: unknown plot field\(s\) \['titel'\]",
        ),
        (_minimal(metrics=[{"id": "a"}]), "metrics\\[0\\]: missing required field 'key'"),
        (_minimal(metrics=[{"id": "a", "key": "k", "direction": "up"}]), "direction"),
        (
            _minimal(metrics=[{"id": "a", "key": "k", "interval": {"kind": "auroc"}}]),
            "needs 'score' and 'label'",
        ),
        (_minimal(metrics=[{"id": "a", "key": "k"}, {"id": "a", "key": "j"}]), "duplicate"),
        (_minimal(plots=[{"kind": "bars", "metric": "nope"}]), "plot metric 'nope'"),
        (
            _minimal(
                metrics=[
                    {
                        "id": "a",
                        "key": "k",
                        "interval": {"kind": "binary", "value": "v", "where": "nope"},
                    }
                ]
            ),
            "where",
        ),
        ([1, 2], "must be a mapping"),
        (_minimal(split_rows_by="subset"), r"x.yaml: 'split_rows_by' 'subset' is not a per-sample"),
        (_minimal(split_rows_by="metadata."), "not a per-sample path"),
        (_minimal(split_rows_by="score.localisation_scorer"), "not a per-sample path"),
        (_minimal(split_rows_by="target.x"), "not a per-sample path"),
        (_minimal(split_rows_by=["metadata.subset"]), "'split_rows_by' must be a per-sample path"),
        (_minimal(split_rows_by=""), "'split_rows_by' must be a per-sample path"),
    ],
)
def test_parse_errors_name_the_place(bad, match):
    with pytest.raises(SchemaError, match=match):
        parse_schema(bad, "x.yaml")


@pytest.mark.parametrize(
    "path", ["metadata.subset", "score.localisation_scorer.value.step", "target", "id", None]
)
def test_split_rows_by_accepts_sample_paths(path):
    assert parse_schema(_minimal(split_rows_by=path), "x.yaml").split_rows_by == path


def test_load_schema_checks_task_name(tmp_path):
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(_minimal(task="b")))
    with pytest.raises(SchemaError, match="declares task 'b'"):
        load_schema("a", tmp_path)
    (tmp_path / "c.yaml").write_text("task: [unclosed")
    with pytest.raises(SchemaError, match="not valid YAML"):
        load_schema("c", tmp_path)
    assert load_schema("absent", tmp_path) is None


def test_reference_parsing_keeps_good_rows_and_notes_bad_ones():
    t = parse_reference(
        {
            "paper": "P",
            "source": "T1",
            "scale": 100,
            "rows": [
                {"model": "M", "metric": "auroc", "value": 79.0, "method": "nci"},
                {"model": "M", "metric": "auroc", "value": "high"},
                {"model": "M", "value": 1},
                "junk",
            ],
        },
        "t",
        "ref.yaml",
    )
    assert [r.value for r in t.rows] == [pytest.approx(0.79)]
    assert t.rows[0].scaled
    assert len(t.notes) == 3 and all(n.startswith("ref.yaml: rows[") for n in t.notes)
    assert parse_reference("text", "t", "r.yaml").notes


def test_key_templates():
    rx = _key_regex("*/{method}/auroc")
    m = rx.fullmatch("hallucination_detection/fdbd@all/auroc")
    assert m and m.group("method") == "fdbd@all" and m.group("scorer") == "hallucination_detection"
    assert not rx.fullmatch("hallucination_detection/nci/auroc_lo")
    assert _key_regex("step/mean").fullmatch("step/mean")
    assert not _key_regex("step/mean").fullmatch("agent/mean")


def test_paper_numbers_and_schemas_cite_papers_not_research_notes_or_paths():
    """What the report prints from tasks/<t>/{reference,leaderboard}.yaml must make sense to a
    reader of the report: no research notes they do not have, no paths of this machine."""
    import re

    from tests.conftest import REPO_ROOT

    bad = re.compile(r"notes/|notes §|\.md\b|(?<![\w.:/])/(?:tmp|work|home|root)/")
    files = sorted((REPO_ROOT / "tasks").glob("*/reference.yaml"))
    files += sorted((REPO_ROOT / "tasks").glob("*/leaderboard.yaml"))
    assert files
    found = [
        f"{f.relative_to(REPO_ROOT)}: {m.group()}"
        for f in files
        for m in bad.finditer(f.read_text())
    ]
    assert found == []
    assert bad.search("as transcribed in ../shared/notes/papers.md")  # the control
