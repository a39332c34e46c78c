"""CORRECT's online stage: retrieve the top-k schemata of similar past failures (never the
query's own) and localise with the schema-guided all-at-once prompt.

Protocol on a labelled pool (leave-one-out): every labelled trajectory of the pool is keyed in
the cache by its embedding; localising trajectory q retrieves the k nearest entries with q's own
entry excluded; the schemata of the retrieved entries are distilled on first use (memoised, one
distillation per source even under concurrency) by the teacher model from their gold labels.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np

from methods.correct._baselines import Localisation, LocaliserConfig, all_at_once
from methods.correct._cache import SchemaCache
from methods.correct._embed import Embedder
from methods.correct._generate import Generate
from methods.correct._schema import ErrorSchema
from methods.correct._trajectory import Trajectory

SchemaSource = Callable[[Trajectory], Awaitable[ErrorSchema]]

# The paper's k per dataset (§3 of the notes): 1 for Who&When AG, 10 for HC, 5 for CORRECT-Error.
PAPER_K = {"algorithm_generated": 1, "hand_crafted": 10, "correct_error": 5}


class CorrectLocaliser:
    def __init__(
        self,
        pool: Sequence[Trajectory],
        embedder: Embedder,
        schema_source: SchemaSource,
        *,
        k: int | Callable[[Trajectory], int] = 1,
        capacity: int | None = None,
        merge_threshold: float | None = None,
    ) -> None:
        labelled = [t for t in pool if t.labelled]
        if len({t.id for t in labelled}) != len(labelled):
            raise ValueError("trajectory ids in the schema pool must be unique")
        self._pool = {t.id: t for t in labelled}
        self._embedder = embedder.fit([t.text_for_embedding() for t in labelled])
        self._schema_source = schema_source
        self._k = k
        self._schemas: dict[str, ErrorSchema] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._vectors: dict[str, np.ndarray] = {}
        vecs = (
            self._embedder.encode([t.text_for_embedding() for t in labelled])
            if labelled
            else np.zeros((0, 1), np.float32)
        )
        self.cache = SchemaCache(vecs.shape[1], capacity=capacity, merge_threshold=merge_threshold)
        for t, v in zip(labelled, vecs, strict=False):
            self._vectors[t.id] = v
            self.cache.add(t.id, v, t.id)

    @property
    def embedder_name(self) -> str:
        return self._embedder.name

    def k_for(self, trajectory: Trajectory) -> int:
        return self._k(trajectory) if callable(self._k) else int(self._k)

    def vector(self, trajectory: Trajectory) -> np.ndarray:
        if trajectory.id in self._vectors and trajectory.id in self._pool:
            return self._vectors[trajectory.id]
        return self._embedder.encode([trajectory.text_for_embedding()])[0]

    def neighbours(
        self, trajectory: Trajectory, k: int | None = None
    ) -> list[tuple[list[str], float]]:
        """Source ids of the retrieved entries (self excluded) and their cosine similarities."""
        k = self.k_for(trajectory) if k is None else k
        hits = self.cache.retrieve(self.vector(trajectory), k, exclude={trajectory.id})
        return [([str(s) for s in entry.sources], sim) for entry, sim in hits]

    async def schema(self, source_id: str) -> ErrorSchema:
        if source_id in self._schemas:
            return self._schemas[source_id]
        lock = self._locks.setdefault(source_id, asyncio.Lock())
        async with lock:
            if source_id not in self._schemas:
                self._schemas[source_id] = await self._schema_source(self._pool[source_id])
        return self._schemas[source_id]

    @property
    def schemata(self) -> dict[str, ErrorSchema]:
        return dict(self._schemas)

    async def localise(
        self,
        trajectory: Trajectory,
        generate: Generate,
        config: LocaliserConfig = LocaliserConfig(),  # noqa: B008
    ) -> Localisation:
        hits = self.neighbours(trajectory)
        sources = [s for group, _ in hits for s in group]
        if trajectory.id in sources:  # defence in depth: retrieval must never leak the gold
            raise AssertionError(f"self-exclusion violated for {trajectory.id!r}")
        schemata = [await self.schema(s) for s in sources]
        result = await all_at_once(
            trajectory, generate, config, [s.text() for s in schemata], method="correct"
        )
        result.retrieved = sources[: result.schemata_used]  # the ones the prompt really holds
        result.log.notes.append(
            "retrieved " + ", ".join(f"{'+'.join(g)}@{sim:.3f}" for g, sim in hits)
            if hits
            else "retrieved nothing"
        )
        return result

    def describe(self) -> dict[str, Any]:
        return {
            "pool": len(self._pool),
            "embedder": self._embedder.name,
            "cache_entries": len(self.cache),
            "merges": self.cache.merges,
            "evictions": self.cache.evictions,
            "schemata_distilled": len(self._schemas),
            "schemata_unparsed": sum(1 for s in self._schemas.values() if not s.parsed),
        }
