"""Data splits (issue 29): every run labelled with the split its log records, dev and test runs
never merged, paired or averaged, a dev run never set against the paper's numbers, and the
summary's headline the test run's."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from _toy_logs import _det_responder, _run, det_toy
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model

from reports import Run, build_report, select_runs
from reports._summary import summary_view

MODEL = "scripted/det"


def _log(root: Path, detector: str, strength: float, split: str | None) -> None:
    """A det_toy run whose log records `split` (None: a log from before splits existed)."""
    path = _run(
        det_toy(detector=detector),
        get_model(MODEL, responder=_det_responder(strength), memoize=False),
        root,
    )
    if split is None:
        return
    log = read_eval_log(str(path))
    log.eval.metadata = {**(log.eval.metadata or {}), "data_split": split}
    log.eval.task_args = {**log.eval.task_args, "split": split}
    write_eval_log(log, str(path))


@pytest.fixture(scope="module")
def split_report(tmp_path_factory, toy_schema_dir, toy_reference_dir):
    root = tmp_path_factory.mktemp("split_logs") / "logs"
    # test and dev runs of both detectors with the same model; an nci log that records no split
    for detector, test_strength, dev_strength in (("nci", 0.5, 3.0), ("fdbd", 0.3, 0.2)):
        _log(root, detector, test_strength, "test")
        _log(root, detector, dev_strength, "dev")
    _log(root, "nci", 1.0, None)
    result = build_report(
        root,
        tmp_path_factory.mktemp("split_out"),
        baseline="fdbd",
        n_boot=200,
        schema_dir=toy_schema_dir,
        reference_dirs=[toy_reference_dir],
    )
    [board] = [lb for lb in result.leaderboards if lb.task == "det_toy"]
    return result, board


def _rows(board, method: str) -> dict[str, object]:
    return {r.settings["split"]: r for r in board.rows if r.method == method}


def test_each_run_is_a_row_labelled_by_its_recorded_split(split_report) -> None:
    result, board = split_report
    assert not [s for s in result.skipped if "superseded" in s.reason]  # none replaces another
    nci = _rows(board, "nci")
    assert set(nci) == {"test", "dev", "all (not recorded)"}
    assert all(r.label == f"{MODEL} · nci · split={s}" for s, r in nci.items())
    # the dev run separates the classes far better: averaging would have hidden it
    assert nci["dev"].cells["auroc"].value > nci["test"].cells["auroc"].value
    assert any("record no data split" in n for n in board.notes)
    rows = list(csv.DictReader(io.StringIO(result.csv.read_text())))
    labelled = {json.loads(r["settings"])["split"] for r in rows if r["task"] == "det_toy"}
    assert labelled == {"test", "dev", "all (not recorded)"}


def test_paired_comparisons_stay_within_a_split(split_report) -> None:
    _, board = split_report
    for split, row in _rows(board, "nci").items():
        for comp in row.comparisons.values():
            assert comp.baseline.endswith(f"split={split}") or "fdbd" not in comp.baseline
    test_comp = _rows(board, "nci")["test"].comparisons["auroc"]
    assert test_comp.baseline == f"{MODEL} · fdbd · split=test" and test_comp.n_paired == 40


def test_a_dev_run_is_never_set_against_the_paper(split_report) -> None:
    _, board = split_report
    [nci_ref] = [
        m for m in board.reference_matches if m.ref.method == "nci" and m.ref.metric == "auroc"
    ]
    labels = [label for label, _ in nci_ref.ours]
    assert any("split=test" in x for x in labels) and not any("split=dev" in x for x in labels)
    assert not _rows(board, "nci")["dev"].comparable
    assert any("on the dev split" in n for n in board.notes)


def test_the_summary_headline_is_the_test_run(split_report) -> None:
    _, board = split_report
    [model] = summary_view(board)["models"]
    entries = {e["label"]: e for e in model["entries"]}
    assert set(entries) == {"nci", "fdbd"}  # test runs: no split suffix, dev never chosen
    assert entries["nci"]["raw"] == _rows(board, "nci")["test"].cells["auroc"].value
    assert entries["nci"]["settings"] == 3


def test_selection_keeps_runs_that_differ_only_in_the_split_their_data_is_on() -> None:
    def run(path: str, split: str) -> Run:
        return Run(
            path=path,
            task="dispat",
            model="m",
            model_roles={},
            task_args={"dataset": "wbc"},
            status="success",
            created=path,
            eval_id=path,
            total_samples=6,
            completed_samples=6,
            data_split=split,
        )

    selected, skipped = select_runs([run("a", "dev"), run("b", "test"), run("c", "test")])
    assert sorted(r.path for r in selected) == ["a", "c"] and [s.path for s in skipped] == ["b"]
    assert run("x", "").split_label == "all (not recorded)"
