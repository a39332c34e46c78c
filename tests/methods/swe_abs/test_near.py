"""Near inputs (``methods/swe_abs/_jail/near.py``, ``scalar_edits.py``, ``literals.py``): the
edits of a declared value, the constants harvested from the target lines, and the strategy that draws them, checked on hand-written
values (no jail, no candidate of any candidate set)."""

from __future__ import annotations

from pathlib import Path

import pytest

from methods.swe_abs._jail.literals import Constants, harvest
from methods.swe_abs._jail.near import (
    DOCUMENTED_KEY,
    EDIT_KEY,
    domain_values,
    near_calls,
    neighbours,
)
from methods.swe_abs._jail.scalar_edits import scalar_edits
from methods.swe_abs._jail.values import SUBCLASSES, expression

NONE = Constants()


def test_text_edits_reach_case_digits_underscores_and_dropped_punctuation():
    near = neighbours("&#x41;", NONE)
    assert "&#X41;" in near  # case
    assert "&#x41" in near and "#x41;" in near  # the last and the first character dropped
    assert {"&#x4_1;", "&#x4.1;", "&#x4,1;"} <= set(near)  # separators between two digits
    assert "&#x⁴¹;" in near  # superscript digits (`isdigit` takes them; `int`, `\\d` do not)
    # other decimal digits: `[0-9]` and `\\d` differ on them, an incidental choice of gold's
    assert "&#x４１;" not in near and "&#x٤١;" not in near
    assert "&#é41;" in near  # an accented letter
    assert {"ÉbA", "AbÉ", "ÉéÉ", "ÉbÉ"} <= set(
        neighbours("AbA", NONE)
    )  # first, last, all, capitals
    assert "" in near and None not in near  # None is the foreign probe's, not a near input
    assert "&#x41;" not in near  # never the value itself


def test_text_without_digits_or_letters_gets_no_digit_or_letter_edits():
    from methods.swe_abs._jail.scalar_edits import _WORDS

    near = [v for v in neighbours("--", NONE) if v not in _WORDS]  # the words replace the text
    assert not any(c.isdigit() or c.isalpha() for v in near if isinstance(v, str) for c in v)


def test_constants_are_put_around_and_inside_a_text():
    near = neighbours("ab", Constants(texts=(";",)))
    assert {";", ";ab", "a;b", "ab;"} <= set(near)


def test_integer_edits_use_the_codes_constants_and_stay_integers_on_their_side_of_zero():
    near = neighbours(205, Constants(ints=(13,)))
    assert {13, 12, 14, 113, 213, 206, 215} <= set(near)
    assert all(type(v) is int and v >= 0 for v in near) and 205 not in near
    assert {-213, -206, -215} <= set(neighbours(-205, Constants(ints=(13,))))
    assert all(v < 0 for v in neighbours(-205, Constants(ints=(13,))))
    assert 0 not in neighbours(1, Constants(ints=(1,)))  # 1 - 1: a size of 0
    assert 0 not in neighbours(5, Constants(ints=(0,)))  # a constant 0 stays off a positive
    assert neighbours(0, Constants(ints=(1,))) == [1, 2, 101, 10]


def test_float_edits_are_the_special_values_and_a_half():
    near = neighbours(1.0, NONE)
    # not NaN: gold's answer on it follows the order of its comparisons, a correct fix's may not
    assert {repr(v) for v in near} == {"inf", "-inf", "-0.0", "-1.0", "1.5"}
    assert not any(type(v) is float and v == 1.0 for v in near)


def test_bytes_are_edited_as_text_and_swap_buffer_type():
    near = neighbours(b"a1", NONE)
    assert b"A1" in near and bytearray(b"a1") in near and b"" in near
    assert any(type(v) is bytearray and not v for v in near)  # the other buffer type, empty
    assert all(type(v) in (bytes, bytearray) for v in near)
    assert type(neighbours(bytearray(b"a"), NONE)[0]) is bytearray
    assert b"a\xb9" in near  # a superscript digit, outside ASCII, as Latin-1
    assert b"\xe2\x80\x94" in neighbours(
        b"a", Constants(texts=("\u2014",))
    )  # beyond Latin-1: UTF-8


def test_containers_edit_one_item_and_their_shape():
    near = neighbours([1, 2], NONE)
    assert [] in near and [2, 1] in near and (1, 2) in near and [1, 1, 2] in near and [1] in near
    assert [2, 2] in near and [1, 12] in near and None not in near
    assert "[1, 2]" not in [repr(v) for v in near]  # never the value itself
    mapping = neighbours({"a": 1}, NONE)
    assert {} in mapping and {"a": 2} in mapping and {"A": 1} in mapping and None not in mapping


def test_subclass_instances_are_edited_as_their_base_type():
    sub = SUBCLASSES[str]("ab")
    near = neighbours(sub, NONE)
    assert "AB" in near and all(type(v) is not SUBCLASSES[str] for v in near)


def test_none_has_no_neighbours():
    assert neighbours(None, NONE) == []


def test_harvest_reads_literals_on_the_target_lines_only(tmp_path: Path):
    src = tmp_path / "m.py"
    src.write_text(
        "X = 99\n"
        "def f(n):\n"
        "    if 11 <= n % 100 <= 13 and n != True:\n"
        "        return ';' + b'&'.decode()\n"
        "    return 'x' * 10_000_000\n"
    )
    got = harvest({str(src): {3, 4, 5}})
    assert got.ints == (11, 13, 100)  # not 99 (line 1), not True, not a literal above 10**6
    assert set(got.texts) == {";", "&", "x"}
    assert harvest({str(tmp_path / "missing.py"): {1}}) == NONE
    (tmp_path / "bad.py").write_text("def (")
    assert harvest({str(tmp_path / "bad.py"): {1}}) == NONE


def test_calls_edit_exactly_one_argument_and_stay_expressible_as_code(
    swe_abs_site: str, monkeypatch
):
    monkeypatch.syspath_prepend(swe_abs_site)
    spec = {"args": {"s": "st.sampled_from(['12', 'ab'])", "flag": "st.just(True)"}}
    tagged = _draw_all(near_calls(spec, Constants(texts=(";",))), 400, swe_abs_site, monkeypatch)
    # every edited call names its edit: the argument and what was done to it
    assert all(d[EDIT_KEY][0] == "s" for d in tagged if EDIT_KEY in d)
    labels = {d[EDIT_KEY][1] for d in tagged if EDIT_KEY in d}
    assert {"upper", "digits '_'", "literal inside", "newline after"} <= labels, labels
    drawn = [{k: v for k, v in d.items() if k != EDIT_KEY} for d in tagged]
    assert all(isinstance(d, dict) and set(d) == {"s", "flag"} for d in drawn)
    texts = {d["s"] for d in drawn}
    assert {"1_2", "AB", "a;b"} <= texts and None not in texts
    assert all(d["flag"] is True for d in drawn)  # a flag has no edit (None is foreign)
    n = Constants(ints=(7,))
    pairs = _draw_all(near_calls({"args": {"a": "st.just('x')", "b": "st.just(1)"}}, n),
                      200, swe_abs_site, monkeypatch)  # fmt: skip
    pairs = [{k: v for k, v in d.items() if k != EDIT_KEY} for d in pairs]
    assert all((d["a"] == "x") + (d["b"] == 1) == 1 for d in pairs)  # exactly one edited
    assert all(expression(v) is not None for d in drawn for v in d.values())


def test_sequences_get_a_one_shot_iterator_that_is_test_code():
    from methods.swe_abs._jail.values import HELPERS, equal

    it_type = HELPERS["_SweAbsIterator"]
    found = [v for v in neighbours([1, 2], NONE) if type(v) is it_type]
    assert len(found) == 1
    text = expression(found[0])
    assert text == "_SweAbsIterator([1, 2])"
    assert list(found[0]) == [1, 2] and list(found[0]) == []  # one shot
    assert expression(found[0]) == "_SweAbsIterator([])" and not equal(found[0], it_type([1]))


def test_text_with_digits_gets_leading_zeros():
    assert "#0001" in neighbours("#1", NONE)


def _draw_all(strategy: object, n: int, site: str, monkeypatch) -> list[object]:
    monkeypatch.syspath_prepend(site)
    from hypothesis import given, settings

    drawn: list[object] = []

    @settings(max_examples=n, derandomize=True, database=None)
    @given(strategy)
    def probe(v: object) -> None:
        drawn.append(v)

    probe()
    return drawn


def test_edits_reach_inside_containers_as_often_as_on_top(swe_abs_site, monkeypatch):
    monkeypatch.syspath_prepend(swe_abs_site)
    from methods.swe_abs._jail.near import edits

    value = ["&amp;", "x", "y", "z"]
    drawn = _draw_all(edits(value, NONE), 300, swe_abs_site, monkeypatch)
    alike = (value[::-1], [v.upper() for v in value], [v.lower() for v in value],
             [v[:-1] for v in value], [f" {v} " for v in value])  # fmt: skip
    inside = [v for v in drawn if type(v) is list and len(v) == 4 and v not in alike]
    inside = [v for v in inside if sum(a != b for a, b in zip(v, value, strict=True)) == 1]
    on_top = [v for v in drawn if v not in inside]
    # Hypothesis stops early on a finite space; both kinds are drawn, every edited item too
    assert len(inside) >= 20 and len(on_top) >= 5, (len(inside), len(on_top))
    assert {i for v in inside for i in range(4) if v[i] != value[i]} == {0, 1, 2}
    assert ["&AMP;", "x", "y", "z"] in drawn
    assert ["&AMP;", "X", "Y", "Z"] in drawn  # the same edit of every text inside
    mapping = _draw_all(edits({"a": 1}, NONE), 200, swe_abs_site, monkeypatch)
    assert {"A": 1} in mapping and {"a": 2} in mapping and {} in mapping and None not in mapping


def test_a_kind_with_many_edits_does_not_crowd_out_the_others():
    """Twenty literals of the code give a text 180 edits of that kind, kept apart from the case
    edits: a draw picks one of the kinds first (one in six here), not one of 180."""
    from methods.swe_abs._jail.scalar_edits import scalar_groups

    many = Constants(texts=tuple(f"k{i}" for i in range(20)))
    groups = scalar_groups("&amp;", many)
    assert ["&AMP;"] in groups and [None] not in groups and len(groups) == 6
    assert max(len(g) for g in groups) == 180  # the literals, one kind


def test_the_same_edit_everywhere_keeps_keys_apart():
    from methods.swe_abs._jail.near import _everywhere

    assert _everywhere(["a", ("b", 1)], str.upper) == ["A", ("B", 1)]
    assert _everywhere({"a": "x", "A": "y"}, str.upper) == {"a": "x", "A": "y"}  # keys collide


def test_an_argument_is_chosen_as_often_as_it_has_kinds_of_edit():
    from methods.swe_abs._jail.near import _kinds

    assert _kinds(None, NONE) == 0 and _kinds(True, NONE) == 0  # a flag: no edit
    assert (
        _kinds("12", NONE) == 4
        and _kinds("a1", NONE) == 6
        and _kinds(5, Constants(ints=(13,))) == 3
    )
    assert _kinds([1], NONE) == 3 and _kinds([], NONE) == 1 and _kinds({}, NONE) == 0


def test_texts_get_a_space_between_digits_a_long_repeat_and_a_byte_order_mark():
    near = neighbours("a12", NONE)
    assert "a1 2" in near  # a space written between digits, like `_ . ,`
    long = [v for v in near if isinstance(v, str) and len(v) > 100]
    # past limits on counts of replacements (32, 64), and of words
    assert long == ["a12" * 34, " ".join(["a12"] * 40)]
    assert "\ufeffa12" in near
    assert b"\xef\xbb\xbfa\xe9" in neighbours(b"a\xe9", NONE)  # the UTF-8 mark's bytes, rest as is


def test_harvested_literals_give_their_words_and_a_word_going_on():
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write("import re\ndef f(s):\n    return re.sub(r'_id$', '', s)\n")
    got = harvest({fh.name: {3}})
    assert {"_id$", "id"} <= set(got.texts)  # the pattern's word alone
    assert "_id" in got.texts  # and the text it matches (seventh round: "user-id", "x_id_id")
    assert got.matched == ("_id",)  # a text the code matches, named in its edits' labels


def test_texts_the_code_compares_its_input_with_are_matched():
    import tempfile

    source = (
        "def f(s, a):\n"
        "    if a not in ('legacy', 'modern'):\n"
        "        raise ValueError('bad algorithm')\n"
        "    if s.endswith('_id') or s == 'x':\n"
        "        s = s[:-3]\n"
        "    return s.replace('_', ' ') + 'tail'\n"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(source)
    got = harvest({fh.name: {2, 3, 4, 5, 6}})
    assert set(got.matched) == {"legacy", "modern", "_id", "x", "_"}
    assert {"bad algorithm", "tail", " "} <= set(got.texts) - set(got.matched)
    assert "tag_ids" in neighbours("tag", Constants(texts=("_id",)))  # a plural after it


def test_documented_kinds_add_their_edits_and_nothing_else():
    assert 0 not in neighbours(3, NONE) and None not in neighbours(3, NONE)
    assert {0, -3, -1, -4} <= set(neighbours(3, NONE, frozenset({"zero", "negative"})))
    huge = neighbours(11, NONE, frozenset({"huge"}))
    assert 10**20 + 11 in huge and all(type(v) is int for v in huge)
    assert 3.0 in [v for v in neighbours(3, NONE, frozenset({"float"})) if type(v) is float]
    assert None in neighbours("x", NONE, frozenset({"none"}))
    items = neighbours([1, 2], NONE, frozenset({"none_items"}))
    assert [None, 2] in items and [1, None] in items
    assert {"a": None} in neighbours({"a": 1}, NONE, frozenset({"none_items"}))
    assert None not in items  # none_items is about items, not the argument


def test_domains_are_read_from_the_spec_and_checked():
    import pytest

    from methods.swe_abs._jail.near import domains

    spec = {"args": {"n": "st.integers(1, 3)", "seq": "st.lists(st.integers())"},
            "domains": {"n": ["zero"], "seq": {"kinds": ["none_items"], "because": "doc"}}}  # fmt: skip
    assert domains(spec) == {"n": frozenset({"zero"}), "seq": frozenset({"none_items"})}
    with pytest.raises(ValueError, match="'m' is not a declared argument"):
        domains({**spec, "domains": {"m": ["zero"]}})
    with pytest.raises(ValueError, match="unknown kinds"):
        domains({**spec, "domains": {"n": ["sero"]}})


def test_documented_kinds_are_drawn_for_their_argument_only(swe_abs_site: str, monkeypatch):
    monkeypatch.syspath_prepend(swe_abs_site)  # Hypothesis, before near_calls imports it
    spec = {"args": {"n": "st.just(2)", "m": "st.just(2)"}, "domains": {"n": ["zero"]}}
    drawn = _draw_all(near_calls(spec, NONE), 300, swe_abs_site, monkeypatch)
    assert any(d["n"] == 0 for d in drawn)
    assert all(d["m"] != 0 for d in drawn)


def test_a_documented_edit_says_which_argument_and_kind_it_is(swe_abs_site: str, monkeypatch):
    monkeypatch.syspath_prepend(swe_abs_site)  # Hypothesis, before near_calls imports it
    # issue 27, fifth round: the choice of tests kept one in 73 of interpose's drawn None items;
    # the tag is what lets it keep one test per documented (argument, kind) first
    spec = {"args": {"n": "st.just(2)", "s": "st.just('ab')"}, "domains": {"n": ["zero", "none"]}}
    drawn = _draw_all(near_calls(spec, NONE), 300, swe_abs_site, monkeypatch)
    tagged = [d for d in drawn if DOCUMENTED_KEY in d]
    assert {d[DOCUMENTED_KEY] for d in tagged} == {("n", "zero"), ("n", "none")}
    assert all(d["n"] == (0 if d[DOCUMENTED_KEY][1] == "zero" else None) for d in tagged)
    # the same values drawn without a tag are undocumented edits (no 0 or None among them)
    assert all(d["n"] not in (0, None) for d in drawn if DOCUMENTED_KEY not in d)


def test_documented_values_replace_their_argument_tagged_by_place(swe_abs_site: str, monkeypatch):
    monkeypatch.syspath_prepend(swe_abs_site)  # Hypothesis, before near_calls imports it
    spec = {
        "args": {"s": "st.just('ab')", "n": "st.just(2)"},
        "domain_values": {"s": ["'\\u0301a'", "b'ab'", "'ab'"]},
    }
    drawn = _draw_all(near_calls(spec, NONE), 300, swe_abs_site, monkeypatch)
    tags = {d[DOCUMENTED_KEY]: d["s"] for d in drawn if DOCUMENTED_KEY in d}
    # the value equal to the drawn one ('ab', place 2) is no edit
    assert tags == {("s", "value 0"): "\u0301a", ("s", "value 1"): b"ab"}
    assert all(d["n"] == 2 for d in drawn if DOCUMENTED_KEY in d)


def test_documented_values_must_be_literals_of_declared_arguments():
    spec = {"args": {"s": "st.just('a')"}}
    assert domain_values({**spec, "domain_values": {"s": ["(1, 'x')", "None"]}}) == {
        "s": ((1, "x"), None)
    }
    with pytest.raises(ValueError, match=r"'t' is not a declared argument"):
        domain_values({**spec, "domain_values": {"t": ["1"]}})
    with pytest.raises(ValueError, match=r"'s': \"float\('nan'\)\" is not a Python literal"):
        domain_values({**spec, "domain_values": {"s": ["float('nan')"]}})


def test_texts_get_a_newline_after_them_and_the_words_parsers_treat_apart():
    # issue 27, seventh round: `re.match(r"^(a|b)$", s)` accepts "a\n" (`$` matches before a
    # final newline); a converter that maps "None" or "null" to None differs on that word alone
    near = neighbours("legacy", NONE)
    assert "legacy\n" in near
    assert {"None", "null", "NaN", "inf", "True"} <= set(near)
    assert b"legacy\n" in neighbours(b"legacy", NONE)


def test_texts_get_a_newline_before_them():
    # issue 27, twelfth round: a fix testing `re.match(r".*1\d$", s)` reads the first line
    # alone (`.` stops at a newline), so "Lot\n12" differs where "12\n" does not
    labelled = {lb: v for g in scalar_edits("12", NONE) for lb, v in g}
    assert labelled["newline before"] == "\n12"
    assert "\n12" in neighbours("12", NONE)
    assert b"\nab" in neighbours(b"ab", NONE)


def test_numbers_in_text_get_their_point_and_marks_moved():
    assert {".125", "0."} <= set(neighbours("0.125", NONE))  # digits before / after the point gone
    assert {"-.5e3", ".5e3"} <= set(neighbours("-10.5e3", NONE))  # the point first character
    assert "1.234,5" in neighbours("1,234.5", NONE)  # decimal and thousands marks swapped
    assert "12,5" in neighbours("12.5", NONE)  # a decimal comma
    near = neighbours("ab.", NONE)  # a point without digits is no number
    assert not any(v.startswith(".") or "," in v for v in near if isinstance(v, str)), near


def test_literals_are_put_twice_and_spelled_with_other_separators():
    near = neighbours("user", Constants(texts=("_id",)))
    assert "user_id_id" in near  # the literal ending the text twice
    assert {"user-id", "user id", "user.id"} <= set(near)  # its separator written otherwise
    assert not any(v.endswith("-x") for v in neighbours("a", Constants(texts=("x",))))
    # the literal nearly alone: a name compared by `==` against one matched by `^name$`
    near = neighbours("fast", Constants(texts=("legacy",)))
    assert {"legacy\n", "LEGACY", "Legacy", " legacy "} <= set(near)


def test_every_edit_is_labelled_with_what_it_did(swe_abs_site: str, monkeypatch):
    monkeypatch.syspath_prepend(swe_abs_site)  # Hypothesis, before near_calls imports it
    from methods.swe_abs._jail.near import tagged_edits

    drawn = _draw_all(tagged_edits(["-1.5", "b"], NONE), 400, swe_abs_site, monkeypatch)
    by_label = {label: v for v, kind, label in drawn}
    assert all(kind is None for _, kind, _ in drawn)  # no documented kind was declared
    assert by_label["reversed"] == ["b", "-1.5"]
    assert by_label["every text upper"] == ["-1.5", "B"]
    assert by_label["item point first"] == [".5", "b"]  # an item's label after "item"
    assert by_label["item integer part dropped"] == ["-.5", "b"]
    documented = _draw_all(tagged_edits(3, NONE, kinds=frozenset({"zero"})), 100, swe_abs_site,
                           monkeypatch)  # fmt: skip
    assert (0, "zero", "zero") in documented  # a documented kind is its own label


def test_a_pattern_gives_its_literal_only_when_it_is_anchors_around_one():
    from methods.swe_abs._jail.literals import _pattern_literal

    assert _pattern_literal("_id$") == "_id" and _pattern_literal(r"\bfoo\b") == "foo"
    assert _pattern_literal(r"^\.git$") == ".git"  # an escaped point is a point
    assert _pattern_literal("abc") is None  # no anchor: the text itself is the literal
    assert _pattern_literal(r"(\d+)$") is None and _pattern_literal("^a.b$") is None
    assert _pattern_literal("$") is None


def test_a_text_a_pattern_matches_gets_labels_of_its_own(swe_abs_site: str, monkeypatch):
    monkeypatch.syspath_prepend(swe_abs_site)  # Hypothesis, before near_calls imports it
    from methods.swe_abs._jail.near import tagged_edits

    constants = Constants(texts=("_id", "x"), matched=("_id",))
    drawn = _draw_all(tagged_edits("tag", constants), 400, swe_abs_site, monkeypatch)
    by_label = {label: v for v, _, label in drawn}
    assert by_label["literal '_id' twice"] == "tag_id_id"  # named: a test of its own
    assert by_label["literal twice"] == "tagxx"  # the other literals share one label


def test_a_code_point_in_a_text_gets_the_bounds_of_its_classes_in_its_base_and_case():
    # issue 27, ninth round (seventh outside set): hex references to controls, surrogates,
    # astral code points and a surrogate pair are where decoders of numeric references differ
    near = neighbours("a&#x41;b", NONE)
    assert {"a&#x0;b", "a&#xA;b", "a&#xD800;b", "a&#xFFFF;b", "a&#x1F600;b"} <= set(near)
    assert {"a&#x10FFFF;b", "a&#x110000;b", "a&#xD83D;&#xDE00;b"} <= set(near)
    assert "&#xd800;" in neighbours("&#xe9;", NONE)  # lower-case hex digits stay lower-case
    assert {"&#0;", "&#55296;", "&#1114112;"} <= set(neighbours("&#65;", NONE))  # decimal
    assert "U+FFFF" in neighbours("U+0041", NONE)
    assert not any("#x" in v for v in neighbours("x41 12", NONE) if isinstance(v, str))


def _labelled(s: str) -> list[tuple[str, object]]:
    return [e for group in scalar_edits(s, NONE) for e in group]


def test_code_point_edits_name_their_notation_and_reach_noncharacters():
    # issue 27, thirteenth round: a decoder is often one pattern per notation, so an astral
    # reference written in hex keeps a test of its own beside one written in decimal
    hexa = dict((v, label) for label, v in _labelled("a&#X41;b"))
    assert hexa["a&#X1F600;b"] == "code point astral in '&#X'"
    assert hexa["a&#XFDD0;b"] == "code point noncharacter in '&#X'"
    decimal = dict((v, label) for label, v in _labelled("&#65;"))
    assert decimal["&#65536;"] == "code point astral first in '&#'"
    assert decimal["&#55357;&#56832;"] == "code point surrogate pair in '&#'"


def test_texts_get_an_apostrophe_parentheses_and_a_combining_mark_outside_the_bmp():
    # issue 27, tenth round (eighth outside set): a possessive inside a text, a number in
    # parentheses (an accounting negative), and a combining mark from a supplementary plane
    assert "Donald's book" in neighbours("Donald book", NONE)
    assert "ab's1" in neighbours("ab1", NONE)
    assert not any("'s" in v for v in neighbours("a 1", NONE) if isinstance(v, str))  # no word
    assert "(1,234.5)" in neighbours("1,234.5", NONE)
    assert not any(v.startswith("(") for v in neighbours("abc", NONE) if isinstance(v, str))
    near = neighbours("a \u0301 b", NONE)
    assert "a \U000101fd b" in near
    assert not any("\U000101fd" in v for v in neighbours("a b", NONE) if isinstance(v, str))


def test_texts_get_other_normal_forms_dashes_stacked_marks_signs_and_many_words():
    # issue 27, eleventh round (ninth outside set): a text in another Unicode normal form, with
    # other dashes, with a second mark stacked; a number with a '+' or a word after; many words
    near = neighbours("caf\u00e9-1", NONE)
    assert {"cafe\u0301-1", "caf\u00e9\u20101", "caf\u00e9\u20131"} <= set(near)
    assert "caf\u00e9-1 apples" in near
    assert "caf\u00e9-+1" not in near and "caf\u00e9 +1" in neighbours("caf\u00e9 1", NONE)
    assert "e\u0301\u0301x" in neighbours("e\u0301x", NONE)  # stacked on the first mark
    assert "\u00e9x" in neighbours("e\u0301x", NONE)  # composed
    assert not any("+" in v for v in neighbours("-5", NONE) if isinstance(v, str))  # signed
    assert not any("apples" in v for v in neighbours("abc", NONE) if isinstance(v, str))
    assert " ".join(["ab c"] * 40) in neighbours("ab c", NONE)
    assert not any("\u2013" in v for v in neighbours("ab", NONE) if isinstance(v, str))
