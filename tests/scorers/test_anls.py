"""scorers.anls against the `anls` PyPI package (pure-Python reference) on randomized pairs,
and hand-computed cases: the τ boundary, max over references, empty strings, the repo variant."""

from __future__ import annotations

import math
import random

import pytest

from scorers.anls import anls, anls_score, normalize_answer, normalized_levenshtein

anls_pkg = pytest.importorskip("anls")


def _random_text(rng: random.Random) -> str:
    alphabet = "abcAB 019.,-/ é"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))


def test_equals_anls_package_on_random_pairs():
    rng = random.Random(0)
    for _ in range(3000):
        pred = _random_text(rng)
        refs = [_random_text(rng) for _ in range(rng.randint(1, 3))]
        # the package divides by len(s.upper()); equal to len(s) for this alphabet
        assert anls_score(pred, refs) == pytest.approx(anls_pkg.anls_score(pred, refs), abs=1e-12)


def test_near_misses_equal_anls_package():
    # edits of the reference: scores spread across the τ boundary
    rng = random.Random(1)
    for _ in range(2000):
        ref = "".join(rng.choice("abcdefgh0123") for _ in range(rng.randint(1, 10)))
        pred = list(ref)
        for _ in range(rng.randint(0, 6)):
            op = rng.choice("isd")
            pos = rng.randint(0, len(pred))
            if op == "i":
                pred.insert(pos, rng.choice("xyz9"))
            elif pred and pos < len(pred):
                if op == "s":
                    pred[pos] = rng.choice("xyz9")
                else:
                    del pred[pos]
        p = "".join(pred)
        assert anls_score(p, [ref]) == pytest.approx(anls_pkg.anls_score(p, [ref]), abs=1e-12)


def test_hand_computed():
    assert anls_score("9.00", ["9.00"]) == 1.0
    assert anls_score("  TOTAL  Due ", ["total due"]) == 1.0  # case, strip, inner spaces
    # one substitution in 4 chars: NL = 0.25 -> 0.75
    assert anls_score("9.01", ["9.00"]) == 0.75
    # NL exactly τ = 0.5 -> 0 (strict <, as ST-VQA's definition and the anls package)
    assert anls_score("ab", ["ax"]) == 0.0
    assert anls_score("ab", ["ax"], threshold=0.51) == 0.5
    # NL = 2/5 < 0.5 -> 0.6
    assert anls_score("abcde", ["abxye"]) == pytest.approx(0.6)
    # max over references
    assert anls_score("2018-12-25", ["25/12/2018", "2018-12-25"]) == 1.0
    assert anls_score("abcd", ["zzzz", "abcx"]) == 0.75
    # empty prediction vs non-empty answer; both empty; None prediction
    assert anls_score("", ["x"]) == 0.0
    assert anls_score("", [""]) == 1.0
    assert anls_score(None, ["x"]) == 0.0
    assert anls_score("x", "x") == 1.0  # a single string is one reference
    with pytest.raises(ValueError, match="at least one reference"):
        anls_score("x", [])
    with pytest.raises(TypeError, match="reference answer 1"):
        anls_score("x", ["a", 3])  # type: ignore[list-item]


def test_docval_repo_variant_has_no_cutoff_and_one_reference():
    # NL = 0.75 -> standard 0, repo 0.25
    assert anls_score("abcd", ["axyz"]) == 0.0
    assert anls_score("abcd", ["axyz"], variant="docval_repo") == pytest.approx(0.25)
    # only the first reference counts in the repo variant
    assert anls_score("abcd", ["zzzz", "abcd"], variant="docval_repo") == 0.0
    assert anls_score("abcd", ["zzzz", "abcd"]) == 1.0
    # repo variant does not collapse inner spaces (it only strips and lower-cases)
    assert anls_score("a  b", ["a b"], variant="docval_repo") == pytest.approx(0.75)
    assert anls_score("", [""], variant="docval_repo") == 1.0
    with pytest.raises(ValueError, match="unknown ANLS variant"):
        anls_score("a", ["a"], variant="other")  # type: ignore[arg-type]


def test_corpus_mean_and_helpers():
    assert anls(["9.00", "x", "abcd"], [["9.00"], ["y"], ["abcx"]]) == pytest.approx(
        (1 + 0 + 0.75) / 3
    )
    assert math.isnan(anls([], []))
    with pytest.raises(ValueError, match="pair one to one"):
        anls(["a"], [])
    assert normalize_answer("  A \t B\n") == "a b"
    assert normalized_levenshtein("", "") == 0.0
    assert normalized_levenshtein("kitten", "sitting") == pytest.approx(3 / 7)
