from methods.correct import parse_half, parse_localisation, parse_yes_no

TEAM = ["Planner", "Solver", "Verification_Expert", "Orchestrator"]


def test_well_formed_reply():
    p = parse_localisation(
        "Agent Name: Solver\nStep Number: 3\nReason for Mistake: bad sum", 5, TEAM
    )
    assert (p.agent, p.step, p.reason) == ("Solver", 3, "bad sum")
    assert p.valid


def test_no_step_is_an_error_with_reason():
    p = parse_localisation("Agent Name: Solver\nReason for Mistake: ?", 5, TEAM)
    assert p.step is None and p.step_error.startswith("no step")
    assert p.agent == "Solver" and p.agent_error is None


def test_two_different_steps():
    p = parse_localisation("Agent Name: Solver\nStep Number: 2 or 4", 5, TEAM)
    assert (
        p.step is None
        and p.step_error.startswith("two different steps")
        and "[2, 4]" in p.step_error
    )


def test_range_counts_as_two_steps_and_repeat_as_one():
    assert parse_localisation("Step Number: 1-3", 5, TEAM).step_error.startswith(
        "two different steps"
    )
    assert parse_localisation("Step Number: 3 (step 3)", 5, TEAM).step == 3


def test_parenthetical_does_not_add_a_second_step():
    assert parse_localisation("Step Number: 2 (the 3rd turn)", 5, TEAM).step == 2


def test_step_out_of_range_both_ends():
    assert (
        parse_localisation("Step Number: 5", 5, TEAM).step_error
        == "step out of range: 5 is not in [0, 4]"
    )
    assert parse_localisation("Step Number: -1", 5, TEAM).step_error.startswith("step out of range")


def test_unknown_and_missing_agent():
    p = parse_localisation("Agent Name: Critic\nStep Number: 1", 5, TEAM)
    assert p.agent is None and p.agent_error.startswith("unknown agent: 'Critic'")
    assert p.step == 1
    assert parse_localisation("Step Number: 1", 5, TEAM).agent_error.startswith("no agent")


def test_agent_matching_is_normalised_not_substring():
    assert (
        parse_localisation("Agent Name: **verification expert**\nStep Number: 0", 5, TEAM).agent
        == "Verification_Expert"
    )
    assert (
        parse_localisation("Agent Name: Orchestrator (thought)\nStep Number: 0", 5, TEAM).agent
        == "Orchestrator"
    )
    # a substring of a team name is not that agent (Who&When's evaluator would accept it)
    assert parse_localisation("Agent Name: Expert\nStep Number: 0", 5, TEAM).agent is None
    assert (
        parse_localisation("Agent Name: Solver made it\nStep Number: 0", 5, TEAM).agent == "Solver"
    )


def test_fallback_to_step_mentions_without_label():
    assert parse_localisation("The mistake is in step 2 by Solver", 5, TEAM).step == 2
    assert parse_localisation("step 2 or step 3", 5, TEAM).step_error.startswith("two different")
    assert parse_localisation("", 5, TEAM).step_error.startswith("no step")


def test_yes_no_and_half():
    assert parse_yes_no("1. Yes.\n2. Reason: x") is True
    assert parse_yes_no("1. No. 2. Reason: yes it is fine") is False
    assert parse_yes_no("maybe") is None
    assert parse_half("The Upper Half.") == "upper"
    assert parse_half("lower half") == "lower"
    assert parse_half("upper half or lower half") is None
    assert parse_half("") is None
