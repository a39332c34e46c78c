"""docval datasets → inspect Samples: rendered documents (bundled default), SROIE receipts, and
DocVQA / MP-DocVQA question files with images on disk.

One ``record_to_sample`` per source format. Every sample carries the same metadata:
``source, doc_id, image`` (path), ``image_size, question, answers, gold_box`` (pixels, or None
when the source has no boxes), ``gold_boxes`` (equally good alternatives, see ``sroie.py``),
``gold_box_kind, field, split`` and ``gold_words`` (a JSON file of the source's own word boxes,
used by ``ocr_engine=gold``; None when the source has none).

Splits partition the documents (``all`` = every document), by source where sources repeat:

* **sroie**: by vendor (issue 29). A receipt's vendor is its normalised ``company`` key
  (``tasks/docval/vendors.py``); the frozen lists in ``tasks/docval/splits.yaml`` put 15 vendors
  (22 receipts) on ``dev`` and 14 vendors (23 receipts) on ``test``; a vendor they do not name goes
  to a side by the stable hash rule of ``harness.splits``. No vendor is on both sides. Samples
  carry ``vendor`` in their metadata.
* **rendered** and **docvqa**: ``dev`` = every third document (index 0, 3, 6, …), ``test`` = the
  others. A rendered document is its own source (drawn from its own seed; no two share content
  beyond the generator's templates); DocVQA documents are taken in file order.

Every choice made by looking at data is made on ``dev``; the correction set (DocVAL phase B2) is
built on ``dev``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from inspect_ai.dataset import Sample

from harness.data import content_hash, data_path, text_hash
from harness.hub import DataSpec, HubDataset
from harness.paths import cache_dir
from harness.splits import split_metadata
from methods.docval import words_to_dicts
from scorers.boxes import validate_box
from tasks.docval.render import DEGRADATIONS, Degradation, RenderedDocument, render_document
from tasks.docval.sroie import (
    SROIE_QUESTIONS,
    DatasetFormatError,
    SroieDocument,
    SroieLoad,
    decoded_image_size,
    load_sroie,
)
from tasks.docval.vendors import docval_split, vendor_of

__all__ = [
    "DOCVQA_HOW_TO_GET",
    "SROIE_HOW_TO_GET",
    "DatasetFormatError",
    "LoadedDataset",
    "Split",
    "docvqa_record_to_sample",
    "in_split",
    "load_docvqa",
    "load_rendered",
    "load_sroie_samples",
    "rendered_record_to_sample",
    "sroie_record_to_sample",
]

Split = Literal["all", "dev", "test"]
SROIE_HOW_TO_GET = (
    "copy img/, box/ and key/ of the ICDAR-2019 SROIE train set (e.g. zzzDavid/ICDAR-2019-SROIE "
    "data/) into $HARNESS_DATA_DIR/sroie"
)
#: pinned by inspect_evals 0.28.0 (docvqa.py); its rows carry the page image, no answer boxes
DOCVQA_HUB = HubDataset(
    "lmms-lab-encoder/DocVQA",
    "539088ef8a8ada01ac8e2e6d4e372586748a265e",
    config="DocVQA",
    split="validation",
    pin_source="inspect_evals 0.28.0",
)
DOCVQA_HOW_TO_GET = (
    "download DocVQA (SP: train_v1.0.json / val_v1.0.json with documents/) or MP-DocVQA "
    "(qas/*.json with images/) from the RRC site and point docvqa_file= at the JSON file"
)

DATA: tuple[DataSpec, ...] = (
    DataSpec("SROIE 2019 receipts", "dataset=sroie", "sroie", None, SROIE_HOW_TO_GET),
    DataSpec(
        "DocVQA validation",
        "dataset=docvqa docvqa_file=hf://lmms-lab-encoder/DocVQA",
        "docvqa/val_v1.0.json",
        DOCVQA_HUB,
        DOCVQA_HOW_TO_GET,
    ),
)


@dataclass
class LoadedDataset:
    samples: list[Sample]
    source: str
    hash: str
    generated: bool
    extra: dict[str, Any]


def in_split(index: int, split: Split) -> bool:
    """``dev`` = every third document, ``test`` = the others, ``all`` = every one."""
    if split == "all":
        return True
    return (index % 3 == 0) == (split == "dev")


def _index_split_metadata(split: Split) -> dict[str, Any]:
    """The log's split record for a dataset split by document index (rendered, docvqa)."""
    return {**split_metadata(split, None), "data_split_unit": "document (every third is dev)"}


def _metadata(
    *,
    source: str,
    doc_id: str,
    image: Path,
    image_size: tuple[int, int],
    question: str,
    answers: list[str],
    gold_box: Sequence[float] | None,
    gold_boxes: Sequence[Sequence[float]] | None,
    gold_box_kind: str,
    field: str,
    split: str,
    gold_words: Path | None,
    **extra: Any,
) -> dict[str, Any]:
    def r(box: Sequence[float]) -> list[float]:
        return [round(float(v), 2) for v in box]

    return {
        "source": source,
        "doc_id": doc_id,
        "image": str(image),
        "image_size": list(image_size),
        "question": question,
        "answers": answers,
        "gold_box": None if gold_box is None else r(gold_box),
        "gold_boxes": [r(b) for b in (gold_boxes or ([gold_box] if gold_box else []))],
        "gold_box_kind": gold_box_kind,
        "field": field,
        "split": split,
        "gold_words": None if gold_words is None else str(gold_words),
        **extra,
    }


# --------------------------------------------------------------------------- rendered


def rendered_record_to_sample(
    doc: RenderedDocument, q_index: int, image: Path, words_file: Path, split: str
) -> Sample:
    """Question ``q_index`` of a rendered document (exact answer box from the renderer)."""
    q = doc.questions[q_index]
    return Sample(
        id=f"rendered/{doc.doc_id}/{q_index}-{q.field}",
        input=q.question,
        target=q.answers,
        metadata=_metadata(
            source="rendered",
            doc_id=doc.doc_id,
            image=image,
            image_size=doc.image.size,
            question=q.question,
            answers=q.answers,
            gold_box=q.box,
            gold_boxes=None,
            gold_box_kind="words",
            field=q.field,
            split=split,
            gold_words=words_file,
            layout=doc.layout,
            font=doc.font,
            degradation=doc.degradation,
            distractor=q.distractor,
        ),
    )


def load_rendered(
    n_docs: int,
    *,
    seed: int,
    split: Split,
    degradation: Degradation,
    questions_per_doc: int,
    out_root: Path | None = None,
) -> LoadedDataset:
    """Render ``n_docs`` documents (PNG + exact word boxes under the harness cache) and take
    ``questions_per_doc`` questions of each (the layout's headline question first, the others
    in seeded order)."""
    if degradation not in DEGRADATIONS:
        raise ValueError(f"degradation must be one of {DEGRADATIONS}, got {degradation!r}")
    if n_docs < 1 or questions_per_doc < 1:
        raise ValueError("n_docs and questions_per_doc must be at least 1")
    root = (out_root or cache_dir() / "docval" / "rendered") / f"seed{seed}-{degradation}"
    root.mkdir(parents=True, exist_ok=True)
    samples: list[Sample] = []
    manifest: list[str] = []
    layouts: dict[str, int] = {}
    for index in range(n_docs):
        if not in_split(index, split):
            continue
        doc = render_document(index, seed=seed, split="docs", degradation=degradation)
        image = root / f"{doc.doc_id}.png"
        words_file = root / f"{doc.doc_id}.words.json"
        png = doc.png_bytes()
        if not image.is_file() or image.read_bytes() != png:
            tmp = image.with_suffix(".png.tmp")
            tmp.write_bytes(png)
            tmp.replace(image)
        words_json = json.dumps(words_to_dicts(doc.words))
        if not words_file.is_file() or words_file.read_text() != words_json:
            words_file.write_text(words_json)
        manifest.append(f"{doc.doc_id}:{text_hash(png.hex())}:{text_hash(words_json)}")
        layouts[doc.layout] = layouts.get(doc.layout, 0) + 1
        order = list(range(1, len(doc.questions)))
        random.Random(f"docval-questions:{seed}:{index}").shuffle(order)
        split_name = "dev" if in_split(index, "dev") else "test"
        for qi in [0, *order][:questions_per_doc]:
            samples.append(rendered_record_to_sample(doc, qi, image, words_file, split_name))
    return LoadedDataset(
        samples,
        f"generated: tasks.docval.render (seed={seed}, n_docs={n_docs}, degradation={degradation})",
        text_hash("\n".join(manifest)),
        True,
        {"layouts": layouts, **_index_split_metadata(split)},
    )


# --------------------------------------------------------------------------- SROIE


def sroie_record_to_sample(
    doc: SroieDocument, field: str, split: str, words_file: Path, vendor: str = ""
) -> Sample:
    match = doc.matches[field]
    question = SROIE_QUESTIONS[field]
    answer = doc.key[field]
    return Sample(
        id=f"sroie/{doc.doc_id}/{field}",
        input=question,
        target=[answer],
        metadata=_metadata(
            source="sroie",
            doc_id=doc.doc_id,
            image=doc.image,
            image_size=doc.size,
            question=question,
            answers=[answer],
            gold_box=match.box,
            gold_boxes=match.alternatives or (match.box,),
            gold_box_kind=match.kind,
            field=field,
            split=split,
            gold_words=words_file,
            match_similarity=round(match.similarity, 4),
            vendor=vendor or vendor_of(doc.key.get("company", ""), doc.doc_id),
        ),
    )


def load_sroie_samples(split: Split, *, limit_docs: int | None = None) -> LoadedDataset:
    """The SROIE receipts on ``split``, by vendor (the frozen ``splits.yaml``)."""
    root = data_path("sroie", how_to_get=SROIE_HOW_TO_GET)
    loaded: SroieLoad = load_sroie(root)
    source_split = docval_split()
    words_root = cache_dir() / "docval" / "sroie_words"
    words_root.mkdir(parents=True, exist_ok=True)
    samples = []
    docs = loaded.documents[:limit_docs] if limit_docs else loaded.documents
    vendors = {doc.doc_id: vendor_of(doc.key.get("company", ""), doc.doc_id) for doc in docs}
    for doc in source_split.select(docs, lambda d: vendors[d.doc_id], split):
        vendor = vendors[doc.doc_id]
        words_file = words_root / f"{doc.doc_id}.json"
        words_json = json.dumps(words_to_dicts(doc.words()))
        if not words_file.is_file() or words_file.read_text() != words_json:
            words_file.write_text(words_json)
        side = source_split.side(vendor)
        for field in doc.matches:
            samples.append(sroie_record_to_sample(doc, field, side, words_file, vendor))
    kept = {vendors[d.doc_id] for d in docs if source_split.keeps(vendors[d.doc_id], split)}
    return LoadedDataset(
        samples,
        "SROIE 2019 train receipts (zzzDavid/ICDAR-2019-SROIE 27be427) via HARNESS_DATA_DIR",
        content_hash(root / "img", root / "box", root / "key"),
        False,
        {
            "sroie_fields": loaded.n_fields,
            "sroie_fields_matched": loaded.n_matched,
            "sroie_unmatched": loaded.unmatched,
            **split_metadata(split, source_split),
            "data_split_sources": len(kept),
            # vendors the frozen lists do not name (placed by the hash rule): data never seen
            "data_split_unlisted": source_split.unseen(vendors.values()),
        },
    )


# --------------------------------------------------------------------------- DocVQA


def docvqa_record_to_sample(record: dict[str, Any], root: Path, source: Path, index: int) -> Sample:
    """One DocVQA (SP: ``image``) or MP-DocVQA (``page_ids`` + ``answer_page_idx``, images in
    ``images/<page_id>.jpg``) question. Answers must be a non-empty list of strings; an
    ``answer_bbox`` ([x1, y1, x2, y2] pixels), when a file has one, becomes the gold box."""
    qid = record.get("questionId", index)
    where = f"{source} record {index} (questionId {qid})"
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DatasetFormatError(f"{where}: field 'question' must be a non-empty string")
    answers = record.get("answers")
    if (
        not isinstance(answers, list)
        or not answers
        or not all(isinstance(a, str) and a.strip() for a in answers)
    ):
        raise DatasetFormatError(
            f"{where}: field 'answers' must be a non-empty list of non-empty strings, got {answers!r}"
        )
    if "image" in record:
        image = root / str(record["image"])
        doc_id = str(
            record.get("docId", record.get("ucsf_document_id", Path(str(record["image"])).stem))
        )
    elif "page_ids" in record:
        pages = record["page_ids"]
        idx = record.get("answer_page_idx", 0)
        if not isinstance(pages, list) or not isinstance(idx, int) or not 0 <= idx < len(pages):
            raise DatasetFormatError(
                f"{where}: 'answer_page_idx' {idx!r} does not index 'page_ids' {pages!r}"
            )
        image = root / "images" / f"{pages[idx]}.jpg"
        doc_id = str(record.get("doc_id", pages[idx]))
    else:
        raise DatasetFormatError(f"{where}: neither 'image' (DocVQA) nor 'page_ids' (MP-DocVQA)")
    if not image.is_file():
        raise DatasetFormatError(f"{where}: image file {image} does not exist")
    size = decoded_image_size(image, f"{where}: image {image}")
    box = record.get("answer_bbox")
    if box is not None:
        reason = validate_box(box, size)
        if reason is not None:
            raise DatasetFormatError(f"{where}: field 'answer_bbox': {reason}")
    return Sample(
        id=f"docvqa/{qid}",
        input=question,
        target=list(answers),
        metadata=_metadata(
            source="docvqa",
            doc_id=doc_id,
            image=image,
            image_size=size,
            question=question,
            answers=list(answers),
            gold_box=box,
            gold_boxes=None,
            gold_box_kind="given" if box is not None else "none",
            field="generic",
            split=str(record.get("data_split", "all")),
            gold_words=None,
        ),
    )


def _hub_docvqa(source: str) -> tuple[list[tuple[dict[str, Any], str]], str, str]:
    """DocVQA rows of a hub dataset (``hf://lmms-lab-encoder/DocVQA`` = its pinned commit): each
    embedded image is written once to ``HARNESS_CACHE_DIR/docval/hub-images/<sha256>.<ext>`` and
    the row's ``image`` names that file. ((row, where) pairs, source, content hash.)"""
    import hashlib

    from harness.hub import read_records
    from harness.paths import cache_dir

    records = read_records(source, default=DOCVQA_HUB)
    folder = cache_dir() / "docval" / "hub-images"
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for where, row in records.numbered():
        image = row.get("image")
        if isinstance(image, dict) and image.get("bytes"):
            data = image["bytes"]
            suffix = Path(str(image.get("path") or "x.png")).suffix or ".png"
            file = folder / f"{hashlib.sha256(data).hexdigest()}{suffix}"
            if not file.exists():
                file.write_bytes(data)
            row = {**row, "image": str(file)}
        elif isinstance(image, dict):
            raise DatasetFormatError(f"{where}: field 'image' has no embedded bytes")
        rows.append((row, where))
    return rows, records.source, records.content_hash


def load_docvqa(docvqa_file: str, split: Split, *, limit_docs: int | None = None) -> LoadedDataset:
    """A DocVQA / MP-DocVQA JSON file (``{"data": [...]}`` or a bare list); images resolve
    against the file's folder (relative paths are taken under ``HARNESS_DATA_DIR``). Or a hub
    dataset in the lmms-lab DocVQA layout (``hf://<owner>/<name>[@revision]``, read through
    `datasets`; images embedded in the rows)."""
    if docvqa_file.startswith("hf://"):
        hub_rows, source, digest = _hub_docvqa(docvqa_file)
        samples = []
        hub_index: dict[str, int] = {}
        for i, (record, where) in enumerate(hub_rows):
            sample = docvqa_record_to_sample(record, Path("/"), where, i)  # type: ignore[arg-type]
            doc = str(sample.metadata["doc_id"]) if sample.metadata else str(i)
            index = hub_index.setdefault(doc, len(hub_index))
            if (limit_docs is None or index < limit_docs) and in_split(index, split):
                samples.append(sample)
        return LoadedDataset(
            samples, f"DocVQA {source}", digest, False, _index_split_metadata(split)
        )
    path = Path(docvqa_file)
    if not path.is_absolute():
        path = data_path(docvqa_file, how_to_get=DOCVQA_HOW_TO_GET)
    elif not path.is_file():
        raise FileNotFoundError(f"DocVQA file {path} does not exist. {DOCVQA_HOW_TO_GET}")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DatasetFormatError(f"{path}: not valid JSON ({exc})") from exc
    records = raw.get("data") if isinstance(raw, dict) else raw
    if not isinstance(records, list):
        raise DatasetFormatError(f"{path}: expected {{'data': [...]}} or a list of questions")
    samples = []
    doc_index: dict[str, int] = {}
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise DatasetFormatError(f"{path} record {i}: expected an object, got {record!r}")
        sample = docvqa_record_to_sample(record, path.parent, path, i)
        doc = str(sample.metadata["doc_id"]) if sample.metadata else str(i)
        index = doc_index.setdefault(doc, len(doc_index))
        if limit_docs is not None and index >= limit_docs:
            continue
        if in_split(index, split):
            samples.append(sample)
    return LoadedDataset(
        samples, f"DocVQA JSON {path}", content_hash(path), False, _index_split_metadata(split)
    )
