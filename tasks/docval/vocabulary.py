"""Build the OCR baseline's receipt vocabulary from dev documents only (issue 29).

    python -m tasks.docval.vocabulary            # print the vocabulary built from dev
    python -m tasks.docval.vocabulary --write    # write methods/docval/receipt_vocabulary.json

What it reads (what each list means: ``methods/docval/_vocabulary.py``):

* SROIE receipts of the **dev vendors** (``tasks/docval/splits.yaml``): their gold key fields
  and their gold text lines (the box files). Never a test vendor's receipt.
* Rendered documents on the **dev** side (seed 0, the first ``RENDERED_DEV_DOCS`` indices, every
  third), for the total label model only (the generator's words enter nothing else: its
  company and street names were written by hand and are no evidence about receipts).

Each kept token or phrase must occur in at least ``MIN_SOURCES`` dev sources (vendors; each rendered
document is its own source), so no single receipt's item names or shop name enter.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.data import data_path
from methods.docval import (
    VOCABULARY_FILE,
    Vocabulary,
    Word,
    amount_candidates,
    amount_value,
    label_phrases,
    label_tokens,
)
from tasks.docval.render import render_document
from tasks.docval.sroie import SroieDocument, load_sroie
from tasks.docval.vendors import docval_split, vendor_of

__all__ = [
    "MIN_SOURCES",
    "RENDERED_DEV_DOCS",
    "DevDocument",
    "build_vocabulary",
    "dev_documents",
    "main",
]

MIN_SOURCES = 2
RENDERED_DEV_DOCS = 40  # the task's default n_docs; dev = indices 0, 3, ..., 39


@dataclass(frozen=True)
class DevDocument:
    """One dev document as the derivation sees it."""

    source: str  # vendor, or "rendered/<doc id>"
    words: tuple[Word, ...]  # the gold words
    total: str  # the gold total ("" when the document has none)
    sroie: SroieDocument | None  # SROIE's gold fields and their matched lines


def dev_documents(sroie_root: Path | None = None) -> list[DevDocument]:
    """The dev documents: SROIE receipts of dev vendors, then rendered dev documents."""
    root = sroie_root or data_path("sroie", how_to_get="SROIE under HARNESS_DATA_DIR/sroie")
    split = docval_split()
    docs: list[DevDocument] = []
    for doc in load_sroie(root).documents:
        vendor = vendor_of(doc.key.get("company", ""), doc.doc_id)
        if split.side(vendor) != "dev":
            continue
        docs.append(DevDocument(vendor, tuple(doc.words()), doc.key.get("total", ""), doc))
    for index in range(0, RENDERED_DEV_DOCS, 3):
        rendered = render_document(index, seed=0, split="docs")
        total = next((q.answers[0] for q in rendered.questions if q.field == "total"), "")
        docs.append(DevDocument(f"rendered/{rendered.doc_id}", tuple(rendered.words), total, None))
    return docs


def _common(counts: dict[str, set[str]]) -> list[str]:
    return sorted(t for t, sources in counts.items() if len(sources) >= MIN_SOURCES)


def _total_model(docs: Iterable[DevDocument]) -> tuple[tuple[int, int], dict[str, tuple[int, int]]]:
    pos: dict[str, int] = defaultdict(int)
    neg: dict[str, int] = defaultdict(int)
    sources: dict[str, set[str]] = defaultdict(set)
    n_pos = n_neg = 0
    for doc in docs:
        gold = amount_value(doc.total) if doc.total else None
        if gold is None:
            continue
        for cand in amount_candidates(doc.words):
            is_total = abs(cand.value - gold) < 0.005
            n_pos += is_total
            n_neg += not is_total
            for phrase in label_phrases(cand.tokens):
                (pos if is_total else neg)[phrase] += 1
                sources[phrase].add(doc.source)
    kept = _common(sources)
    return (n_pos, n_neg), {t: (pos[t], neg[t]) for t in kept}


def _receipt_words(
    docs: Iterable[DevDocument],
) -> tuple[list[str], list[str], list[str], list[str]]:
    company: dict[str, set[str]] = defaultdict(set)
    end: dict[str, set[str]] = defaultdict(set)
    stop: dict[str, set[str]] = defaultdict(set)
    skip: dict[str, set[str]] = defaultdict(set)
    in_address: set[str] = set()
    for doc in docs:
        if doc.sroie is None:
            continue
        for token in label_tokens(doc.sroie.key.get("company", "")):
            company[token].add(doc.source)
        in_address |= set(label_tokens(doc.sroie.key.get("address", "")))
        address = doc.sroie.matches.get("address")
        if address is None:
            continue
        lines = doc.sroie.lines
        first, last = address.lines[0], address.lines[-1]
        for token in label_tokens(lines[last].text):
            end[token].add(doc.source)
        if last + 1 < len(lines):
            opening = label_tokens(lines[last + 1].text)[:1]
            for token in opening:
                stop[token].add(doc.source)
        name = doc.sroie.matches.get("company")
        if name is not None and name.lines[-1] < first:
            for line in lines[name.lines[-1] + 1 : first]:
                for token in label_tokens(line.text):
                    skip[token].add(doc.source)
    return (
        _common(company),
        _common(end),
        [t for t in _common(stop) if t not in in_address],
        [t for t in _common(skip) if t not in in_address],
    )


def build_vocabulary(docs: list[DevDocument] | None = None) -> Vocabulary:
    """The receipt vocabulary of ``docs`` (default: ``dev_documents()``)."""
    docs = dev_documents() if docs is None else docs
    labels, tokens = _total_model(docs)
    company, end, stop, skip = _receipt_words(docs)
    n_sroie = sum(d.sroie is not None for d in docs)
    vendors = len({d.source for d in docs if d.sroie is not None})
    return Vocabulary(
        derived_from=(
            f"dev split only: {n_sroie} SROIE receipts of {vendors} dev vendors "
            f"(tasks/docval/splits.yaml) and {len(docs) - n_sroie} rendered dev documents; "
            f"phrases and words in >= {MIN_SOURCES} sources (python -m tasks.docval.vocabulary)"
        ),
        total_labels=labels,
        total_phrases=tokens,
        company_words=tuple(company),
        address_end_words=tuple(end),
        address_stop_words=tuple(stop),
        skip_words=tuple(skip),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tasks.docval.vocabulary", description=__doc__)
    parser.add_argument("--write", action="store_true", help=f"write {VOCABULARY_FILE.name}")
    args = parser.parse_args(argv)
    text = json.dumps(build_vocabulary().to_json(), indent=1, sort_keys=False) + "\n"
    if args.write:
        VOCABULARY_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {VOCABULARY_FILE}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
