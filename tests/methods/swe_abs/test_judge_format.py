"""The equivalence judge's reply format, declared beside ``parse_judge``: every reply produced
under it parses (both verdicts read)."""

from __future__ import annotations

import asyncio

from methods.swe_abs import JUDGE_FORMAT, parse_judge
from tests.methods.correct.grammar_sampling import constrained_replies


def test_judge_replies_under_the_format_always_parse(embedded_dir) -> None:
    seen = set()
    for reply, used in constrained_replies(JUDGE_FORMAT, str(embedded_dir), n=6, seed=3):
        verdict = parse_judge(reply)
        assert verdict.parsed, reply
        assert used <= len("Relevance: Yes\nMutation Validity: Yes") + 1, (used, reply)
        seen.add((verdict.relevant, verdict.valid))
    assert len(seen) > 1  # the grammar leaves both verdicts open


def test_the_pipeline_passes_the_format_to_generators_that_take_it() -> None:
    from methods.swe_abs._pipeline import Strengthener

    got: list[object] = []

    async def with_format(system: str, prompt: str, answer_format=None) -> str:
        got.append(answer_format)
        return "Relevance: Yes\nMutation Validity: No"

    async def plain(system: str, prompt: str) -> str:
        return "Relevance: No\nMutation Validity: No"

    class _Stub:
        budget = type("B", (), {"event": staticmethod(lambda *a: None)})()
        out = None

    ask = Strengthener._ask
    assert asyncio.run(ask(_Stub(), "judge", with_format, "s", "p", "eq", JUDGE_FORMAT)).startswith(
        "Relevance: Yes"
    )
    assert got == [JUDGE_FORMAT]
    assert asyncio.run(ask(_Stub(), "judge", plain, "s", "p", "eq", JUDGE_FORMAT)).startswith(
        "Relevance: No"
    )
