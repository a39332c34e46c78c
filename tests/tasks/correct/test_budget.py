"""The prompt budget at which CORRECT's prompts keep their k schemata (tasks.correct.budget)."""

from tasks.correct.budget import keep_rates, smallest_budget


def test_keep_rates_on_who_and_when_data(data_dir, embedded_dir):
    from transformers import AutoTokenizer

    from tasks.correct.dataset import load_who_and_when

    tok = AutoTokenizer.from_pretrained(str(embedded_dir))
    root = data_dir / "who_and_when"
    pools = {s: load_who_and_when(root, s) for s in ("algorithm_generated", "hand_crafted")}
    rows = keep_rates(
        pools, [512, 1152, 1280], lambda t: len(tok.encode(t, add_special_tokens=False))
    )
    r512, r1152, r1280 = rows
    # the 512-token full run: 96 of 184 trajectories had room for no schema (AG 66, HC 30)
    assert r512["algorithm_generated"][3] == 66 and r512["hand_crafted"][3] == 30
    assert r512["hand_crafted"][2] == 10 and r512["algorithm_generated"][2] == 1
    assert r1152["all"] == (179, 184) and r1280["all"] == (184, 184)
    assert smallest_budget(rows) == 1152
    assert smallest_budget(rows[:1]) is None
