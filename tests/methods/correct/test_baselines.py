import asyncio

from methods.correct import (
    LocaliserConfig,
    Step,
    Trajectory,
    all_at_once,
    binary_search,
    first_step_baseline,
    most_frequent_agent_baseline,
    random_baseline,
    schema_capacity,
    step_by_step,
)

from .conftest import make_traj


def run(coro):
    return asyncio.run(coro)


def test_all_at_once_prompt_and_parse(traj):
    seen = []

    def gen(messages):
        seen.append(messages)
        return "Agent Name: Verifier\nStep Number: 2\nReason for Mistake: wrong"

    r = run(all_at_once(traj, gen))
    assert (r.prediction.agent, r.prediction.step) == ("Verifier", 2)
    prompt = seen[0][-1]["content"]
    assert "Step 0 - Planner:" in prompt and "Step 5 - Verifier:" in prompt
    assert "The correct answer to the problem is: 4" in prompt
    assert "ERROR SCHEMATA" not in prompt
    assert r.log.calls == 1 and r.truncation[0]["strategy"] == "waterfill_head_tail"


def test_all_at_once_without_ground_truth_and_with_schemata(traj):
    seen = []

    async def agen(messages):  # async generate works too
        seen.append(messages[-1]["content"])
        return "Agent Name: Solver\nStep Number: 1"

    run(
        all_at_once(
            traj, agen, LocaliserConfig(with_ground_truth=False), schemata=["SIG-1", "SIG-2"]
        )
    )
    assert "correct answer" not in seen[0]
    assert "ERROR SCHEMATA" in seen[0] and "SIG-1" in seen[0] and "SIG-2" in seen[0]


def test_all_at_once_respects_prompt_budget():
    t = make_traj(n=40, text="long " * 400)
    seen = []
    run(all_at_once(t, lambda m: seen.append(m) or "x", LocaliserConfig(max_prompt_tokens=1000)))
    assert sum(len(m["content"]) for m in seen[0]) / 3 <= 1000


def test_step_by_step_stops_at_first_yes(traj):
    calls = []

    def gen(messages):
        calls.append(messages[-1]["content"])
        return "1. Yes.\n2. Reason: bad" if len(calls) == 4 else "1. No.\n2. Reason: ok"

    r = run(step_by_step(traj, gen))
    assert r.prediction.step == 3 and r.prediction.agent == "Planner" and r.log.calls == 4
    assert "Step 3 - Planner" in calls[-1] and "Step 4" not in calls[-1]


def test_step_by_step_no_yes_predicts_last_and_cap(traj):
    r = run(step_by_step(traj, lambda m: "unclear"))
    assert r.prediction.step == 5 and r.log.calls == 6
    assert any("without yes/no" in n for n in r.log.notes)
    r = run(step_by_step(traj, lambda m: "1. No", max_calls=2))
    assert r.log.calls == 2 and r.prediction.step == 5


def test_binary_search_follows_halves(traj):
    answers = iter(["lower half", "upper half", "lower half"])
    prompts = []

    def gen(messages):
        prompts.append(messages[-1]["content"])
        return next(answers)

    r = run(binary_search(traj, gen))
    # [0,5] -> lower [3,5] -> upper [3,4] -> lower [4,4]
    assert r.prediction.step == 4 and r.log.calls == 3
    assert "steps 0 to 2" in prompts[0] and "steps 3 to 5" in prompts[0]


def test_binary_search_ambiguous_is_seeded_random(traj):
    a = run(binary_search(traj, lambda m: "no idea", LocaliserConfig(seed=1)))
    b = run(binary_search(traj, lambda m: "no idea", LocaliserConfig(seed=1)))
    assert a.prediction.step == b.prediction.step and any("at random" in n for n in a.log.notes)


def test_random_is_uniform_and_reproducible():
    t = make_traj(n=4)
    steps = [
        run(
            random_baseline(make_traj(tid=f"t{i}", n=4), config=LocaliserConfig(seed=0))
        ).prediction.step
        for i in range(2000)
    ]
    counts = [steps.count(s) for s in range(4)]
    assert all(400 < c < 600 for c in counts)
    assert run(random_baseline(t)).prediction == run(random_baseline(t)).prediction


def test_schemata_never_squeeze_history_below_half(traj):
    seen = []
    cfg = LocaliserConfig(max_prompt_tokens=700)
    r = run(all_at_once(traj, lambda m: seen.append(m) or "x", cfg, schemata=["S" * 3000] * 10))
    assert 0 < r.schemata_used < 10 and any("schemata reduced from 10" in n for n in r.log.notes)
    assert sum(len(m["content"]) for m in seen[0]) / 3 <= 700
    r = run(
        all_at_once(traj, lambda m: "x", LocaliserConfig(max_prompt_tokens=300), schemata=["S"])
    )
    assert r.schemata_used == 0  # no room: the history keeps its half


def test_first_step_baseline(traj):
    r = run(first_step_baseline(traj))
    assert (r.method, r.prediction.agent, r.prediction.step) == ("first_step", "Planner", 0)
    assert r.prediction.valid and r.log.calls == 0


def _speakers(*names):
    steps = tuple(Step(i, n.split(" (")[0], n, "c") for i, n in enumerate(names))
    return Trajectory("t", "q", steps)


def test_most_frequent_agent_baseline():
    t = _speakers(
        "human",
        "Orchestrator (thought)",
        "WebSurfer",
        "Orchestrator (-> WebSurfer)",
        "WebSurfer",
        "Orchestrator (thought)",
    )
    r = run(most_frequent_agent_baseline(t))
    # Orchestrator speaks 3 times (role suffixes are one agent): its first turn is step 1
    assert (r.method, r.prediction.agent, r.prediction.step) == (
        "most_frequent_agent",
        "Orchestrator",
        1,
    )
    # a tie goes to the agent who speaks first
    r = run(most_frequent_agent_baseline(_speakers("A", "B", "B", "A", "C")))
    assert (r.prediction.agent, r.prediction.step) == ("A", 0)


def test_schema_capacity_matches_what_the_prompt_keeps(traj):
    tokens = lambda text: len(text.split())  # noqa: E731
    for budget in (200, 400, 800, 2000):
        config = LocaliserConfig(max_prompt_tokens=budget, count_tokens=tokens)
        cap = schema_capacity(traj, config)
        r = run(all_at_once(traj, lambda m: "", config, schemata=["s " * 50] * 12))
        assert r.schemata_used == min(cap, 12), budget
    # 30 % of 2000 = 600 tokens = 18 schemata of 32 tokens; the history keeps half the prompt
    assert schema_capacity(traj, LocaliserConfig(max_prompt_tokens=2000, count_tokens=tokens)) == 18
    assert schema_capacity(traj, LocaliserConfig(max_prompt_tokens=200, count_tokens=tokens)) == 0
