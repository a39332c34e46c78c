"""The foreign values put in place of one argument (``methods/swe_abs/_jail/foreign.py``): which
kinds each declared value gets, and that each is test code that builds what it names."""

from __future__ import annotations

import operator

import pytest

from methods.swe_abs._jail.foreign import READ_ALIKE_KINDS, replacements
from methods.swe_abs._jail.values import HELPERS


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
    assert {"iterator", "text"} == READ_ALIKE_KINDS


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


def test_a_flag_gets_nothing_and_none_gets_no_none():
    assert replacements(True) == []
    assert all(kind != "none" for kind, _ in replacements(None))
