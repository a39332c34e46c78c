"""Sensitivity analysis over the real SWE-bench Verified per-instance results (simulated
rejections, labelled so)."""

from __future__ import annotations

import json

import pytest

from tasks.swe_abs.sensitivity import FILE, LABEL, LeaderboardFormatError, analyse, resolved_sets


def test_sensitivity_over_verified_runs_data(data_dir):
    runs, res = analyse(draws=300, seed=0)
    assert len(runs) == 10  # the bash-only top 10
    counts = sorted((len(v) for v in runs.values()), reverse=True)
    assert counts[:2] == [372, 371] and counts[-1] == 300  # MANIFEST §7 table
    assert "not measured" in LABEL and res.label.startswith("sensitivity analysis")
    assert 0.5 < res.spearman_lo <= res.spearman_mean <= res.spearman_hi <= 1.0
    assert 0 < res.top1_kept < 1  # first and second place are one instance apart
    _, none = analyse(rate=0.0, draws=20)
    assert none.spearman_mean == pytest.approx(1.0) and none.rank_changed_mean == 0
    all_runs = resolved_sets(data_dir / FILE, "all")
    assert len(all_runs) > len(runs)  # the Verified board adds the mini-SWE-agent rows


def test_leaderboard_format_errors_name_the_file(tmp_path):
    path = tmp_path / "lb.json"
    path.write_text(
        json.dumps({"leaderboards": [{"name": "bash-only", "results": [{"name": "x"}]}]})
    )
    with pytest.raises(LeaderboardFormatError, match="no entry"):
        resolved_sets(path)
    path.write_text(json.dumps({"leaderboards": [{"name": "bash-only", "results": [
        {"name": "x", "folder": "f", "per_instance_details": {"a": {"cost": 1}}}]}]}))  # fmt: skip
    with pytest.raises(LeaderboardFormatError, match="resolved"):
        resolved_sets(path)
