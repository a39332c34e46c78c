"""OCR engines that give word boxes: Debian's tesseract-ocr (through pytesseract) and RapidOCR
(PP-OCR ONNX models shipped inside its wheel). They stand in for DocVAL's docTR DB-ResNet50 text
detector (a deviation the task records).

An engine is a callable ``image -> list[Word]``; ``lines_from_words`` groups words into text
lines, the regions VAL and the prompts use. ``cached_ocr`` stores results on disk keyed by the
image bytes and the engine's settings, so a dataset is read once per engine.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from methods.docval._text import group_lines
from methods.docval._types import Region, Word

__all__ = [
    "OCR_ENGINES",
    "OcrEngine",
    "OcrEngineName",
    "OcrUnavailableError",
    "RapidOcr",
    "TesseractOcr",
    "cached_ocr",
    "lines_from_words",
    "make_ocr_engine",
    "words_from_dicts",
    "words_to_dicts",
]

OcrEngineName = Literal["tesseract", "rapidocr"]
OCR_ENGINES: tuple[OcrEngineName, ...] = get_args(OcrEngineName)


class OcrUnavailableError(RuntimeError):
    """The OCR engine is not installed (an environment problem, not a data or model failure)."""


class OcrEngine(Protocol):
    name: str

    def settings(self) -> dict[str, Any]: ...

    def __call__(self, image: Any) -> list[Word]: ...


@functools.lru_cache(maxsize=1)
def _tesseract_version() -> str:
    """The tesseract binary's version, asked once per process (it spawns a subprocess)."""
    try:
        import pytesseract

        return str(pytesseract.get_tesseract_version())
    except Exception:  # noqa: BLE001 - the version is only recorded; a missing binary fails in __call__
        return "unknown"


class TesseractOcr:
    """Tesseract 5 word boxes via ``pytesseract.image_to_data`` (words with conf < 0 dropped).

    ``psm`` is tesseract's page segmentation mode (3 = automatic, tesseract's default; 11 =
    sparse text). Lines are tesseract's own (block, paragraph, line) groups.
    """

    name = "tesseract"

    def __init__(self, psm: int = 3, lang: str = "eng") -> None:
        self.psm = psm
        self.lang = lang

    def settings(self) -> dict[str, Any]:
        return {
            "engine": self.name,
            "psm": self.psm,
            "lang": self.lang,
            "version": _tesseract_version(),
        }

    def __call__(self, image: Any) -> list[Word]:
        try:
            import pytesseract
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise OcrUnavailableError(
                "pytesseract is not installed: pip install pytesseract"
            ) from exc
        try:
            data = pytesseract.image_to_data(
                image.convert("RGB"),
                lang=self.lang,
                config=f"--psm {self.psm}",
                output_type=pytesseract.Output.DICT,
            )
        except pytesseract.TesseractNotFoundError as exc:
            raise OcrUnavailableError(
                "the tesseract binary is not installed: apt-get install tesseract-ocr "
                "(the Makefile does this when run as root)"
            ) from exc
        words: list[Word] = []
        line_ids: dict[tuple[int, int, int], int] = {}
        for i, text in enumerate(data["text"]):
            text = (text or "").strip()
            conf = float(data["conf"][i])
            if not text or conf < 0:
                continue
            key = (int(data["block_num"][i]), int(data["par_num"][i]), int(data["line_num"][i]))
            line = line_ids.setdefault(key, len(line_ids))
            x, y, w, h = (float(data[k][i]) for k in ("left", "top", "width", "height"))
            if w <= 0 or h <= 0:
                continue
            words.append(Word(text, (x, y, x + w, y + h), conf / 100.0, line))
        return words


class RapidOcr:
    """RapidOCR (PP-OCRv6 small det/rec ONNX models from its wheel) with word boxes.

    Each detected text line is one line; its words are RapidOCR's word boxes (4-point polygons
    made axis-aligned). One engine per process, guarded by a lock (onnxruntime sessions are not
    shared across threads here).
    """

    name = "rapidocr"
    _engine: Any = None
    _lock = threading.Lock()

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or int(os.environ.get("OMP_NUM_THREADS", "0") or 0) or 2

    def settings(self) -> dict[str, Any]:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as package_version

        try:
            version = package_version("rapidocr")
        except PackageNotFoundError:  # pragma: no cover
            version = "unknown"
        return {"engine": self.name, "version": str(version), "models": "PP-OCRv6 small (wheel)"}

    def _get(self) -> Any:
        with RapidOcr._lock:
            if RapidOcr._engine is None:
                try:
                    from rapidocr import RapidOCR
                except ImportError as exc:
                    raise OcrUnavailableError(
                        "rapidocr is not installed: pip install rapidocr onnxruntime"
                    ) from exc
                RapidOcr._engine = RapidOCR(
                    params={
                        "Global.log_level": "error",
                        "EngineConfig.onnxruntime.intra_op_num_threads": self.threads,
                        "EngineConfig.onnxruntime.inter_op_num_threads": 1,
                    }
                )
            return RapidOcr._engine

    def __call__(self, image: Any) -> list[Word]:
        import numpy as np

        engine = self._get()
        with RapidOcr._lock:
            result = engine(np.asarray(image.convert("RGB")), return_word_box=True)
        if result.txts is None:
            return []
        words: list[Word] = []
        word_results = getattr(result, "word_results", None) or ()
        for line, (poly, text, score) in enumerate(
            zip(result.boxes, result.txts, result.scores, strict=True)
        ):
            items = word_results[line] if line < len(word_results) else ()
            parts = [(t, s, b) for t, s, b in items if str(t).strip()]
            if not parts:  # no word split: the line is one word
                parts = [(text, score, poly)]
            for t, s, b in parts:
                xs = [float(p[0]) for p in b]
                ys = [float(p[1]) for p in b]
                box = (min(xs), min(ys), max(xs), max(ys))
                if box[2] > box[0] and box[3] > box[1]:
                    words.append(Word(str(t).strip(), box, float(s), line))
        return words


def make_ocr_engine(name: OcrEngineName) -> OcrEngine:
    if name == "tesseract":
        return TesseractOcr()
    if name == "rapidocr":
        return RapidOcr()
    raise ValueError(f"unknown OCR engine {name!r}; expected one of {OCR_ENGINES}")


def lines_from_words(words: Sequence[Word]) -> list[Region]:
    """One region per line: the enclosing box, words joined left to right, mean confidence.
    Regions are numbered top to bottom (then left to right), in ``group_lines``'s order."""
    return [
        Region(i, line.box, line.text, sum(w.conf for w in line.words) / len(line.words))
        for i, line in enumerate(group_lines(words))
    ]


def words_to_dicts(words: Sequence[Word]) -> list[dict[str, Any]]:
    return [
        {
            "text": w.text,
            "box": [round(v, 2) for v in w.box],
            "conf": round(w.conf, 4),
            "line": w.line,
        }
        for w in words
    ]


def words_from_dicts(items: Sequence[dict[str, Any]]) -> list[Word]:
    return [
        Word(
            str(d["text"]),
            tuple(float(v) for v in d["box"]),  # type: ignore[arg-type]
            float(d.get("conf", 1.0)),
            int(d.get("line", 0)),
        )
        for d in items
    ]


def _image_bytes(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def cached_ocr(
    engine: OcrEngine,
    image: Any,
    cache_dir: str | os.PathLike[str] | None,
    *,
    key: bytes | None = None,
    on_miss: Callable[[], None] | None = None,
) -> list[Word]:
    """``engine(image)``, stored under ``cache_dir`` by a hash of the image (or ``key``) and the
    engine's settings; ``cache_dir=None`` disables the cache. ``image`` may be a function that
    loads the image, called only on a cache miss."""
    if callable(image) and not hasattr(image, "convert"):
        load = image
    else:

        def load() -> Any:
            return image

    if cache_dir is None:
        return engine(load())
    digest = hashlib.sha256()
    digest.update(json.dumps(engine.settings(), sort_keys=True).encode())
    digest.update(key if key is not None else _image_bytes(load()))
    path = Path(cache_dir) / engine.name / f"{digest.hexdigest()[:32]}.json"
    if path.is_file():
        try:
            return words_from_dicts(json.loads(path.read_text()))
        except (ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)  # a torn write: read again
    if on_miss is not None:
        on_miss()
    words = engine(load())
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(words_to_dicts(words)))
    tmp.replace(path)
    return words
