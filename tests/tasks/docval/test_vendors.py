"""tasks/docval/vendors.py and the vendor split of SROIE (issue 29)."""

from __future__ import annotations

import pytest

from harness.splits import hash_side
from tasks.docval.dataset import load_sroie_samples
from tasks.docval.sroie import load_sroie
from tasks.docval.vendors import VENDOR_ALIASES, docval_split, vendor_of


@pytest.mark.parametrize(
    ("company", "vendor"),
    [
        ("MR D.I.Y. (JOHOR) SDN BHD", "MR DIY SDN BHD"),
        ("MR. D.I.Y. (M) SDN BHD", "MR DIY SDN BHD"),
        ("S.H.H. MOTOR (SUNGAI RENGIT) SDN. BHD.", "SHH MOTOR SDN BHD"),
        ("  sam  sam trading co ", "SAM SAM TRADING CO"),
        ("99 SPEED MART S/B", "99 SPEED MART S/B"),
        ("TED HENG STATIONERY & BOOKS", "TEO HENG STATIONERY & BOOKS"),
    ],
)
def test_vendor_normalisation(company: str, vendor: str) -> None:
    assert vendor_of(company) == vendor


def test_an_empty_company_is_its_own_source() -> None:
    assert vendor_of(" (.) ", "017") == "receipt 017"
    assert set(VENDOR_ALIASES.values()).isdisjoint(VENDOR_ALIASES)


def test_frozen_split_names_every_shipped_vendor_once(data_dir) -> None:
    split = docval_split()
    docs = load_sroie(data_dir / "sroie").documents
    vendors = {vendor_of(d.key["company"], d.doc_id) for d in docs}
    assert split.unseen(vendors) == [] and split.dev | split.test == vendors
    assert not split.dev & split.test
    # frozen by the hash rule at the recorded dev_fraction: nothing was moved by hand
    for vendor in vendors:
        assert split.side(vendor) == hash_side("docval", vendor, split.dev_fraction)
    assert len(split.dev) >= 12 and len(split.test) >= 12


def test_sroie_dev_and_test_share_no_vendor(data_dir) -> None:
    dev = load_sroie_samples("dev")
    test = load_sroie_samples("test")
    every = load_sroie_samples("all")
    dev_vendors = {s.metadata["vendor"] for s in dev.samples}
    test_vendors = {s.metadata["vendor"] for s in test.samples}
    assert dev_vendors and test_vendors and not dev_vendors & test_vendors
    assert {s.id for s in dev.samples} | {s.id for s in test.samples} == {
        s.id for s in every.samples
    }
    assert {s.metadata["split"] for s in dev.samples} == {"dev"}
    assert {s.metadata["split"] for s in test.samples} == {"test"}
    assert test.extra["data_split"] == "test" and test.extra["data_split_unit"].startswith("vendor")
    assert dev.extra["data_split_sources"] == len(docval_split().dev)
    assert every.extra["data_split_unlisted"] == []
