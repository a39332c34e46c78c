import csv

import numpy as np
import pytest
from scipy.io import savemat

from tasks.dispat.dataset import (
    ADBENCH_SETS,
    DatasetFormatError,
    expand_datasets,
    load_csv,
    load_mat,
    load_npz,
    load_wbc,
    make_split,
    record_to_sample,
    resolve_dataset,
    split_records,
)


def _npz(tmp_path, name="d.npz", **arrays):
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


def _good(n_norm=20, n_anom=3, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n_norm + n_anom, d)), np.r_[np.zeros(n_norm), np.ones(n_anom)].astype(
        int
    )


def test_wbc_follows_the_odds_recipe():
    ds = load_wbc()
    assert ds.X.shape == (378, 30) and int(ds.y.sum()) == 21
    assert ds.column_names[0] == "mean radius"
    assert ds.content_hash == load_wbc().content_hash  # deterministic


def test_npz_mat_csv_loaders_roundtrip(tmp_path):
    X, y = _good()
    assert load_npz(_npz(tmp_path, X=X, y=y)).X.shape == (23, 4)
    savemat(tmp_path / "d.mat", {"X": X, "y": y.reshape(-1, 1)})
    mat = load_mat(tmp_path / "d.mat")
    np.testing.assert_allclose(mat.X, X)
    assert mat.y.tolist() == y.tolist()
    with open(tmp_path / "d.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["age", "income", "h", "w", "label"])
        w.writerows([[*row, lab] for row, lab in zip(X, y, strict=False)])
    c = load_csv(tmp_path / "d.csv")
    assert c.column_names == ["age", "income", "h", "w"] and c.y.sum() == 3


@pytest.mark.parametrize(
    "arrays, message",
    [
        (
            {"data": np.zeros((3, 2)), "labels": np.zeros(3)},
            r"expected arrays 'X' and 'y', found \['data', 'labels'\]",
        ),
        ({"X": np.zeros((0, 3)), "y": np.zeros(0)}, "zero rows"),
        (
            {"X": np.array([[1.0, np.nan]] * 6), "y": np.r_[np.zeros(5), 1]},
            r"NaN/inf.*row 0, column 1",
        ),
        ({"X": np.zeros((6, 2)), "y": np.zeros(6)}, "single class"),
        ({"X": np.zeros((6, 2)), "y": np.r_[np.zeros(5), 2]}, r"0 \(normal\) or 1"),
        ({"X": np.zeros((6, 2)), "y": np.zeros(5)}, "6 rows but y has 5"),
        ({"X": np.zeros(6), "y": np.zeros(6)}, "2-D"),
        ({"X": np.zeros((4, 2)), "y": np.r_[np.zeros(3), 1]}, "only 3 normal rows"),
    ],
)
def test_malformed_npz_names_the_file_and_problem(tmp_path, arrays, message):
    path = _npz(tmp_path, **arrays)
    with pytest.raises(DatasetFormatError, match=message) as info:
        load_npz(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("damage", ["truncated", "corrupted", "compressed_corrupted"])
def test_truncated_or_corrupt_npz_names_the_file(tmp_path, damage):
    """Damage inside the zip (a cut file, flipped bytes in a stored or deflated member) fails
    in zipfile/zlib with BadZipFile, a CRC error or "Error -3 while decompressing data"; the
    error must still name the file."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 5)), np.r_[np.zeros(190), np.ones(10)]
    good = tmp_path / "good.npz"
    (np.savez_compressed if damage == "compressed_corrupted" else np.savez)(good, X=X, y=y)
    raw = bytearray(good.read_bytes())
    if damage == "truncated":
        raw = raw[: len(raw) // 2]
    else:
        for i in range(300, 700):  # inside the first member's data, past its local header
            raw[i] ^= 0x5A
    path = tmp_path / f"{damage}.npz"
    path.write_bytes(bytes(raw))
    with pytest.raises(DatasetFormatError, match="not a readable .npz file") as info:
        load_npz(path)
    assert str(path) in str(info.value)


def test_malformed_mat_and_csv(tmp_path):
    savemat(tmp_path / "bad.mat", {"X": np.zeros((3, 2))})
    with pytest.raises(DatasetFormatError, match="'X' and 'y'"):
        load_mat(tmp_path / "bad.mat")
    (tmp_path / "junk.mat").write_text("not matlab")
    with pytest.raises(DatasetFormatError, match="not a readable .mat"):
        load_mat(tmp_path / "junk.mat")
    (tmp_path / "nolabel.csv").write_text("a,b\n1,2\n")
    with pytest.raises(DatasetFormatError, match="no label column"):
        load_csv(tmp_path / "nolabel.csv")
    (tmp_path / "text.csv").write_text("a,b,y\n1,x,0\n2,z,1\n")
    with pytest.raises(DatasetFormatError, match="non-numeric feature"):
        load_csv(tmp_path / "text.csv")
    (tmp_path / "junk.npz").write_text("nope")
    with pytest.raises(DatasetFormatError, match="not a readable .npz"):
        load_npz(tmp_path / "junk.npz")


def test_split_protocol_is_anollm_semi_supervised():
    ds = load_wbc()
    sp = make_split(ds, 0)
    normals = np.flatnonzero(ds.y == 0)
    expected_train = np.random.RandomState(0).permutation(normals)[: len(normals) // 2]
    np.testing.assert_array_equal(sp.X_train, ds.X[expected_train])
    assert len(sp.X_train) == 178 and len(sp.y_test) == 200 and sp.y_test.sum() == 21
    assert not set(expected_train) & set(sp.test_rows.tolist())
    assert not np.array_equal(make_split(ds, 1).X_train, sp.X_train)


def test_max_test_rows_is_stratified_and_keeps_both_classes():
    ds = load_wbc()
    sp = make_split(ds, 0, max_test_rows=40)
    assert len(sp.y_test) == 40 and 1 <= sp.y_test.sum() <= 39
    assert sp.y_test.sum() == round(40 * 21 / 200)
    tiny = make_split(ds, 0, max_test_rows=2)
    assert sorted(tiny.y_test.tolist()) == [0, 1]
    with pytest.raises(ValueError, match=">= 2"):
        make_split(ds, 0, max_test_rows=1)


def test_record_to_sample():
    sp = make_split(load_wbc(), 0, max_test_rows=10)
    recs = split_records(sp)
    s = record_to_sample(recs[0])
    assert s.id == f"wbc/seed0/row{sp.test_rows[0]}"
    assert s.input.startswith("mean radius = ")
    assert s.target == ("anomaly" if sp.y_test[0] else "normal")
    assert s.metadata == {
        "dataset": "wbc",
        "seed": 0,
        "test_index": 0,
        "row": int(sp.test_rows[0]),
        "label": int(sp.y_test[0]),
    }
    unnamed = record_to_sample({**recs[0], "columns": None, "values": [1.0, 2.5]})
    assert unnamed.input == "x0 = 1, x1 = 2.5"


@pytest.mark.parametrize(
    "patch, message",
    [({"label": 3}, "not 0/1"), ({"columns": ["a"]}, "column names")],
)
def test_bad_records_are_named(patch, message):
    rec = split_records(make_split(load_wbc(), 0, max_test_rows=4))[0]
    with pytest.raises(DatasetFormatError, match=message):
        record_to_sample({**rec, **patch})
    missing = dict(rec)
    del missing["label"]
    with pytest.raises(DatasetFormatError, match="missing 'label'"):
        record_to_sample(missing)


def test_dataset_names_expand_and_unknown_fails():
    assert expand_datasets("all") == ["wbc", *ADBENCH_SETS]
    assert expand_datasets("adbench,wbc")[-1] == "wbc" and len(expand_datasets("adbench")) == 16
    with pytest.raises(ValueError, match="unknown dataset 'iris'"):
        resolve_dataset("iris")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        resolve_dataset("/nonexistent/x.npz")


def test_adbench_data_loads_all_sixteen(data_dir):
    shapes = {name: resolve_dataset(name).X.shape for name in ADBENCH_SETS}
    assert shapes["2_annthyroid"] == (7200, 6) and shapes["45_wine"] == (129, 13)
