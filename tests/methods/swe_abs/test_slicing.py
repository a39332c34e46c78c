"""SWE-ABS's slice: scopes, def/use, k-hop forward + backward slices, the coverage target."""

from __future__ import annotations

from methods.swe_abs._slicing import analyse_source, coverage_rate, must_cover, program_slice

SRC = '''import os
X = 1

def f(a, b=2):
    """doc"""
    c = a + b
    d = c * 2
    if d > (
        10):
        e = d - 1
    else:
        e = 0
    unrelated = 5
    return e

def g(x):
    return f(x) + X
'''


def test_facts_per_statement():
    facts = analyse_source(SRC)
    # docstring (5), the `else:` line (11) and the condition's continuation (9) are not statements
    assert sorted(facts.executable) == [1, 2, 4, 6, 7, 8, 10, 12, 13, 14, 16, 17]
    assert facts.statement(9) == 8  # a continuation line maps to its statement
    assert (
        facts.scope[6] == "def f@4"
        and facts.scope[17] == "def g@16"
        and facts.scope[2] == "<module>"
    )
    assert facts.defs[4] == {"a", "b", "f"}  # parameters are defined on the def line
    assert facts.defs[6] == {"c"} and facts.uses[6] == {"a", "b"}
    assert facts.uses[8] == {"d"}
    assert facts.uses[17] == {"f", "x", "X"}


def test_k_hops_forward_and_backward():
    facts = analyse_source(SRC)
    assert program_slice(facts, [7], 1, within_scope=True) == {6, 7, 8, 10}  # c <- 7 -> d
    # hop 2: the parameters that define a and b (4) and the user of e (14); hop 3: the other
    # definition of e (12)
    assert program_slice(facts, [7], 2, within_scope=True) == {4, 6, 7, 8, 10, 14}
    assert program_slice(facts, [7], 3, within_scope=True) == {4, 6, 7, 8, 10, 12, 14}
    assert 13 not in program_slice(facts, [7], 5, within_scope=True)  # never related


def test_must_cover_scoped_slice_file_slice_and_global_filter():
    mc = must_cover("m.py", SRC, [6])
    assert mc.modified == (6,) and mc.filtered_global == ()
    assert mc.slice_scope == (4, 6, 7, 8, 10, 12, 14)
    assert mc.slice_file == (4, 6, 7)  # k = 1 over the whole file
    assert mc.target == mc.slice_scope  # every line of that slice is executable
    mc = must_cover("m.py", SRC, [2, 9])  # a module constant and a continuation line
    assert mc.filtered_global == (2,)
    assert mc.modified == (2, 8)
    assert 2 not in mc.slice_scope


def test_only_global_edits_give_no_target():
    mc = must_cover("m.py", SRC, [1, 2])
    assert mc.target == () and mc.filtered_global == (1, 2)


def test_coverage_rate_is_the_mean_over_files():
    assert (
        coverage_rate({"a.py": [1, 2], "b.py": [3, 4, 5, 6]}, {"a.py": {1, 2}, "b.py": {3}})
        == (1 + 0.25) / 2
    )
    assert coverage_rate({"a.py": []}, {}) == 1.0  # nothing to cover
    assert coverage_rate({"a.py": [1]}, {}) == 0.0
