"""The foreign values put in place of one argument (``methods/swe_abs/_jail/foreign.py``): which
kinds each declared value gets, and that each is test code that builds what it names."""

from __future__ import annotations

import operator

import pytest

from methods.swe_abs._jail.foreign import (
    REACH,
    READ_ALIKE_KINDS,
    UNCHANGED_KINDS,
    marked,
    replacements,
)
from methods.swe_abs._jail.values import HELPERS

_BOOM = HELPERS["_SweAbsBoom"]


def _built(code: str) -> object:
    return eval(code, dict(HELPERS))  # noqa: S307 - code built by the module under test


def test_a_sequence_of_two_or_more_items_gets_a_one_shot_iterator_over_them():
    kinds = dict(replacements([1, 2]))
    it = _built(kinds["iterator"])
    assert list(it) == [1, 2] and list(it) == []  # read once
    assert "iterator" not in dict(replacements([1]))  # one item: a second pass shows nothing
    assert "iterator" not in dict(replacements([]))


def test_a_number_gets_its_text_which_may_be_read_alike():
    assert dict(replacements(11))["text"] == "'11'"
    assert {"iterator", "sequence", "text", "mapping", "flag_1", "flag_0", "index",
            "index_items", "unhashable", "unhashable_items", "labelled"} == READ_ALIKE_KINDS  # fmt: skip


def test_the_subject_text_gets_a_text_whose_str_is_a_label():
    """Seventeenth round: the same text as a str whose str() and format() are a label (as an
    enumeration member mixed with str has), its value read by anything that reads a text; only
    for the call's subject."""
    built = _built(dict(replacements("red"))["labelled"])
    assert isinstance(built, str) and built == "red" and built.encode() == b"red"
    assert str(built) == f"{built}" == "_SweAbsLabelled.red" and built[:2] == "re"
    assert repr(built) == "_SweAbsLabelled('red')"
    assert "labelled" not in dict(replacements("red", subject=False))
    assert "labelled" not in dict(replacements(b"red"))


def test_an_integer_gets_an_integer_that_is_no_int_but_a_float_or_flag_does_not():
    built = _built(dict(replacements(3))["index"])
    assert not isinstance(built, int) and operator.index(built) == 3
    assert list(range(built)) == [0, 1, 2] and "abcd"[:built] == "abc"
    # fifteenth round: every operation of int, as NumPy's integers (a correct partition that
    # compares its size with ``==`` and subtracts from it was rejected by ``__index__`` alone)
    assert built == 3 and 3 == built and hash(built) == hash(3) and built < 4 and -built == -3
    arithmetic = (built + 1, 1 + built, built - 5, 2 * built, built // 2, built % 2)
    assert arithmetic == (4, 4, -2, 6, 1, 1)
    assert {3: "x"}[built] == "x" and bool(_built(dict(replacements(0))["index"])) is False
    assert repr(built) == "_SweAbsIndex(3)" and built != "3"
    assert "index" not in dict(replacements(2.0))
    assert "index" not in dict(replacements(True))


@pytest.mark.parametrize(
    ("items", "places"),
    [([], {"at_once"}), ([7], {"at_once", "iterable"}), ([7, 8], {"at_once", "early", "iterable"})],
)
@pytest.mark.parametrize(("suffix", "error"), [("", _BOOM), ("_runtimeerror", RuntimeError)])
def test_a_sequence_gets_sources_failing_at_once_early_and_at_the_end(items, places, suffix, error):
    # issue 27, twelfth round: RuntimeError sources; thirteenth: the probe's own error at once
    # too (one loop over the error classes). "early" only where it differs from "at the end"
    names = {f"failing_{place}{suffix}" for place in ("at_once", "early", "iterable")}
    made = {k: c for k, c in replacements(items) if k in names}
    assert set(made) == {f"failing_{place}{suffix}" for place in places}
    read_before = {"at_once": [], "early": items[:1], "iterable": items}
    for kind, code in made.items():
        got: list[object] = []
        with pytest.raises(error, match="_swe_abs"):
            for item in _built(code):  # type: ignore[attr-defined]
                got.append(item)
        assert got == read_before[kind.removeprefix("failing_").removesuffix(suffix)], kind


def test_a_sequence_gets_an_object_readable_by_index_alone():
    seq = _built(dict(replacements(("b", [1])))["sequence"])
    assert list(seq) == ["b", [1]] and list(seq) == ["b", [1]]  # read again from the start
    assert not hasattr(seq, "__iter__") and not hasattr(seq, "__len__")
    with pytest.raises(TypeError):
        len(seq)  # type: ignore[arg-type]
    assert "sequence" not in dict(replacements([]))  # empty: nothing to read by index


def test_a_sequence_of_distinct_hashable_items_gets_a_mapping_keyed_by_them():
    mapping = _built(dict(replacements(("b", "a", 3)))["mapping"])
    assert type(mapping) is dict and list(mapping) == ["b", "a", 3]
    assert _built(dict(replacements([]))["mapping"]) == {}
    assert "mapping" not in dict(replacements([1, 1]))  # a repeated item would be lost
    assert "mapping" not in dict(replacements([[1], 2]))  # an unhashable one cannot be a key


def test_a_text_gets_a_userstring_of_it():
    from collections import UserString

    built = _built(dict(replacements("a'b\\n"))["userstring"])
    assert type(built) is UserString and built == "a'b\\n"


@pytest.mark.parametrize("error", [TypeError, KeyError, IndexError, AttributeError, ValueError])
def test_a_callable_gets_one_failing_once_with_each_lookup_error(error):
    kinds = dict(replacements(operator.add))
    f = _built(kinds[f"failing_once_{error.__name__.lower()}"])
    with pytest.raises(error):
        f(1, 2)
    assert f(3, 4) == 3  # then it returns its first argument: code that retries goes on
    always = _built(kinds["failing_callable_typeerror"])
    for _ in range(2):
        with pytest.raises(TypeError):
            always(1)


def test_a_flag_gets_its_integer_and_none_gets_no_none():
    assert replacements(True) == [("flag_1", "1")]
    assert replacements(False) == [("flag_0", "0")]
    assert all(kind != "none" for kind, _ in replacements(None))


@pytest.mark.parametrize("value", [3, "a", b"a", 1.5, [1, 2], (), {"k": 1}, object()])
def test_anything_not_callable_gets_a_value_without_behaviour(value):
    # issue 27, thirteenth round: a default taken for a factory, a value treated apart
    opaque = _built(dict(replacements(value))["opaque"])
    assert opaque == _built("_SweAbsOpaque()") and opaque != value
    assert hash(opaque) == hash(_built("_SweAbsOpaque()"))
    assert {opaque: 1}[_built("_SweAbsOpaque()")] == 1  # a dictionary key like any other
    with pytest.raises(_BOOM):
        opaque()  # type: ignore[operator]


@pytest.mark.parametrize("value", [None, len, int, True])
def test_none_callables_and_flags_get_no_value_without_behaviour(value):
    assert "opaque" not in dict(replacements(value))
    assert "no_truth" not in dict(replacements(value))


@pytest.mark.parametrize("value", [3, "a", b"a", 1.5, [1, 2], (), {"k": 1}, object()])
def test_anything_not_callable_gets_a_value_whose_truth_cannot_be_read(value):
    # issue 27, fourteenth round: a fix that tests a value's truth before its type
    built = _built(dict(replacements(value))["no_truth"])
    assert built == _built("_SweAbsNoTruth()") and built != value
    assert {built: 1}[_built("_SweAbsNoTruth()")] == 1
    with pytest.raises(_BOOM):
        bool(built)
    assert "no_truth" in UNCHANGED_KINDS
    assert "none" in UNCHANGED_KINDS  # seventeenth round: None returned on as before the fix


@pytest.mark.parametrize("value", ["ab", b"ab", 7, 2.5])
def test_a_text_bytes_or_number_gets_the_same_value_unhashable(value):
    # issue 27, fourteenth round: a fix that caches on (or puts in a set) a value it was given
    built = _built(dict(replacements(value))["unhashable"])
    assert isinstance(built, type(value)) and built == value and type(built) is not type(value)
    with pytest.raises(TypeError):
        hash(built)
    assert "unhashable" not in dict(replacements(True))  # a flag: its integer only
    assert "unhashable" not in dict(replacements([1]))


def test_a_sequence_gets_its_items_unhashable():
    built = _built(dict(replacements(["a", 1, None]))["unhashable_items"])
    assert type(built) is list and built == ["a", 1, None]
    with pytest.raises(TypeError):
        hash(built[0])
    with pytest.raises(TypeError):
        hash(built[1])
    assert built[2] is None  # a type without an unhashable subclass stays as it is
    with pytest.raises(TypeError):
        hash(_built(dict(replacements(("a", "b")))["unhashable_items"]))  # a tuple of them too
    assert "unhashable_items" not in dict(replacements([None, [1]]))


def test_a_text_gets_a_path_like_object_holding_it():
    # issue 27, thirteenth round (eleventh outside set): a path-like object for a text
    import os

    path = _built(dict(replacements("a/b"))["pathlike"])
    assert os.fspath(path) == "a/b" and not isinstance(path, str)
    assert "pathlike" not in dict(replacements(b"a/b"))


def test_a_sequence_of_integers_gets_them_as_integers_that_are_no_int():
    # issue 27, fifteenth round: column numbers taken from NumPy are integers, but no int
    built = _built(dict(replacements([2, "a", 0]))["index_items"])
    assert type(built) is list and [operator.index(built[0]), built[1]] == [2, "a"]
    assert not isinstance(built[0], int) and ["x", "y", "z"][built[2]] == "x"
    assert type(_built(dict(replacements((1,)))["index_items"])) is tuple
    assert "index_items" in READ_ALIKE_KINDS
    assert "index_items" not in dict(replacements(["a", True]))  # no int (a flag is no column)


def test_marked_calls_record_which_are_reached():
    # a call in a conditional's branch not taken is never reached: its arguments test nothing
    import ast

    tree = ast.parse("f(a) if flag else f(a, g(b))", mode="eval")
    namespace = {"f": lambda *a: a, "g": lambda b: -b}
    calls = [c for c in ast.walk(tree.body) if isinstance(c, ast.Call)]
    reached: set[int] = set()

    def reach(i: int, callee: object) -> object:
        reached.add(i)
        return callee

    for flag, expected in ((True, {0}), (False, {1, 2})):
        reached.clear()
        env = {**namespace, "a": 1, "b": 2, "flag": flag, REACH: reach}
        got = eval(marked(tree, calls), env)  # noqa: S307 - text built by the module under test
        assert got == eval(ast.unparse(tree), env)  # the marks change no value  # noqa: S307
        assert {ast.unparse(calls[i]) for i in reached} == {
            ast.unparse(calls[i]) for i in expected}, (flag, reached)  # fmt: skip


def test_only_the_calls_subject_gets_the_unhashable_kinds():
    # an option (a keyword or a later positional argument) may be looked up in a set by a
    # correct fix: a shipped correct slugify patch does `algorithm in {...}`
    for value in ("legacy", 3, ["a", "b"]):
        kinds = dict(replacements(value, subject=False))
        assert "unhashable" not in kinds and "unhashable_items" not in kinds
        assert "index_items" not in kinds
        assert "no_truth" in kinds
