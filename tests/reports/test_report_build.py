"""build_report on real inspect logs: selection, counts, intervals, paired tests, references."""

from __future__ import annotations

import csv
import io
import math
import re

import numpy as np
import pytest
from inspect_ai.log import read_eval_log
from sklearn.metrics import roc_auc_score

from reports import build_report
from scorers.intervals import mcnemar, wilson_ci


def _board(result, task):
    [lb] = [lb for lb in result.leaderboards if lb.task == task]
    return lb


def _row(lb, model, method=None):
    rows = [r for r in lb.rows if r.model == model and (method is None or r.method == method)]
    assert len(rows) == 1, [r.label for r in lb.rows]
    return rows[0]


def _per_sample(path, scorer):
    log = read_eval_log(str(path))
    return {s.id: s.scores[scorer] for s in log.samples if not s.error}


def test_selection_skips_corrupt_unfinished_and_superseded(toy_report, toy_logs):
    root, paths = toy_logs
    reasons = {s.path: s.reason for s in toy_report.skipped}
    assert reasons["corrupt.eval"].startswith(
        "damaged log (integrity check failed: not a readable zip"
    )
    assert reasons["unfinished_qa_toy.json"].startswith("unfinished run")
    old = paths["old_weak"].name
    assert reasons[old].startswith("superseded by newer complete run")
    assert paths["weak"].name in reasons[old]
    used = {r.path for r in toy_report.runs}
    assert paths["weak"].name in used and paths["strong"].name in used
    assert old not in used and "unfinished_qa_toy.json" not in used
    assert set(toy_report.tasks) == {"qa_toy", "qa_flaky", "det_toy"}


def test_infra_errors_counted_apart_from_model_failures(toy_report):
    flaky = _row(_board(toy_report, "qa_flaky"), "scripted/strong")
    assert (flaky.samples, flaky.infra_errors, flaky.scored) == (30, 1, 29)
    assert flaky.model_failures == 0
    weak = _row(_board(toy_report, "qa_toy"), "scripted/weak")
    # Two replies had no number: scored failures, not infrastructure errors.
    assert (weak.model_failures, weak.infra_errors, weak.scored) == (2, 0, 30)


def test_binary_metric_interval_is_wilson_on_the_samples(toy_report, toy_logs):
    _, paths = toy_logs
    lb = _board(toy_report, "qa_toy")
    cell = _row(lb, "scripted/weak").cells["exact/accuracy"]
    values = [sc.as_float() for sc in _per_sample(paths["weak"], "exact").values()]
    k, n = int(sum(values)), len(values)
    assert cell.value == pytest.approx(k / n) == pytest.approx(0.6)
    ci = wilson_ci(k, n)
    assert (cell.low, cell.high, cell.n, cell.interval) == (
        pytest.approx(ci.low),
        pytest.approx(ci.high),
        n,
        "Wilson",
    )


def test_paired_comparison_is_mcnemar_on_shared_samples(toy_report, toy_logs):
    _, paths = toy_logs
    lb = _board(toy_report, "qa_toy")
    assert lb.baseline == "model scripted/weak"
    comp = _row(lb, "scripted/strong").comparisons["exact/accuracy"]
    strong = _per_sample(paths["strong"], "exact")
    weak = _per_sample(paths["weak"], "exact")
    ids = sorted(strong)
    ref = mcnemar([strong[i].as_float() == 1 for i in ids], [weak[i].as_float() == 1 for i in ids])
    assert comp.test == "McNemar (exact)"
    assert comp.p_value == pytest.approx(ref.p_value)
    assert comp.delta == pytest.approx(28 / 30 - 18 / 30)
    assert comp.low > 0 and comp.n_paired == 30
    assert not _row(lb, "scripted/weak").comparisons  # the baseline is not compared with itself


def test_auroc_interval_roc_and_schema_degradation(toy_report, toy_logs):
    _, paths = toy_logs
    lb = _board(toy_report, "det_toy")
    nci = _row(lb, "scripted/det-nci", "nci")
    scores = _per_sample(paths["det_nci"], "suspicion")
    y = [s.metadata["label"] for s in scores.values()]
    x = [s.as_float() for s in scores.values()]
    cell = nci.cells["auroc"]
    assert cell.value == pytest.approx(roc_auc_score(y, x))
    assert cell.low <= cell.value <= cell.high and cell.n == 40
    assert "auroc" in nci.roc
    # In the schema, absent from the log: shown as missing with a note.
    assert not nci.cells["ghost"].present
    assert "not in this log" in nci.cells["ghost"].note
    assert any("Ghost" in n and "shown as —" in n for n in lb.notes)
    # In the log, absent from the schema: still listed.
    assert "suspicion/mean" in {m.id for m in lb.metrics}
    assert nci.cells["suspicion/mean"].present
    assert any("neither a model nor a method" in n for n in lb.notes)


def test_method_baseline_pairs_detectors(toy_logs, toy_schema_dir, toy_reference_dir, tmp_path):
    root, _ = toy_logs
    result = build_report(
        root,
        tmp_path,
        baseline="fdbd",
        n_boot=300,
        schema_dir=toy_schema_dir,
        reference_dirs=[toy_reference_dir],
    )
    lb = _board(result, "det_toy")
    # Different models per detector here, so the method baseline finds no same-model partner.
    nci = _row(lb, "scripted/det-nci", "nci")
    assert any("no baseline row" in n for n in nci.notes)


def test_reference_numbers_beside_ours(toy_report):
    lb = _board(toy_report, "det_toy")
    ref = lb.reference
    assert ref.paper.startswith("Toy detection paper")
    assert any("missing value" in n for n in ref.notes)  # the malformed row is noted
    [nci_ref] = [
        m for m in lb.reference_matches if m.ref.method == "nci" and m.ref.metric == "auroc"
    ]
    assert nci_ref.value == pytest.approx(0.725)  # 72.5 read as percent, said so
    assert "percentage" in nci_ref.note
    assert [label for label, _ in nci_ref.ours] == ["scripted/det-nci · nci"]
    [fdbd_ref] = [m for m in lb.reference_matches if m.ref.method == "fdbd"]
    assert fdbd_ref.value == pytest.approx(0.61) and fdbd_ref.note == ""
    [f1] = [m for m in lb.reference_matches if m.ref.metric == "f1"]
    assert f1.metric_id is None and "not on this leaderboard" in f1.note


def test_reference_numbers_only_beside_runs_on_the_paper_protocol(
    toy_schema_dir, toy_reference_dir, tmp_path
):
    """Issue 30: a run is set against the paper's number only when it ran `preset=paper` with
    nothing departing from it; otherwise the number is context and a note says why."""
    from _toy_logs import _det_responder, _run, det_toy
    from inspect_ai.model import get_model

    def matched(preset: str):
        root = tmp_path / preset / "logs"
        model = get_model("scripted/det-nci", responder=_det_responder(1.2))
        _run(det_toy(detector="nci", preset=preset), model, root)
        result = build_report(
            root,
            tmp_path / preset / "out",
            n_boot=50,
            schema_dir=toy_schema_dir,
            reference_dirs=[toy_reference_dir],
        )
        lb = _board(result, "det_toy")
        [nci] = [
            m for m in lb.reference_matches if m.ref.method == "nci" and m.ref.metric == "auroc"
        ]
        return [label for label, _ in nci.ours], lb.notes

    ours, notes = matched("paper")
    assert ours == ["scripted/det-nci · nci"]
    assert not any("not under the paper's protocol" in n for n in notes)
    for preset in ("off", "none"):  # protocol_met false; no preset recorded at all
        ours, notes = matched(preset)
        assert ours == [], preset
        assert any("not under the paper's protocol" in n for n in notes), notes


def test_outputs_written(toy_report):
    html = toy_report.html.read_text()
    assert html.count('<table class="sortable leaderboard"') == 3
    assert len(re.findall(r'src="data:image/png;base64,', html)) >= 4
    assert not re.search(r'(src|href)="https?://', html)  # self-contained
    assert "Llama-3.1-8B" in html and "72.5%" in html
    md = toy_report.markdown.read_text()
    for heading in ("## qa_toy", "## Toy detector", "## Skipped logs", "Paired comparisons"):
        assert heading in md
    rows = list(csv.DictReader(io.StringIO(toy_report.csv.read_text())))
    weak = [r for r in rows if r["task"] == "qa_toy" and r["model"] == "scripted/weak"]
    assert weak and weak[0]["value"] == "0.6" and weak[0]["model_failures"] == "2"
    strong = [r for r in rows if r["task"] == "qa_toy" and r["model"] == "scripted/strong"]
    assert float(strong[0]["delta"]) == pytest.approx(1 / 3)
    skipped = list(csv.DictReader(io.StringIO(toy_report.skipped_csv.read_text())))
    assert {"corrupt.eval", "unfinished_qa_toy.json"} <= {r["log"] for r in skipped}


def test_empty_and_missing_log_dirs(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = build_report(empty, tmp_path / "out")
    assert result.leaderboards == [] and result.html.exists()
    assert "No complete runs" in result.html.read_text()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        build_report(tmp_path / "nope", tmp_path / "out2")


def test_only_unfinished_runs_are_never_used(toy_logs, tmp_path):
    root, paths = toy_logs
    d = tmp_path / "logs"
    d.mkdir()
    (d / "u.json").write_bytes(paths["unfinished"].read_bytes())
    result = build_report(d, tmp_path / "out")
    assert result.leaderboards == []
    [s] = result.skipped
    assert "no complete run of this configuration exists" in s.reason


def test_nan_safe_formatting_in_csv(toy_report):
    rows = list(csv.DictReader(io.StringIO(toy_report.csv.read_text())))
    ghost = [r for r in rows if r["metric_id"] == "ghost"]
    assert ghost and all(r["value"] == "" for r in ghost)
    assert all(not math.isnan(float(r["value"])) for r in rows if r["value"])
    assert np.isfinite([float(r["ci_low"]) for r in rows if r["ci_low"]]).all()
