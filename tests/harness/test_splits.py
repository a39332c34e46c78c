"""harness/splits.py: the frozen dev/test split by source."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from harness.splits import (
    SourceSplit,
    check_split,
    freeze,
    hash_side,
    load_source_split,
    split_metadata,
)


def test_hash_side_is_the_documented_rule() -> None:
    for source in ("acme", "ZHENG HUI", "django/django", ""):
        digest = hashlib.sha256(f"t:{source}".encode()).digest()
        fraction = int.from_bytes(digest[:8], "big") / 2**64
        assert hash_side("t", source, 0.5) == ("dev" if fraction < 0.5 else "test")
    # the share of dev is the fraction asked for (within sampling error on 4,000 names)
    share = sum(hash_side("t", f"s{i}", 0.3) == "dev" for i in range(4000)) / 4000
    assert 0.27 < share < 0.33


def test_frozen_lists_win_over_the_hash_rule() -> None:
    name = next(f"s{i}" for i in range(100) if hash_side("t", f"s{i}", 0.5) == "test")
    split = SourceSplit("t", "unit", 0.5, dev=frozenset({name}), test=frozenset())
    assert split.side(name) == "dev"
    assert split.unseen([name, "other"]) == ["other"]


def test_select_keeps_order_and_all_keeps_everything() -> None:
    split = SourceSplit("t", "u", 0.5, dev=frozenset({"a", "c"}), test=frozenset({"b"}))
    items = [("a", 1), ("b", 2), ("c", 3), ("b", 4)]
    assert split.select(items, lambda x: x[0], "dev") == [("a", 1), ("c", 3)]
    assert split.select(items, lambda x: x[0], "test") == [("b", 2), ("b", 4)]
    assert split.select(items, lambda x: x[0], "all") == items
    with pytest.raises(ValueError, match="split='train'"):
        split.select(items, lambda x: x[0], "train")


def test_a_source_on_both_sides_is_refused() -> None:
    with pytest.raises(ValueError, match="both sides"):
        SourceSplit("t", "u", 0.5, dev=frozenset({"a"}), test=frozenset({"a"}))


def test_freeze_round_trips_and_agrees_with_the_hash_rule(tmp_path: Path) -> None:
    sources = [f"vendor {i}" for i in range(40)] + ["vendor 3"]
    text = freeze("t", sources, unit="vendor", dev_fraction=0.34)
    path = tmp_path / "splits.yaml"
    path.write_text(text)
    split = load_source_split("t", path)
    assert split.dev | split.test == set(sources)
    for source in sources:
        assert split.side(source) == hash_side("t", source, 0.34)
    assert split.unit == "vendor" and yaml.safe_load(text)["dev_fraction"] == 0.34


def test_malformed_files_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no frozen split"):
        load_source_split("t", tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("unit: x\ndev: [a]\n")
    with pytest.raises(ValueError, match="needs unit, dev_fraction, dev and test"):
        load_source_split("t", bad)
    bad.write_text("unit: x\ndev_fraction: 0.3\ndev: a\ntest: []\n")
    with pytest.raises(ValueError, match="dev must be a list"):
        load_source_split("t", bad)


def test_check_split_and_metadata() -> None:
    assert check_split("dev", task="t") == "dev"
    with pytest.raises(ValueError, match="t: split='x'"):
        check_split("x", task="t")
    split = SourceSplit("t", "vendor", 0.5, dev=frozenset(), test=frozenset())
    assert split_metadata("test", split) == {"data_split": "test", "data_split_unit": "vendor"}
    assert split_metadata("all", None) == {"data_split": "all", "data_split_unit": ""}


def test_recorded_split_is_the_side_the_data_is_on() -> None:
    split = SourceSplit("t", "u", 0.5, dev=frozenset({"a", "c"}), test=frozenset({"b"}))
    assert split.recorded_split(["b"], "test") == "test"
    assert split.recorded_split(["a"], "test") == "dev"  # a dev source named under split=test
    assert split.recorded_split(["a", "b"], "test") == "all"  # a mix
    assert split.recorded_split(["a", "b"], "all") == "all"
    assert split.recorded_split([], "dev") == "dev"
    assert split.off_side_note("b", "test", "x=b") is None
    assert split.off_side_note("a", "all", "x=a") is None
    note = split.off_side_note("a", "test", "x=a")
    assert note is not None and "x=a is on the dev side" in note and "tasks/t/splits.yaml" in note
