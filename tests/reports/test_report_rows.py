"""Rows and labels that are right (issue 31, item 12): one row for a configuration run by both
`harness eval` and `inspect eval`, a reason instead of `— ()`, contained faults are no format
failures, no "(constrained)" for a model that does not decode, smoke runs never beside a paper
number."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import yaml

import reports

TASKS = Path(reports.__file__).resolve().parent.parent / "tasks"


def _board(report, task):
    [lb] = [lb for lb in report.leaderboards if lb.task == task]
    return lb


def test_a_harness_and_an_inspect_run_of_one_configuration_are_one_row(
    fourteen_report, fourteen_logs
):
    _, paths = fourteen_logs
    qa = _board(fourteen_report, "qa_toy")
    assert len(qa.rows) == 1, [r.label for r in qa.rows]
    merged = {s.path: s.reason for s in fourteen_report.skipped}
    dupes = [p.name for k, p in paths.items() if k.startswith("qa_")]
    [gone] = [n for n in dupes if n in merged]
    assert merged[gone].startswith("same configuration and results as "), merged[gone]
    assert "harness eval" in merged[gone] and "inspect eval" in merged[gone]
    assert any("merged" in n for n in qa.notes)


def test_delta_cells_say_why_there_is_no_difference(fourteen_report):
    html = fourteen_report.html.read_text()
    md = fourteen_report.markdown.read_text()
    assert "— ()" not in html and "— ()" not in md
    # ood's two-sample runs: AUROC is undefined, so is its difference; the cell says so.
    assert re.search(r"— \(undefined[^)]*\)", md), "no reason given for an undefined Δ"


def test_contained_faults_are_not_format_failures(fourteen_report):
    stress = _board(fourteen_report, "agent_stress")
    for row in stress.rows:
        assert row.format_failures == 0, row.label
        assert row.model_failures > 0  # still failures of their samples
    md = fourteen_report.markdown.read_text()
    line = next(x for x in md.splitlines() if x.startswith("| agent_stress |"))
    assert "7/10" not in line and "70%" not in line


def test_a_scripted_agent_is_not_labelled_constrained(fourteen_report):
    stress = _board(fourteen_report, "agent_stress")
    assert all("constrained" not in r.label for r in stress.rows), [r.label for r in stress.rows]
    assert "(constrained)" not in fourteen_report.html.read_text()


def test_each_task_with_paper_numbers_declares_its_smallest_comparable_run():
    paths = sorted(TASKS.glob("*/reference.yaml"))
    assert len(paths) >= 7
    for path in paths:
        declared = yaml.safe_load(path.read_text()).get("report") or {}
        n = declared.get("min_samples")
        assert isinstance(n, int) and n >= 10, f"{path}: report.min_samples {n!r}"
        assert declared.get("numbers"), f"{path}: report.numbers (what the numbers are)"


def test_a_smoke_run_is_marked_and_never_set_against_a_paper_number(run_all_report):
    dispat = _board(run_all_report, "dispat")
    assert dispat.rows and all(r.smoke for r in dispat.rows)
    md = run_all_report.markdown.read_text()
    line = next(x for x in md.splitlines() if x.startswith("| dispat |"))
    assert "smoke run" in line and "paper" not in line.lower() and "pyod" not in line.lower()
    rows = list(csv.DictReader(io.StringIO(run_all_report.csv.read_text())))
    assert all(r["paper_value"] == "" for r in rows if r["task"] == "dispat")
    assert all(r["smoke"] == "yes" for r in rows if r["task"] == "dispat")
    html = run_all_report.html.read_text()
    section = html[html.index('id="task-dispat"') :]
    section = section[: section.index("</section>")]
    assert "smoke run" in section
    table = section[section.index('<table class="sortable leaderboard"') :]
    assert 'class="paper"' not in table[: table.index("</table>")]  # no column of paper numbers
