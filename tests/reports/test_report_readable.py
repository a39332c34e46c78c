"""What a reader sees first: summary, format failures apart from skill, constrained runs named."""

from __future__ import annotations

import csv

from reports._leaderboard import Row, _count_outcomes
from reports._public import public_dir, public_path, public_text
from reports._runs import Run, _constrained
from reports._samples import SampleRow
from reports._schema import LeaderboardSchema
from reports._view import MAIN_COLUMNS, more_columns


def _run(**kw) -> Run:
    base = dict(
        path="a.eval",
        task="t",
        model="vllm/m",
        model_roles={},
        task_args={},
        status="success",
        created="2026-11-30",
        eval_id="x",
        total_samples=1,
        completed_samples=1,
    )
    return Run(**{**base, **kw})


def test_a_constrained_run_is_named_beside_its_model_and_never_merged_with_an_unconstrained_one():
    meta = {"harness_constrained": {"constrained": "on", "deviation": "..."}}
    on, off = _run(constrained=_constrained(meta)), _run(constrained=_constrained({}))
    assert on.model_label == "vllm/m (constrained)" and off.model_label == "vllm/m"
    assert on.key != off.key
    assert _constrained({"harness_constrained": {"constrained": "off"}}) == "off"
    assert _constrained({"harness_constrained": "garbage"}) == ""


def _sample(i: int, meta: dict, limit: str | None = None, error: str | None = None) -> SampleRow:
    return SampleRow(
        key=f"{i}#1",
        error=error,
        limit=limit,
        scores={} if error else {"s": {"value": 0, "metadata": meta}},
    )


def test_format_failures_are_replies_that_did_not_parse_truncations_apart():
    samples = [
        _sample(0, {"reply_status": "ok"}),
        _sample(1, {"reply_status": "format_failure", "failure": "no JSON"}),
        _sample(2, {"reply_status": "truncated", "failure": "cut"}),
        _sample(3, {"failure": "no number in reply"}),  # no reply_status: the failure key says it
        _sample(4, {"failure": "token limit"}, limit="token"),  # a limit hit: a truncation
        _sample(5, {"reply_status": "ok", "failure": "out of range"}),  # parsed, then wrong
        _sample(6, {}, error="RuntimeError"),  # infra error: counted apart
    ]
    row = Row(run=_run(), model="m", method="", settings={}, scorer=None)
    _count_outcomes(row, samples, LeaderboardSchema(task="t", title="t"))
    assert (row.samples, row.scored, row.infra_errors) == (7, 6, 1)
    assert row.model_failures == 5
    assert (row.format_failures, row.truncated) == (2, 2)


def test_report_paths_name_no_directory_of_the_building_machine(tmp_path, monkeypatch):
    assert (
        public_path("/home/u/clone/tasks/anchor/leaderboard.yaml")
        == "tasks/anchor/leaderboard.yaml"
    )
    assert public_path("/tmp/x/schemas/det_toy.yaml") == "schemas/det_toy.yaml"
    assert public_path("generic") == "generic"
    text = public_text("/srv/a/tasks/correct/reference.yaml: rows[2]: bad; https://arxiv.org/abs/1")
    assert text == "tasks/correct/reference.yaml: rows[2]: bad; https://arxiv.org/abs/1"
    monkeypatch.chdir(tmp_path)
    assert public_dir(tmp_path / "logs" / "run-all") == "logs/run-all"
    assert public_dir(tmp_path.parent / "elsewhere") == "elsewhere"


def test_summary_format_failures_and_more_toggle_in_the_report(toy_report):
    md = toy_report.markdown.read_text()
    assert md.split("\n## ")[1].startswith("Summary")  # the first section
    summary = md[md.index("## Summary") : md.index("## ", md.index("## Summary") + 3)]
    assert all(f"| {t} |" in summary for t in toy_report.tasks)
    # qa_toy: the weak model's two replies without a number are format failures (2 of 30).
    assert "scripted/weak: 2/30 (7%)" in summary
    with toy_report.csv.open() as fh:
        rows = [
            r for r in csv.DictReader(fh) if r["task"] == "qa_toy" and r["model"] == "scripted/weak"
        ]
    assert rows and {r["format_failures"] for r in rows} == {"2"}
    html = toy_report.html.read_text()
    assert '<section id="summary">' in html and "Format failures" in html
    det = next(lb for lb in toy_report.leaderboards if lb.task == "det_toy")
    more = more_columns(det)
    # The schema's metrics are shown; the metric only the log has (suspicion/mean) is behind "more".
    assert [m.id for m, hidden in zip(det.metrics, more, strict=True) if not hidden] == [
        m.id for m in det.metrics if m.from_schema
    ][:MAIN_COLUMNS]
    assert any(more) and 'class="more-toggle"' in html
