"""The bundled offline instances and SWE-bench records → Samples."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from harness.hub import DatasetFormatError
from methods.swe_abs import InstanceFormatError, check_patch, instance_from_record
from tasks.swe_abs.dataset import (
    BUNDLED,
    instance_to_sample,
    load_instances,
    project_of,
    read_records,
    record_to_sample,
)

GOLD = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def test_record_to_sample_swebench_format():
    record = {
        "instance_id": "pallets__flask-5014",
        "repo": "pallets/flask",
        "base_commit": "7ee9ceb7",
        "patch": GOLD,
        "test_patch": "",
        "problem_statement": "Require a non-empty name for Blueprints",
        "FAIL_TO_PASS": '["tests/test_blueprints.py::test_empty_name_not_allowed"]',
        "PASS_TO_PASS": '["tests/test_blueprints.py::test_dotted_name_not_allowed"]',
        "version": "2.3",
    }
    sample = record_to_sample(record)
    assert sample.id == "pallets__flask-5014"
    assert sample.input == "Require a non-empty name for Blueprints"
    assert sample.metadata["project"] == "flask"
    assert sample.metadata["fail_to_pass"] == 1 and sample.metadata["pass_to_pass"] == 1
    with pytest.raises(InstanceFormatError, match="FAIL_TO_PASS"):
        record_to_sample({**record, "FAIL_TO_PASS": None}, where="verified.jsonl:7")


def test_read_records_names_the_bad_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"instance_id": "a"}\n{broken\n')
    with pytest.raises(DatasetFormatError, match=r"x.jsonl:2: invalid JSON"):
        read_records(path)
    listed = tmp_path / "y.json"
    listed.write_text(json.dumps([{"a": 1}]))
    assert read_records(listed) == [{"a": 1}]


def test_bundled_instances_shape():
    instances = load_instances(BUNDLED)
    assert len(instances) >= 30
    assert len({i.instance_id for i in instances}) == len(instances)
    projects = Counter(project_of(i) for i in instances)
    assert set(projects) == {"six", "inflection", "toolz", "python-tabulate", "python-slugify",
                             "boltons", "flask"}  # fmt: skip
    for inst in instances:
        kinds = Counter(c.kind for c in inst.candidates)
        assert kinds["correct"] >= 1 and kinds["wrong"] >= 2, inst.instance_id
        assert all(c.trusted for c in inst.candidates)  # hand-written data
        assert inst.fail_to_pass, inst.instance_id
        assert inst.differential is not None, inst.instance_id
        assert inst.base_commit.startswith("sdist:")
        assert bool(inst.removed_tests) == bool(inst.removed_tests_patch.strip())
        sample = instance_to_sample(inst)
        assert sample.metadata["candidates_wrong"] >= 2
    assert sum(bool(i.removed_tests) for i in instances) >= 3  # some suites are weakened
    assert any(i.instance_id == "pallets__flask-5014" for i in instances)


def test_every_patch_applies_to_its_base_tree(swe_abs_ready):
    from tasks.swe_abs.sdist_tree import base_tree

    for inst in load_instances(BUNDLED):
        files = base_tree(inst.base_commit, inst.extra["base_setup_patch"], where=inst.instance_id)
        texts = {p: d.decode() for p, d in files.items() if p.endswith(".py")}
        changed, problem = check_patch(texts, inst.patch)
        assert problem is None, (inst.instance_id, problem)
        gold_texts = {**texts, **changed}
        _, problem = check_patch(gold_texts, inst.test_patch)
        assert problem is None, (inst.instance_id, "test_patch", problem)
        for cand in inst.candidates:
            _, problem = check_patch(texts, cand.patch)
            assert problem is None, (inst.instance_id, cand.system, problem)
        # F2P tests come with the test patch: absent from the base tree, present after it
        for test in inst.fail_to_pass:
            path = test.split("::")[0]
            name = test.split("::")[-1].split("[")[0]
            assert f"def {name}(" not in texts[path], (inst.instance_id, test)
            assert f"def {name}(" in gold_texts[path] or f"def {name}(" in (
                check_patch(gold_texts, inst.test_patch)[0].get(path) or ""
            ), (inst.instance_id, test)


def test_instance_records_load_from_their_own_json():
    first = read_records(BUNDLED)[0]
    inst = instance_from_record(first)
    assert inst.test_files() and inst.extra["sdist_sha256"]
