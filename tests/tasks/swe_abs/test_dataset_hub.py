"""swe_abs's dataset_file through `datasets`: SWE-bench Verified's pinned hub id read from a
filled hub cache offline (the code a user runs online), and a local Parquet file."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.hub import HubUnavailableError
from tasks.swe_abs.dataset import BUNDLED, SWE_BENCH_VERIFIED, load_source, read_records


def _records() -> list[dict]:
    return read_records(BUNDLED)[:2]


def test_swe_bench_verified_from_the_hub_cache(hub_cache) -> None:
    records = _records()
    hub_cache.fill(
        SWE_BENCH_VERIFIED.repo_id,
        {"data/test-00000-of-00001.parquet": hub_cache.parquet(records)},
        commit=SWE_BENCH_VERIFIED.revision,
    )
    instances, source, digest = load_source("hf://princeton-nlp/SWE-bench_Verified")
    assert [i.instance_id for i in instances] == [r["instance_id"] for r in records]
    assert (
        source == f"hf://princeton-nlp/SWE-bench_Verified@{SWE_BENCH_VERIFIED.revision}?split=test"
    )
    assert digest.startswith("sha256:")
    assert instances[0].fail_to_pass  # the JSON-encoded list survived the Arrow round trip


def test_local_parquet_and_offline_error(hub_cache, tmp_path: Path) -> None:
    path = tmp_path / "verified.parquet"
    path.write_bytes(hub_cache.parquet(_records()))
    instances, source, _ = load_source(str(path))
    assert len(instances) == 2 and source == str(path)
    with pytest.raises(HubUnavailableError, match="SWE-Bench_Verified_ABS@main"):
        load_source("hf://OpenAgentLab/SWE-Bench_Verified_ABS")


def test_bundled_default_is_unchanged() -> None:
    instances, source, _ = load_source(None)
    assert source == "tasks/swe_abs/data/instances.jsonl" and instances
