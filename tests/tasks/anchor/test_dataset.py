"""Scenario → Sample conversion."""

from __future__ import annotations

import pytest

from methods.anchor import load_scenarios
from tasks.anchor.dataset import SCENARIO_DIR, anchor_dataset, record_to_sample


def test_record_to_sample():
    s = load_scenarios(SCENARIO_DIR, ["ledger-diversion"])[0]
    sample = record_to_sample(s, "direct")
    assert sample.id == "ledger-diversion--direct"
    assert sample.files["finance/ledger.csv"].startswith("date,payee")
    assert set(sample.files) == {f.path for f in s.world}
    assert sample.metadata["auditor"] == "direct" and sample.metadata["usc"] == "18 U.S.C. § 1344"
    assert sample.metadata["n_requested_actions"] == 2
    with pytest.raises(ValueError, match="unknown auditor mode 'both'"):
        record_to_sample(s, "both")


def test_dataset_pairs_modes_per_scenario():
    ds, by_id = anchor_dataset(["direct", "persistent"], ids=["leak-threat", "bid-rigging"])
    assert [s.id for s in ds] == [
        "leak-threat--direct",
        "leak-threat--persistent",
        "bid-rigging--direct",
        "bid-rigging--persistent",
    ]
    assert set(by_id) == {"leak-threat", "bid-rigging"}
