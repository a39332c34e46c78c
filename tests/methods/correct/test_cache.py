import numpy as np
import pytest

from methods.correct import SchemaCache


def _unit(v):
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_topk_matches_brute_force_cosine():
    rng = np.random.default_rng(0)
    keys = rng.normal(size=(500, 16))
    cache = SchemaCache(16, initial_rows=4)  # forces growth
    for i, k in enumerate(keys):
        cache.add(i, k)
    q = rng.normal(size=16)
    got = [e.sources[0] for e, _ in cache.retrieve(q, 7)]
    sims = (keys / np.linalg.norm(keys, axis=1, keepdims=True)) @ _unit(q)
    assert got == list(np.argsort(-sims, kind="stable")[:7])


def test_self_exclusion_even_when_identical():
    cache = SchemaCache(3)
    cache.add("a", [1, 0, 0])
    cache.add("b", [0, 1, 0])
    cache.add("c", [0.9, 0.1, 0])
    hits = cache.retrieve([1, 0, 0], 2, exclude={"a"})
    assert [e.sources[0] for e, _ in hits] == ["c", "b"]
    assert cache.retrieve([1, 0, 0], 5, exclude={"a", "b", "c"}) == []


def test_ties_break_by_insertion_order_at_the_boundary():
    cache = SchemaCache(2)
    for s in ["x", "y", "z", "w"]:
        cache.add(s, [1, 0])
    assert [e.sources[0] for e, _ in cache.retrieve([1, 0], 2)] == ["x", "y"]


def test_fewer_than_k_and_k_zero():
    cache = SchemaCache(2)
    assert cache.retrieve([1, 0], 3) == []
    cache.add("a", [1, 0])
    assert len(cache.retrieve([1, 0], 3)) == 1
    assert cache.retrieve([1, 0], 0) == []


def test_merge_unites_sources_and_exclusion_drops_merged_entry():
    cache = SchemaCache(2, merge_threshold=0.99)
    cache.add("a", [1, 0], "schema-a")
    cache.add("b", [1, 0.001], "schema-b")  # near-duplicate: merged
    cache.add("c", [0, 1], "schema-c")
    assert len(cache) == 2 and cache.merges == 1
    entry, _ = cache.retrieve([1, 0], 1)[0]
    assert entry.sources == ["a", "b"] and entry.payload == ["schema-a", "schema-b"]
    # the merged entry holds b's own schema: b must not get it back
    assert [e.sources for e, _ in cache.retrieve([1, 0], 2, exclude={"b"})] == [["c"]]


def test_capacity_evicts_least_used():
    cache = SchemaCache(2, capacity=2)
    cache.add("a", [1, 0])
    cache.add("b", [0, 1])
    cache.retrieve([1, 0], 1)  # a used once
    cache.add("c", [1, 1])  # evicts b (0 uses)
    assert len(cache) == 2 and cache.evictions == 1
    assert sorted(e.sources[0] for e in cache.entries) == ["a", "c"]
    assert [e.sources[0] for e, _ in cache.retrieve([0, 1], 1)] == ["c"]


def test_bad_keys_are_rejected():
    cache = SchemaCache(2)
    with pytest.raises(ValueError, match="dimension"):
        cache.add("a", [1, 0, 0])
    with pytest.raises(ValueError, match="zero"):
        cache.add("a", [0, 0])
    cache.add("a", [1, 0])
    with pytest.raises(ValueError, match="already"):
        cache.add("a", [0, 1])
