"""How a sign is drawn: white plate, black border, black capitals in Pillow's bundled font.

Shared by the scene renderer (which draws signs) and the classical verifier (which reads them by
matching the sign's plate against each word drawn the same way), so the two agree on metrics.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

__all__ = ["SIGN_FONT_SIZE", "SIGN_PAD", "sign_plate", "sign_size"]

SIGN_FONT_SIZE = 18
SIGN_PAD = 6
_BORDER = 2


@lru_cache(maxsize=1)
def _font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    # Pillow's bundled font (no system font needed, same glyphs on every machine).
    return ImageFont.load_default(size=SIGN_FONT_SIZE)


def sign_size(word: str) -> tuple[int, int]:
    """(width, height) of the plate for ``word``."""
    x1, y1, x2, y2 = _font().getbbox(word)
    return int(x2 - x1) + 2 * SIGN_PAD, int(SIGN_FONT_SIZE) + 2 * SIGN_PAD


@lru_cache(maxsize=64)
def sign_plate(word: str) -> np.ndarray:
    """The plate for ``word`` as an RGB uint8 array (height × width × 3)."""
    width, height = sign_size(word)
    plate = Image.new("RGB", (width, height), (250, 250, 250))
    draw = ImageDraw.Draw(plate)
    draw.rectangle([0, 0, width - 1, height - 1], outline=(0, 0, 0), width=_BORDER)
    x1, y1, _, _ = _font().getbbox(word)
    draw.text((SIGN_PAD - x1, SIGN_PAD - y1 + 1), word, fill=(10, 10, 10), font=_font())
    arr = np.asarray(plate, dtype=np.uint8)
    arr.setflags(write=False)
    return arr
