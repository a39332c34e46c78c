"""The schema cache: add, top-k cosine retrieval with self-exclusion, expiry and merging.

Storage is one preallocated, L2-normalised float32 matrix (rows = entries), so a query is one
mat-vec plus `argpartition`: ~1 ms at 10k entries of 384 dimensions.

Dynamic management (the paper describes it; its release does not implement it). Implemented here:
- merge (`merge_threshold`): an added key whose cosine with an existing entry is >= the threshold
  joins that entry (its sources are united, its key becomes the mean direction) instead of adding
  a near-duplicate row;
- expiry (`capacity`): when the cache would exceed `capacity` entries, the entry used least by
  retrieval (ties: least recently used, then oldest) is evicted.
Both are off by default, which is what the released code does (plain similarity retrieval).
Not implemented: the paper's LLM re-distillation of frequently used schemata.

Self-exclusion: `retrieve(..., exclude={trajectory id})` drops every entry with an excluded
source, so a merged entry that contains the query's own schema is never returned for it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class CacheEntry:
    sources: list[Hashable]  # trajectory ids whose schemata this entry holds
    payload: list[object] = field(default_factory=list)  # one item per source (e.g. an ErrorSchema)
    uses: int = 0
    last_used: int = -1
    created: int = 0


class SchemaCache:
    def __init__(
        self,
        dim: int,
        *,
        capacity: int | None = None,
        merge_threshold: float | None = None,
        initial_rows: int = 64,
    ) -> None:
        if capacity is not None and capacity < 1:
            raise ValueError(f"capacity must be >= 1 or None, got {capacity}")
        if merge_threshold is not None and not -1.0 <= merge_threshold <= 1.0:
            raise ValueError(
                f"merge_threshold is a cosine in [-1, 1] or None, got {merge_threshold}"
            )
        self.dim = dim
        self.capacity = capacity
        self.merge_threshold = merge_threshold
        self._keys = np.zeros((max(initial_rows, 1), dim), dtype=np.float32)
        self._n = 0
        self._entries: list[CacheEntry] = []
        self._by_source: dict[Hashable, int] = {}
        self._clock = 0
        self.merges = 0
        self.evictions = 0

    def __len__(self) -> int:
        return self._n

    @property
    def entries(self) -> list[CacheEntry]:
        return list(self._entries)

    def _unit(self, vector: np.ndarray) -> np.ndarray:
        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        if v.shape[0] != self.dim:
            raise ValueError(f"key has dimension {v.shape[0]}, cache expects {self.dim}")
        norm = float(np.linalg.norm(v))
        if not np.isfinite(norm) or norm == 0.0:
            raise ValueError("key vector is zero or not finite: cannot compare by cosine")
        return v / norm

    def add(self, source: Hashable, vector: np.ndarray, payload: object = None) -> int:
        """Add a schema keyed by `vector`; returns the row it landed in (merged or new)."""
        if source in self._by_source:
            raise ValueError(f"source {source!r} is already in the cache")
        v = self._unit(vector)
        self._clock += 1
        if self.merge_threshold is not None and self._n:
            sims = self._keys[: self._n] @ v
            row = int(np.argmax(sims))
            if sims[row] >= self.merge_threshold:
                entry = self._entries[row]
                weight = len(entry.sources)
                merged = self._keys[row] * weight + v
                self._keys[row] = merged / max(float(np.linalg.norm(merged)), 1e-12)
                entry.sources.append(source)
                entry.payload.append(payload)
                self._by_source[source] = row
                self.merges += 1
                return row
        if self.capacity is not None and self._n >= self.capacity:
            self._evict()
        if self._n == self._keys.shape[0]:
            self._keys = np.concatenate([self._keys, np.zeros_like(self._keys)])
        row = self._n
        self._keys[row] = v
        self._entries.append(CacheEntry([source], [payload], created=self._clock))
        self._by_source[source] = row
        self._n += 1
        return row

    def _evict(self) -> None:
        victim = min(
            range(self._n),
            key=lambda i: (
                self._entries[i].uses,
                self._entries[i].last_used,
                self._entries[i].created,
            ),
        )
        for s in self._entries[victim].sources:
            del self._by_source[s]
        last = self._n - 1
        if victim != last:  # move the last row into the hole: rows stay contiguous
            self._keys[victim] = self._keys[last]
            self._entries[victim] = self._entries[last]
            for s in self._entries[victim].sources:
                self._by_source[s] = victim
        self._entries.pop()
        self._n -= 1
        self.evictions += 1

    def retrieve(
        self,
        vector: np.ndarray,
        k: int,
        exclude: Iterable[Hashable] = (),
        *,
        record_use: bool = True,
    ) -> list[tuple[CacheEntry, float]]:
        """Top-`k` entries by cosine, best first (ties: earlier row first), skipping entries
        that hold any excluded source. Fewer than `k` when the cache holds fewer."""
        if k <= 0 or self._n == 0:
            return []
        v = self._unit(vector)
        sims = self._keys[: self._n] @ v
        banned = {self._by_source[s] for s in exclude if s in self._by_source}
        if banned:
            sims = sims.copy()
            sims[list(banned)] = -np.inf
        available = self._n - len(banned)
        k = min(k, available)
        if k <= 0:
            return []
        if k < self._n:
            # Everything at least as similar as the k-th best (ties included), so that ties at
            # the boundary resolve by row order rather than by argpartition's arbitrary pick.
            kth = np.partition(-sims, k - 1)[k - 1]
            top = np.flatnonzero(-sims <= kth)
        else:
            top = np.arange(self._n)
        # lexsort: primary key similarity (descending), secondary row (insertion order) for ties.
        top = top[np.lexsort((top, -sims[top]))][:k]
        self._clock += 1
        out = []
        for row in top:
            entry = self._entries[int(row)]
            if record_use:
                entry.uses += 1
                entry.last_used = self._clock
            out.append((entry, float(sims[row])))
        return out
