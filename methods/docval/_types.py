"""Plain data shared by the DocVAL pieces: OCR words and regions, a model's prediction."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from scorers.boxes import Box

__all__ = ["Prediction", "Region", "Word", "regions_from_dicts", "regions_to_dicts"]


@dataclass(frozen=True)
class Word:
    """One OCR (or rendered) word with its pixel box; ``line`` groups words into text lines."""

    text: str
    box: Box
    conf: float = 1.0
    line: int = 0


@dataclass(frozen=True)
class Region:
    """A text region as DocVAL's text detector gives it: ``{id, bbox, text, confidence}``."""

    id: int
    bbox: Box
    text: str
    confidence: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "bbox": [round(v, 1) for v in self.bbox],
            "text": self.text,
            "confidence": round(self.confidence, 4),
        }


def regions_to_dicts(regions: list[Region]) -> list[dict[str, Any]]:
    return [r.to_dict() for r in regions]


def regions_from_dicts(items: list[dict[str, Any]]) -> list[Region]:
    return [
        Region(
            id=int(d["id"]),
            bbox=tuple(float(v) for v in d["bbox"]),  # type: ignore[arg-type]
            text=str(d["text"]),
            confidence=float(d.get("confidence", 1.0)),
        )
        for d in items
    ]


@dataclass
class Prediction:
    """A grounded answer: chain-of-thought steps, answer text and pixel box.

    ``answer``/``bbox`` are None when the output did not supply them; ``failure`` then says why
    (a scored miss, never an exception).
    """

    answer: str | None
    bbox: Box | None
    reasoning: list[str] = field(default_factory=list)
    failure: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["bbox"] = None if self.bbox is None else [round(v, 1) for v in self.bbox]
        return d
