"""Facets of drawn values (the characterisation search's fine classes) and the explore job's
features built from them: values a length-and-type class lumps together are told apart where a
function's behaviour usually turns (ends, runs, repeats, last digits, order of two numbers)."""

from __future__ import annotations

from methods.swe_abs._jail import facets, job_explore


def _key(**kwargs: object) -> frozenset:
    """The explore job's de-duplication key of one example (every feature but the pairs)."""
    feats = job_explore._features(kwargs, 0, ("ok", "x", None), frozenset())
    return frozenset(f for f in feats if f[0] != "pair")


def test_strings_of_one_length_class_are_told_apart_by_their_ends_and_runs():
    # before: ('str', 2) for all of them, so one test stood for every string of length >= 2
    words = ["a_b", "a_id", "aid", "a id", "a__b", "_ab", "ABc", "aABb"]
    assert len({_key(w=w) for w in words}) == len(words)
    f = facets.text_facets("aABb")
    assert {("first", "a"), ("last", "b"), ("head", "aAA"), ("tail", "AAa")} <= f
    assert ("gram", "aAA") in f and ("chars", "AB") in f and ("last3", "ABb") in f
    assert ("count", "_", 2) in facets.text_facets("a__b")


def test_integers_of_one_sign_are_told_apart_by_digits():
    assert len({_key(n=n) for n in (1, 11, 13, 111, 2013)}) == 5
    assert {("digits", 3), ("last", "3"), ("last2", "13")} <= facets.facets(-113)
    assert ("whole", False) in facets.facets(0.5) and ("below1", True) in facets.facets(0.5)
    assert facets.facets(float("inf")) == {("type", "float"), ("special", "inf")}


def test_sequences_by_repeats_order_and_items():
    assert ("repeats", True) in facets.facets([1, 1, 2])
    assert ("order", "down") in facets.facets([3, 2])
    assert ("item", "last2", "13") in facets.facets([113])
    assert ("order", "mixed") not in facets.facets([1, "a"])  # items that do not compare
    assert ("value", "type", "int") in facets.facets({"k": 1})


def test_relations_between_numeric_arguments():
    rel = facets.relations({"n": 2, "v": 3, "flag": True, "x": float("nan")})
    assert rel == {("rel", "n", "v", "num", -1), ("apart1", "n", "v")}  # no bools, no NaN
    assert _key(n=2, v=3) != _key(n=3, v=2)


def test_relations_between_strings_of_comparable_arguments():
    # clamp('m', 'z', 'a'): inverted bounds of "other comparable types" are a class of their own
    assert facets.relations({"x": "m", "lower": "z", "upper": "a"}) == {
        ("rel", "lower", "upper", "str", 1),
        ("rel", "lower", "x", "str", 1),
        ("rel", "upper", "x", "str", -1),
    }
    assert facets.relations({"a": "m", "b": 1, "c": b"z"}) == set()  # kinds that do not order
    assert _key(x="m", lower="z", upper="a") != _key(x="m", lower="a", upper="z")


def test_unknown_types_keep_only_their_name():
    class Thing:
        pass

    assert facets.facets(Thing()) == {("type", "Thing")}
    assert facets.facets(None) == {("type", "NoneType")}


def test_only_the_arguments_a_form_passes_count():
    # clamp(x) with lower/upper drawn but omitted: inverted bounds there are no class of their own
    form = "clamp(x)"
    out = ("ok", 1, None)
    used = job_explore.used_names(form)
    assert used == {"clamp", "x"}
    a = job_explore._features({"x": 1, "lower": "z", "upper": "a"}, 1, out, frozenset(), used)
    b = job_explore._features({"x": 1, "lower": "a", "upper": "z"}, 1, out, frozenset(), used)
    assert a == b and not any("lower" in f for f in a)
    full = job_explore.used_names("clamp(x, lower, upper)")
    c = job_explore._features({"x": 1, "lower": "z", "upper": "a"}, 0, out, frozenset(), full)
    assert ("rel", "lower", "upper", "str", 1) in c
