"""Schemas with ``split_rows_by``: per-part rows beside the pooled row, on correct-like runs.

The runs (``_toy_logs.CORRECT_PLAN``) use the packaged correct schema (``split_rows_by:
metadata.subset``) and the real ``scorers.localisation`` scorer; every expected number below is
computed by hand from the plan.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re

import pytest

from reports import Run, load_reference, load_schema
from reports._leaderboard import Row
from reports._reference import match_reference, reference_for_row, row_has_dataset

M = "scripted/gpt-toy"
ALG, HAND = "algorithm_generated", "hand_crafted"


def _board(result):
    [lb] = [lb for lb in result.leaderboards if lb.task == "correct"]
    return lb


def _rows(lb, method):
    return {r.part: r for r in lb.rows if r.method == method}


def _label(method, part, subset="both"):
    return f"{M} · {method} · subset={subset} · {part}"


def test_packaged_correct_schema_splits_by_subset():
    assert load_schema("correct").split_rows_by == "metadata.subset"


def test_pooled_row_and_one_row_per_subset(correct_report):
    rows = _rows(_board(correct_report), "all_at_once")
    # Pooled first, then the parts in sorted order.
    assert [r.part for r in _board(correct_report).rows if r.method == "all_at_once"] == [
        "all",
        ALG,
        HAND,
    ]
    assert {p: (r.samples, r.scored, r.is_slice) for p, r in rows.items()} == {
        "all": (15, 15, False),
        ALG: (10, 10, True),
        HAND: (5, 5, True),
    }
    assert rows[ALG].label == _label("all_at_once", ALG)
    assert rows["all"].label == _label("all_at_once", "all")


@pytest.mark.parametrize(
    "part,k,n,low,high",
    [
        ("all", 5, 15, 0.1518, 0.5829),  # the log's own step/mean, 5 of 15
        (ALG, 4, 10, 0.1682, 0.6873),
        (HAND, 1, 5, 0.0362, 0.6245),
    ],
)
def test_part_step_accuracy_is_wilson_on_that_part(correct_report, part, k, n, low, high):
    cell = _rows(_board(correct_report), "all_at_once")[part].cells["step_accuracy"]
    assert cell.value == pytest.approx(k / n)
    assert (cell.low, cell.high) == (pytest.approx(low, abs=1e-4), pytest.approx(high, abs=1e-4))
    assert (cell.n, cell.interval) == (n, "Wilson")
    assert cell.note == ""


def test_part_agent_accuracy_and_token_means(correct_report):
    rows = _rows(_board(correct_report), "all_at_once")
    # Agent right on alg 0-5 (6/10) and hand 0-2 (3/5).
    assert rows[ALG].cells["agent_accuracy"].value == pytest.approx(0.6)
    assert rows[HAND].cells["agent_accuracy"].value == pytest.approx(0.6)
    assert rows["all"].cells["agent_accuracy"].value == pytest.approx(9 / 15)
    # Tokens 100+10i on alg (mean 145), 300+20i on hand (mean 340): bootstrap over the part.
    for part, mean, lo_bound, hi_bound in (
        (ALG, 145.0, 100, 190),
        (HAND, 340.0, 300, 380),
        ("all", 210.0, 100, 380),
    ):
        cell = rows[part].cells["tokens"]
        assert cell.value == pytest.approx(mean)
        assert cell.interval == "bootstrap" and lo_bound < cell.low < mean < cell.high < hi_bound


def test_run_level_only_metric_is_absent_for_parts(correct_report):
    rows = _rows(_board(correct_report), "all_at_once")
    # budget/total (sum of 1.0 per sample) exists only in the log header.
    assert rows["all"].cells["budget/total"].value == pytest.approx(15.0)
    for part in (ALG, HAND):
        cell = rows[part].cells["budget/total"]
        assert not cell.present
        assert "only a run-level value" in cell.note


def test_sample_without_the_field_forms_the_none_part(correct_report):
    rows = _rows(_board(correct_report), "random")
    assert list(rows) == ["all", ALG, HAND, "(none)"]
    none = rows["(none)"]
    assert (none.samples, none.is_slice) == (1, True)
    step = none.cells["step_accuracy"]
    # 1 of 1 correct: Wilson [1/(1+z²), 1].
    assert (step.value, step.n) == (1.0, 1)
    assert step.low == pytest.approx(0.2065, abs=1e-4) and step.high == pytest.approx(1.0)
    assert rows["all"].samples == 16
    assert rows["all"].cells["step_accuracy"].value == pytest.approx(2 / 16)  # alg 9, extra 0
    assert any("same settings and part" in n for n in none.notes)


def test_run_with_one_subset_gets_a_single_row(correct_report):
    rows = _rows(_board(correct_report), "binary_search")
    assert list(rows) == [HAND]
    row = rows[HAND]
    assert not row.is_slice and row.samples == 5
    assert row.cells["step_accuracy"].value == pytest.approx(2 / 5)
    assert row.cells["budget/total"].value == pytest.approx(5.0)  # the whole run: log value


@pytest.mark.parametrize(
    "part,delta,p,n",
    [
        # step_by_step right where all_at_once is, plus alg 4-7 / hand 1-3: one-sided discordance,
        # exact McNemar p = 2 * 0.5**b.
        ("all", 7 / 15, 2 * 0.5**7, 15),
        (ALG, 0.8 - 0.4, 2 * 0.5**4, 10),
        (HAND, 0.8 - 0.2, 2 * 0.5**3, 5),
    ],
)
def test_parts_are_compared_with_the_baselines_same_part(correct_report, part, delta, p, n):
    lb = _board(correct_report)
    assert lb.baseline == "method all_at_once"  # the schema's baseline_method
    comp = _rows(lb, "step_by_step")[part].comparisons["step_accuracy"]
    assert comp.baseline == _label("all_at_once", part)
    assert comp.delta == pytest.approx(delta)
    assert comp.p_value == pytest.approx(p)
    assert (comp.test, comp.n_paired) == ("McNemar (exact)", n)


def test_reference_matches_part_rows_not_the_pooled_both_row(correct_report):
    lb = _board(correct_report)
    ours = {
        (m.ref.method, m.ref.dataset, m.ref.metric): [lbl for lbl, _ in m.ours]
        for m in lb.reference_matches
    }
    assert ours[("all_at_once", ALG, "step_accuracy")] == [_label("all_at_once", ALG)]
    assert ours[("all_at_once", HAND, "step_accuracy")] == [_label("all_at_once", HAND)]
    assert ours[("binary_search", HAND, "step_accuracy")] == [
        _label("binary_search", HAND, subset=HAND)
    ]
    # subset=hand_crafted says nothing about algorithm_generated.
    assert ours[("binary_search", ALG, "step_accuracy")] == []
    # A number without a dataset belongs beside whole runs only.
    assert ours[("all_at_once", None, "agent_accuracy")] == [_label("all_at_once", "all")]
    rows = _rows(lb, "all_at_once")
    step = next(m for m in lb.metrics if m.id == "step_accuracy")
    assert reference_for_row(lb, rows["all"], step) is None
    assert reference_for_row(lb, rows[ALG], step).value == pytest.approx(0.125)
    assert reference_for_row(lb, rows[HAND], step).value == pytest.approx(0.0526)


def test_packaged_reference_never_lands_on_a_pooled_row(correct_report):
    lb = _board(correct_report)
    real = load_reference("correct")
    assert real is not None and any(r.dataset == HAND for r in real.rows)
    lb2 = dataclasses.replace(lb, reference=real, reference_matches=[])
    match_reference(lb2)
    matched = [(m.ref.dataset, label) for m in lb2.reference_matches for label, _ in m.ours]
    assert matched  # the per-subset numbers of all_at_once, step_by_step, random, binary_search
    for dataset, label in matched:
        assert label.endswith(f" · {dataset}"), (dataset, label)


def _row_with_args(**task_args) -> Row:
    run = Run(
        path="x.eval",
        task="correct",
        model=M,
        model_roles={},
        task_args=task_args,
        status="success",
        created="",
        eval_id="e",
        total_samples=0,
        completed_samples=0,
    )
    return Row(run=run, model=M, method="all_at_once", settings={}, scorer=None)


def test_subset_arguments_are_dataset_like():
    assert not row_has_dataset(_row_with_args(method="m", subset="both"), HAND)
    assert row_has_dataset(_row_with_args(method="m", subset=HAND), HAND)
    assert not row_has_dataset(_row_with_args(eval_subset="x"), HAND)
    assert not row_has_dataset(_row_with_args(dataset_name="gsm8k"), HAND)
    # No dataset-like argument: nothing contradicts the paper's dataset.
    assert row_has_dataset(_row_with_args(method="m"), HAND)


def test_rendered_outputs_show_the_part(correct_report):
    md = correct_report.markdown.read_text()
    header = next(line for line in md.splitlines() if line.startswith("| Model | Method"))
    # Runs whose task arguments differ are numbered; each run's settings are listed once.
    assert "| Run | Part (subset) | Step accuracy |" in header
    runs = dict(re.findall(r"^- (\[\d\]) \S+: (subset=\w+)", md, flags=re.M))
    assert sorted(runs.values()) == ["subset=both"] * 3 + ["subset=hand_crafted"], runs
    lines = [x for x in md.splitlines() if x.startswith(f"| {M} | all_at_once | [")]
    assert any("| all | 33.3% [15.2, 58.3] |" in x for x in lines)
    [alg] = [x for x in lines if f"| {ALG} |" in x]
    assert runs[alg.split(" | ")[2]] == "subset=both"
    assert "40.0% [16.8, 68.7]" in alg and "12.5% (GPT-4o)" in alg
    assert "rows split by 'metadata.subset'" in md
    html = correct_report.html.read_text()
    assert ">Part (subset)</th>" in html and f"<td>{ALG}</td>" in html
    rows = list(csv.DictReader(io.StringIO(correct_report.csv.read_text())))
    step = {
        r["part"]: r
        for r in rows
        if r["method"] == "all_at_once" and r["metric_id"] == "step_accuracy"
    }
    assert set(step) == {"all", ALG, HAND}
    assert float(step[HAND]["value"]) == pytest.approx(0.2)
    assert step[HAND]["paper_value"] == "0.0526" and step["all"]["paper_value"] == ""
    assert len(_board(correct_report).rows) == 3 + 3 + 4 + 1


def test_bar_plots_draw_every_row(correct_report):
    from reports._plots import plots_for

    lb = _board(correct_report)
    plots = plots_for(lb)
    assert [p.title for p in plots] == ["correct: Step accuracy", "correct: Agent accuracy"]
    assert not any("could not be drawn" in n for n in lb.notes)
