"""The task's parameters as one frozen config (the ``@task`` function stays short and keeps its
parameters), deviations declared as data, and the outside candidate set's loader."""

from __future__ import annotations

import inspect
import json

import pytest

from tasks.swe_abs import task as task_module
from tasks.swe_abs.outside import (
    IN_ALL,
    NUMBERED_SETS,
    OutsideFormatError,
    load_outside,
    with_outside_candidates,
)
from tasks.swe_abs.task import SweAbsConfig


def test_task_function_is_short_and_its_parameters_are_the_config():
    source = inspect.getsource(task_module.swe_abs)
    params = inspect.signature(task_module.swe_abs).parameters
    assert len(source.splitlines()) <= len(params) + 16  # a line per parameter, a short body
    fields = SweAbsConfig.__dataclass_fields__
    assert list(params) == list(fields)
    assert {k: p.default for k, p in params.items()} == {k: f.default for k, f in fields.items()}


def test_deviations_follow_the_configuration():
    names = [d.split(":")[0].split("=")[0] for d in SweAbsConfig().deviations()]
    assert names == ["offline_instances", "python_ast_slice", "coverage_py", "warm_runner",
                     "candidates_hand_written", "model_free_tests", "operator_mutants"]  # fmt: skip
    other = SweAbsConfig(dataset_file="x.jsonl", tests_from="model", mutants_from="both")
    texts = other.deviations()
    assert not any(t.startswith(("offline_instances", "model_free", "operator_")) for t in texts)
    assert "judge_repeats=1 (paper: 3 per judge model)" in texts
    cfg = SweAbsConfig(tests_from="both", explore_tests=7).pipeline()
    assert cfg.tests_from == {"differential", "explore", "near", "foreign", "model"}
    assert cfg.explore_tests == 7 and cfg.foreign_tests == 64 and cfg.near_tests == 100
    assert SweAbsConfig(foreign_tests=0).pipeline().foreign_tests == 0
    near = SweAbsConfig(near_examples=9, near_tests=0).pipeline()
    assert (near.near_examples, near.near_tests) == (9, 0)


def test_outside_candidates_load_apart_from_the_own_ones():
    from tasks.swe_abs.dataset import load_source

    outside = load_outside()
    assert len(outside) >= 12
    every = [c for cands in outside.values() for c in cands]
    assert all(c.origin == "outside" and not c.trusted for c in every)
    assert {c.kind for c in every} == {"wrong", "correct"}
    loaded, source, digest = load_source(None)
    only, src, h = with_outside_candidates(loaded, source, digest, "outside")
    assert {i.instance_id for i in only} == set(outside) and "outside_candidates" in src
    assert all(c.origin == "outside" for i in only for c in i.candidates)
    both, _, _ = with_outside_candidates(loaded, source, digest, "all")
    assert len(both) == len(loaded)  # every candidate the project ships
    assert all({c.origin for c in i.candidates} == ({"own", "outside"} if i.instance_id in outside
                                                   else {"own"}) for i in both)  # fmt: skip
    assert with_outside_candidates(loaded, source, digest, "own")[0] is loaded


def test_a_malformed_outside_record_is_named(tmp_path):
    bad = tmp_path / "o.jsonl"
    bad.write_text(json.dumps({"instance_id": "x", "candidate_id": "c", "kind": "maybe",
                               "patch": "--- a\n"}) + "\n")  # fmt: skip
    with pytest.raises(OutsideFormatError, match=r"o.jsonl:1: kind 'maybe'"):
        load_outside(bad)


def test_the_second_and_third_outside_sets_load_alone_and_within_all(tmp_path):
    from tasks.swe_abs.dataset import load_source

    loaded, source, digest = load_source(None)
    iid = loaded[0].instance_id
    rec = {"instance_id": iid, "candidate_id": "o2X-w1", "kind": "wrong", "patch": "--- a\n"}
    second = tmp_path / "outside_candidates_2_X.jsonl"
    second.write_text(json.dumps(rec) + "\n")
    only, src, h = with_outside_candidates(
        loaded, source, digest, "outside2", numbered={2: [second]}
    )
    assert [i.instance_id for i in only] == [iid] and "outside_candidates_2_X" in src
    assert [c.system for c in only[0].candidates] == ["outside:o2X-w1"]
    every, src_all, h_all = with_outside_candidates(
        loaded, source, digest, "all", numbered={2: [second]}
    )
    systems = {c.system for i in every for c in i.candidates}
    assert "outside:o2X-w1" in systems and len(every) == len(loaded)
    assert {c.system for c in load_outside()[iid]} <= systems  # the first set too
    assert "outside_candidates.jsonl" in src_all and h_all != h
    with pytest.raises(FileNotFoundError, match="'outside2' has no file"):
        with_outside_candidates(loaded, source, digest, "outside2", numbered={2: []})
    # the later sets the same way: alone, and within all once graded (IN_ALL)
    later = {n: tmp_path / f"outside_candidates_{n}_Y.jsonl" for n in NUMBERED_SETS[1:]}
    for number, path in later.items():
        path.write_text(json.dumps({**rec, "candidate_id": f"o{number}Y-w1"}) + "\n")
        only, src_n, _ = with_outside_candidates(
            loaded, source, digest, f"outside{number}", numbered={number: [path]}
        )
        assert [c.system for i in only for c in i.candidates] == [f"outside:o{number}Y-w1"]
        assert f"outside_candidates_{number}_Y" in src_n
        with pytest.raises(FileNotFoundError, match=f"'outside{number}' has no file"):
            with_outside_candidates(
                loaded, source, digest, f"outside{number}", numbered={number: []}
            )
    numbered = {2: [second], **{n: [p] for n, p in later.items()}}
    every_set, _, _ = with_outside_candidates(loaded, source, digest, "all", numbered=numbered)
    every_system = {c.system for i in every_set for c in i.candidates}
    assert {f"outside:o{n}Y-w1" for n in IN_ALL if n > 2} | {"outside:o2X-w1"} <= every_system
    # a set not yet graded stays out of all
    assert not {f"outside:o{n}Y-w1" for n in NUMBERED_SETS if n not in IN_ALL} & every_system
    correct, _, _ = with_outside_candidates(
        loaded, source, digest, "all_correct", numbered=numbered
    )
    kinds = {(c.origin, c.kind) for i in correct for c in i.candidates}
    assert ("outside", "correct") in kinds and ("outside", "wrong") not in kinds
    assert ("own", "wrong") in kinds and len(correct) == len(loaded)
    rec["instance_id"] = "nobody__nothing-1"
    second.write_text(json.dumps(rec) + "\n")
    with pytest.raises(OutsideFormatError, match="nobody__nothing-1"):
        with_outside_candidates(loaded, source, digest, "outside2", numbered={2: [second]})
