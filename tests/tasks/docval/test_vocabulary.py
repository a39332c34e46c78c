"""The OCR baseline's receipt vocabulary is built from the dev split only (issue 29)."""

from __future__ import annotations

import shutil
from pathlib import Path

from methods.docval import VOCABULARY_FILE, label_tokens, load_vocabulary
from tasks.docval.sroie import load_sroie
from tasks.docval.vendors import docval_split, vendor_of
from tasks.docval.vocabulary import build_vocabulary, dev_documents


def _vocabulary_tokens(raw: dict) -> set[str]:
    tokens = {t for phrase in raw["total_phrases"] for t in phrase.split()}
    for key in ("company_words", "address_end_words", "address_stop_words", "skip_words"):
        tokens |= set(raw[key])
    return tokens


def _receipt_tokens(doc) -> set[str]:
    text = " ".join([*(line.text for line in doc.lines), *doc.key.values()])
    return set(label_tokens(text))


def test_committed_vocabulary_is_rebuilt_from_dev_receipts_alone(
    data_dir: Path, tmp_path: Path
) -> None:
    # a copy of the data holding the dev vendors' receipts only: the vocabulary built from it is
    # the committed one, so no test receipt can have shaped it
    split = docval_split()
    source = data_dir / "sroie"
    dev_only = tmp_path / "sroie"
    kept = 0
    for doc in load_sroie(source).documents:
        if split.side(vendor_of(doc.key["company"], doc.doc_id)) != "dev":
            continue
        kept += 1
        for sub, suffix in (("img", ".jpg"), ("box", ".csv"), ("key", ".json")):
            (dev_only / sub).mkdir(parents=True, exist_ok=True)
            shutil.copy(source / sub / f"{doc.doc_id}{suffix}", dev_only / sub)
    docs = dev_documents(dev_only)
    assert sum(d.sroie is not None for d in docs) == kept
    assert {d.source for d in docs if d.sroie is not None} <= split.dev
    built = build_vocabulary(docs).to_json()
    assert built == load_vocabulary(VOCABULARY_FILE).to_json()
    # and the full data gives the same: the test vendors' receipts are never read
    assert build_vocabulary(dev_documents(source)).to_json() == built


def test_no_token_only_a_test_vendor_prints_is_in_the_vocabulary(data_dir: Path) -> None:
    split = docval_split()
    dev_tokens: set[str] = set()
    test_tokens: set[str] = set()
    for doc in load_sroie(data_dir / "sroie").documents:
        side = split.side(vendor_of(doc.key["company"], doc.doc_id))
        (dev_tokens if side == "dev" else test_tokens).update(_receipt_tokens(doc))
    rendered = " ".join(w.text for d in dev_documents() if d.sroie is None for w in d.words)
    dev_tokens |= set(label_tokens(rendered))
    raw = load_vocabulary(VOCABULARY_FILE).to_json()
    vocabulary = _vocabulary_tokens(raw)
    assert vocabulary <= dev_tokens
    test_only = test_tokens - dev_tokens
    assert test_only and not vocabulary & test_only
    # the receipt word lists come from SROIE dev receipts alone (not the renderer's names):
    # e.g. "hardware" names three test vendors and no dev vendor
    sroie_dev = {
        t
        for doc in load_sroie(data_dir / "sroie").documents
        if split.side(vendor_of(doc.key["company"], doc.doc_id)) == "dev"
        for t in _receipt_tokens(doc)
    }
    for key in ("company_words", "address_end_words", "address_stop_words", "skip_words"):
        assert set(raw[key]) <= sroie_dev, key
    assert "hardware" not in raw["company_words"]


def test_vocabulary_file_round_trips_and_names_its_derivation() -> None:
    vocab = load_vocabulary(VOCABULARY_FILE)
    assert vocab.derived_from.startswith("dev split only")
    assert vocab.total_score(["total"]) > vocab.total_score(["subtotal"]) >= 0.0
    assert vocab.total_score(["zzz"]) == 0.0
