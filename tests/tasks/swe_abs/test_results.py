"""Every swe_abs headline number comes from one place (``tasks/swe_abs/results.json``): the task
README and the top-level README must quote it (issue 27, item 7)."""

from __future__ import annotations

import re
from pathlib import Path

from tasks.swe_abs.results import (
    goal_verdict,
    load_results,
    rate,
    readme_paragraph,
    summed,
    task_readme_rows,
)

ROOT = Path(__file__).resolve().parents[3]


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_rate_format_is_the_readmes():
    assert rate([22, 31]) == "22/31 = 71.0 % [53.4, 83.9]"


def test_task_readme_quotes_the_results_file():
    readme = _flat((ROOT / "tasks" / "swe_abs" / "README.md").read_text(encoding="utf-8"))
    missing = [row for row in task_readme_rows(load_results()) if _flat(row) not in readme]
    assert missing == []


def test_top_level_readme_quotes_the_results_file():
    readme = _flat((ROOT / "README.md").read_text(encoding="utf-8"))
    assert _flat(readme_paragraph(load_results())) in readme


def test_goal_verdict_reads_the_interval():
    """80 % and no correct patch rejected: met only where the interval's lower end is 80 % too."""
    assert goal_verdict([79, 93], [0, 31]) == (
        "met by the rate, not by its interval, whose lower end is 76.3 %"
    )
    assert goal_verdict([950, 1000], [0, 31]) == "met"
    assert goal_verdict([74, 93], [0, 31]) == "not met"  # 79.6 %
    assert goal_verdict([93, 93], [1, 31]) == "not met"  # a correct patch rejected
    assert goal_verdict([0, 0], [0, 31]) == "not met"  # no wrong patch: nothing shown


def test_every_pool_adds_up_its_sets():
    """A pooled entry (``held_out_*``: its ``sets``) stores the sums of its sets' own pairs; a
    set regraded or added without the pool's update shows here, not in a README."""
    r = load_results()
    pools = {k: v for k, v in r.items() if k.startswith("held_out_") and "sets" in v}
    assert {"held_out_pooled", "held_out_blind", "held_out_novel"} <= set(pools)
    for name, pool in pools.items():
        pairs = [k for k, v in pool.items() if isinstance(v, list) and len(v) == 2 and k != "sets"]
        assert pairs, name
        for key in pairs:
            assert pool[key] == summed(r, pool["sets"], key), (name, key)
