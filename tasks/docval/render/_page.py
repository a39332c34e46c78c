"""The page a layout draws on: fonts from matplotlib's wheel, one box per drawn word, and
the rendered document and question types."""

from __future__ import annotations

import dataclasses
import io
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from methods.docval import Word
from scorers.boxes import Box, enclosing_box
from tasks.docval.render._degrade import Degradation

FONT_FAMILIES: dict[str, tuple[str, str]] = {
    "dejavu_sans": ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf"),
    "dejavu_serif": ("DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf"),
    "dejavu_mono": ("DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf"),
    "stix": ("STIXGeneral.ttf", "STIXGeneralBol.ttf"),
}


def font_files() -> Path:
    """The folder of TrueType fonts inside matplotlib's wheel."""
    import matplotlib

    folder = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    missing = [f for pair in FONT_FAMILIES.values() for f in pair if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(f"fonts missing from {folder}: {missing} (reinstall matplotlib)")
    return folder


@dataclass
class RenderedQuestion:
    question: str
    answers: list[str]
    box: Box
    field: str
    distractor: str = ""  # what a careless reader would answer instead
    parts: list[Box] = dataclasses.field(default_factory=list)  # the answer's word boxes


@dataclass
class RenderedDocument:
    doc_id: str
    layout: str
    font: str
    degradation: Degradation
    image: Any  # PIL.Image.Image
    words: list[Word]
    questions: list[RenderedQuestion] = field(default_factory=list)

    def png_bytes(self) -> bytes:
        buffer = io.BytesIO()
        self.image.save(buffer, format="PNG", optimize=False)
        return buffer.getvalue()


class _Page:
    """A white page that records the exact box of every word it draws."""

    def __init__(self, width: int, height: int, family: str, rng: random.Random) -> None:
        from PIL import Image, ImageDraw

        self.width, self.height, self.rng = width, height, rng
        self.image = Image.new("RGB", (width, height), "white")
        self.draw = ImageDraw.Draw(self.image)
        self.folder = font_files()
        self.family = family
        self.words: list[Word] = []
        self._fonts: dict[tuple[int, bool], Any] = {}
        self._line = 0

    def font(self, size: int, bold: bool = False) -> Any:
        from PIL import ImageFont

        key = (size, bold)
        if key not in self._fonts:
            regular, heavy = FONT_FAMILIES[self.family]
            self._fonts[key] = ImageFont.truetype(
                str(self.folder / (heavy if bold else regular)), size
            )
        return self._fonts[key]

    def width_of(self, text: str, size: int, bold: bool = False) -> float:
        return float(self.font(size, bold).getlength(text))

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: int = 18,
        bold: bool = False,
        align: Literal["left", "right", "center"] = "left",
        new_line: bool = True,
    ) -> list[Word]:
        """Draw ``text`` word by word from (x, y) (the right edge for align="right"); returns
        the words drawn with their exact boxes. Each call is one text line (its own line id);
        ``new_line=False`` only documents that the text shares a row with the previous one."""
        font = self.font(size, bold)
        total = font.getlength(text)
        if align == "right":
            x -= total
        elif align == "center":
            x -= total / 2
        del new_line  # a row of separate columns is several lines, as OCR engines see it
        self._line += 1
        space = font.getlength(" ")
        drawn = []
        for token in text.split(" "):
            if token:
                self.draw.text((x, y), token, font=font, fill="black")
                box = self.draw.textbbox((x, y), token, font=font)
                word = Word(token, tuple(float(v) for v in box), 1.0, self._line)  # type: ignore[arg-type]
                self.words.append(word)
                drawn.append(word)
                x += font.getlength(token)
            x += space
        return drawn

    def rule(self, x1: float, y: float, x2: float, width: int = 1) -> None:
        self.draw.line([(x1, y), (x2, y)], fill="black", width=width)

    def rect(self, box: Sequence[float], width: int = 1) -> None:
        self.draw.rectangle(list(box), outline="black", width=width)


def _box(words: Sequence[Word]) -> Box:
    return enclosing_box([w.box for w in words])
