import numpy as np
import pytest

from methods.dispat import TabularSerializer, letter_columns


def test_letter_columns_follow_anollm():
    assert letter_columns(3) == ["A", "B", "C"]
    assert letter_columns(28)[26:] == ["AA", "AB"]
    with pytest.raises(ValueError):
        letter_columns(10_000)


def test_standard_binning_zscores_on_train_and_rounds():
    X = np.array([[0.0, 10.0], [2.0, 10.0]])  # col 0: mean 1, std 1; col 1 constant
    s = TabularSerializer(binning="standard").fit(X)
    vals = s.value_strings(np.array([[1.0, 10.0], [3.26, 11.0], [0.96, 10.0]]))
    assert vals == [["0.0", "0.0"], ["2.3", "1.0"], ["0.0", "0.0"]]  # no "-0.0" for -0.04


def test_serialize_spans_point_at_values_and_permutation_is_per_row():
    X = np.arange(12, dtype=float).reshape(3, 4)
    s = TabularSerializer(["w", "x", "y", "z"], binning="none").fit(X)
    rows = s.serialize(X, rng=np.random.default_rng(0))
    orders = {r.column_order for r in rows}
    assert len(orders) > 1
    for i, r in enumerate(rows):
        assert sorted(r.column_order) == [0, 1, 2, 3]
        parts = r.text.split(", ")
        assert [p.split(" is ")[0] for p in parts] == [
            ["w", "x", "y", "z"][j] for j in r.column_order
        ]
        for (a, b), j in zip(r.value_spans, r.column_order, strict=False):
            assert r.text[a:b] == f"{X[i, j]:.4g}"
    fixed = s.serialize(X[:1], permute=False)[0]
    assert fixed.text == "w is 0, x is 1, y is 2, z is 3"


def test_quantile_equal_width_language():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    q = TabularSerializer(binning="quantile").fit(X)
    assert q.value_strings(np.array([[1.0], [-5.0], [3.0]])) == [
        ["the 50th percentile"],
        ["the 0th percentile"],
        ["the 100th percentile"],
    ]
    ew = TabularSerializer(binning="equal_width", n_buckets=10).fit(X)
    assert ew.value_strings(np.array([[1.5], [6.0]])) == [["5"], ["20"]]  # not clipped
    lang = TabularSerializer(binning="language").fit(X)
    assert lang.value_strings(np.array([[0.0], [3.0], [99.0]])) == [
        ["Minimal"],
        ["Maximum"],
        ["Maximum"],
    ]


@pytest.mark.parametrize(
    "X, message",
    [
        (np.zeros((0, 3)), "zero rows"),
        (np.array([[1.0, np.nan]]), "non-finite"),
        (np.zeros(3), "2-D"),
    ],
)
def test_fit_rejects_bad_input(X, message):
    with pytest.raises(ValueError, match=message):
        TabularSerializer().fit(X)


def test_errors_name_the_problem():
    with pytest.raises(RuntimeError, match="not fitted"):
        TabularSerializer().value_strings(np.zeros((1, 2)))
    s = TabularSerializer(["a"]).fit(np.zeros((2, 1)))
    with pytest.raises(ValueError, match="columns"):
        s.value_strings(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="column_names"):
        TabularSerializer(["a", "b"]).fit(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="rng"):
        s.serialize(np.zeros((1, 1)))
    with pytest.raises(ValueError, match="binning"):
        TabularSerializer(binning="bogus")  # type: ignore[arg-type]
