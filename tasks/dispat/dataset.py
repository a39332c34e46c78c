"""Tabular anomaly datasets for dispat: loaders per source format, the AnoLLM split protocol, and
``record_to_sample`` (one test row -> one inspect Sample).

Source formats, each validated the same way (2-D finite numeric ``X``, binary ``y`` with both
classes, enough normal rows to split):

- ADBench ``.npz`` (arrays ``X``, ``y``): the 16 classical sets in
  ``HARNESS_DATA_DIR/adbench_classical``;
- ODDS ``.mat`` (MATLAB arrays ``X``, ``y``);
- ``.csv`` with a header and a label column named ``y``, ``label``, ``outlier`` or ``is_anomaly``
  (every other column is a feature, and its header is the column name used in serialisation);
- ``.parquet`` / ``.jsonl`` files and hub datasets (``hf://<owner>/<name>[@revision]``), read
  through `datasets` (``harness.hub``), with the CSV label-column rule;
- ``wbc``: bundled, built from scikit-learn's ``load_breast_cancer`` in the ODDS/AnoLLM "wbc"
  recipe (357 benign = normal, 21 malignant drawn with ``RandomState(0).choice`` = anomalies).
"""

from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from inspect_ai.dataset import Sample

from harness.data import content_hash, data_path, text_hash
from harness.hub import DatasetFormatError, DataSpec
from harness.splits import Side, SourceSplit, SplitName, check_split

ADBENCH_SETS: tuple[str, ...] = (
    "2_annthyroid",
    "4_breastw",
    "6_cardio",
    "14_glass",
    "15_Hepatitis",
    "18_Ionosphere",
    "21_Lymphography",
    "29_Pima",
    "30_satellite",
    "37_Stamps",
    "38_thyroid",
    "39_vertebral",
    "40_vowels",
    "42_WBC",
    "43_WDBC",
    "45_wine",
)
BUNDLED = "wbc"
#: Sets cut from one underlying collection are one source of the dev/test split (splits.yaml):
#: tuning on one of them would have seen the other. Every other set is its own source.
SOURCE_FAMILIES: dict[str, str] = {
    BUNDLED: "breast-cancer-wisconsin-diagnostic",  # sklearn's WDBC, ODDS recipe
    "43_WDBC": "breast-cancer-wisconsin-diagnostic",
    "4_breastw": "breast-cancer-wisconsin-original",
    "42_WBC": "breast-cancer-wisconsin-original",
    "2_annthyroid": "thyroid-disease",
    "38_thyroid": "thyroid-disease",
}
LABEL_COLUMNS: tuple[str, ...] = ("y", "label", "outlier", "is_anomaly")
_ADBENCH_HOW_TO_GET = (
    "copy the ADBench classical .npz files (github.com/Minqi824/ADBench, "
    "adbench/datasets/Classical/) into $HARNESS_DATA_DIR/adbench_classical/"
)
# No Hugging Face copy of ADBench's classical sets could be verified: local files only.
DATA: tuple[DataSpec, ...] = (
    DataSpec(
        "ADBench classical (16 sets)",
        "dataset=adbench|all|<set>",
        "adbench_classical",
        None,
        _ADBENCH_HOW_TO_GET,
    ),
)
_MIN_NORMALS = 4  # two per half, so every model sees at least two training rows


@dataclass(frozen=True)
class TabularDataset:
    name: str
    X: np.ndarray
    y: np.ndarray
    source: str
    content_hash: str
    column_names: list[str] | None = None


@dataclass(frozen=True)
class Split:
    """AnoLLM's semi_supervised split: train = half the normals; test = the rest + all anomalies."""

    dataset: str
    seed: int
    X_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    test_rows: np.ndarray  # row index of each test row in the dataset
    column_names: list[str] | None = field(default=None)


# ---------------------------------------------------------------------------- validation
def validate_arrays(X: Any, y: Any, source: str) -> tuple[np.ndarray, np.ndarray]:
    """Check shapes, finiteness, labels; return float X and int y, or raise naming the source."""
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DatasetFormatError(f"{source}: X is not numeric ({exc})") from None
    y = np.asarray(y).ravel()
    if X.ndim != 2:
        raise DatasetFormatError(f"{source}: X must be 2-D (rows x features), got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise DatasetFormatError(f"{source}: X has zero rows or zero columns (shape {X.shape})")
    if y.shape[0] != X.shape[0]:
        raise DatasetFormatError(f"{source}: X has {X.shape[0]} rows but y has {y.shape[0]} labels")
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        r, c = bad[0]
        raise DatasetFormatError(
            f"{source}: X has {len(bad)} NaN/inf value(s); first at row {r}, column {c}"
        )
    try:
        y_num = y.astype(float)
    except (TypeError, ValueError):
        raise DatasetFormatError(f"{source}: labels y are not numeric") from None
    if not np.isin(y_num, (0.0, 1.0)).all():
        odd = sorted(set(y_num[~np.isin(y_num, (0.0, 1.0))].tolist()))[:5]
        raise DatasetFormatError(f"{source}: labels must be 0 (normal) or 1 (anomaly); found {odd}")
    y_int = y_num.astype(int)
    n_anom, n_norm = int(y_int.sum()), int((y_int == 0).sum())
    if n_anom == 0 or n_norm == 0:
        raise DatasetFormatError(
            f"{source}: a single class ({n_norm} normal, {n_anom} anomalous rows); "
            "anomaly detection needs both"
        )
    if n_norm < _MIN_NORMALS:
        raise DatasetFormatError(
            f"{source}: only {n_norm} normal rows; at least {_MIN_NORMALS} needed"
        )
    return X, y_int


# ---------------------------------------------------------------------------- loaders
def load_npz(path: str | Path, name: str | None = None) -> TabularDataset:
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            keys = set(data.files)
            if not {"X", "y"} <= keys:
                raise DatasetFormatError(
                    f"{path}: expected arrays 'X' and 'y', found {sorted(keys)}"
                )
            X, y = data["X"], data["y"]
    except DatasetFormatError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        # A truncated or corrupted archive fails inside zipfile/zlib (BadZipFile, "Error -3 while
        # decompressing data", a CRC mismatch, EOF), none of which names the file.
        raise DatasetFormatError(
            f"{path}: not a readable .npz file ({type(exc).__name__}: {exc})"
        ) from None
    X, y = validate_arrays(X, y, str(path))
    return TabularDataset(name or path.stem, X, y, str(path), content_hash(path))


def load_mat(path: str | Path, name: str | None = None) -> TabularDataset:
    from scipy.io import loadmat

    path = Path(path)
    try:
        data = loadmat(str(path))
    except Exception as exc:  # scipy raises several types for corrupt files  # noqa: BLE001
        raise DatasetFormatError(f"{path}: not a readable .mat file ({exc})") from None
    keys = {k for k in data if not k.startswith("__")}
    if not {"X", "y"} <= keys:
        raise DatasetFormatError(f"{path}: expected variables 'X' and 'y', found {sorted(keys)}")
    X, y = validate_arrays(data["X"], data["y"], str(path))
    return TabularDataset(name or path.stem, X, y, str(path), content_hash(path))


def load_csv(path: str | Path, name: str | None = None) -> TabularDataset:
    import pandas as pd

    path = Path(path)
    try:
        frame = pd.read_csv(path)
    except Exception as exc:  # noqa: BLE001
        raise DatasetFormatError(f"{path}: not a readable CSV file ({exc})") from None
    return _from_frame(frame, str(path), content_hash(path), name or path.stem)


def load_table(source: str | Path, name: str | None = None) -> TabularDataset:
    """A Parquet / JSON-lines file or a hub dataset (``hf://<owner>/<name>[@revision]
    [?config=&split=]``) read through `datasets` (``harness.hub``); label column as for CSV."""
    import pandas as pd

    from harness.hub import read_records

    records = read_records(str(source))
    frame = pd.DataFrame(records.rows)
    return _from_frame(frame, records.source, records.content_hash, name or dataset_name(source))


def _from_frame(frame: Any, source: str, digest: str, name: str) -> TabularDataset:
    import pandas as pd

    label = next((c for c in frame.columns if str(c).strip().lower() in LABEL_COLUMNS), None)
    if label is None:
        raise DatasetFormatError(
            f"{source}: no label column; expected one named {', '.join(LABEL_COLUMNS)}, "
            f"found {list(frame.columns)[:10]}"
        )
    features = frame.drop(columns=[label])
    non_numeric = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    if non_numeric:
        raise DatasetFormatError(f"{source}: non-numeric feature column(s) {non_numeric[:5]}")
    X, y = validate_arrays(features.to_numpy(dtype=float), frame[label].to_numpy(), source)
    return TabularDataset(name, X, y, source, digest, [str(c) for c in features.columns])


def load_wbc() -> TabularDataset:
    """ODDS "wbc" from scikit-learn's bundled WDBC: 357 benign + 21 seeded malignant rows."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    benign = np.flatnonzero(data.target == 1)
    malignant = np.flatnonzero(data.target == 0)
    chosen = np.random.RandomState(0).choice(malignant, 21, replace=False)
    X = np.vstack([data.data[benign], data.data[chosen]])
    y = np.r_[np.zeros(len(benign), dtype=int), np.ones(21, dtype=int)]
    X, y = validate_arrays(X, y, "sklearn load_breast_cancer (wbc recipe)")
    digest = text_hash(np.ascontiguousarray(X).tobytes().hex() + y.tobytes().hex())
    source = "scikit-learn load_breast_cancer (bundled); ODDS wbc recipe: benign + 21 malignant, RandomState(0)"
    return TabularDataset(BUNDLED, X, y, source, digest, [str(c) for c in data.feature_names])


def resolve_dataset(name: str) -> TabularDataset:
    """``wbc``, an ADBench set name (``42_WBC``), a path to an .npz/.mat/.csv/.parquet/.jsonl
    file, or a hub dataset (``hf://...``, read through `datasets`)."""
    if name == BUNDLED:
        return load_wbc()
    if name in ADBENCH_SETS:
        return load_npz(
            data_path(f"adbench_classical/{name}.npz", how_to_get=_ADBENCH_HOW_TO_GET), name
        )
    if name.startswith("hf://"):
        return load_table(name)
    path = Path(name).expanduser()
    loaders = {
        ".npz": load_npz,
        ".mat": load_mat,
        ".csv": load_csv,
        ".parquet": load_table,
        ".jsonl": load_table,
    }
    if path.suffix.lower() in loaders:
        if not path.is_file():
            raise FileNotFoundError(f"dataset file {path} does not exist")
        return loaders[path.suffix.lower()](path)
    raise ValueError(
        f"unknown dataset {name!r}: use 'wbc', 'all', 'adbench', one of {', '.join(ADBENCH_SETS)}, "
        "a path to an .npz/.mat/.csv/.parquet/.jsonl file, or a hub dataset hf://<owner>/<name>"
    )


def dataset_name(spec: str | Path) -> str:
    """The name a dataset spec loads under (without loading it): a known set's own name, else
    the file's or hub dataset's stem."""
    text = str(spec)
    if text == BUNDLED or text in ADBENCH_SETS:
        return text
    return Path(text.split("?")[0].rstrip("/").split("/")[-1].split("@")[0]).stem


def split_source(name: str) -> str:
    """A dataset's source in the dev/test split: its collection (`SOURCE_FAMILIES`) or its name."""
    return SOURCE_FAMILIES.get(name, name)


@dataclass(frozen=True)
class DatasetSelection:
    """The datasets a run uses under a split, and what its log records about the split."""

    names: list[str]
    data_split: SplitName  # the split the chosen data is on (recorded in the log)
    sides: dict[str, Side]  # each dataset's side
    notes: list[str]  # named datasets on the other side of the split asked for


def select_datasets(spec: str, split: str, frozen: SourceSplit) -> DatasetSelection:
    """`expand_datasets` under a split: ``adbench`` and ``all`` keep the sets on the split's side;
    a dataset named on its own always runs, and when it lies on the other side of a ``dev`` or
    ``test`` split the run says so in a note and records the split its data is on (``dev``,
    ``test``, or ``all`` for a mix), so a log never labels dev data as test."""
    chosen = check_split(split, task="dispat")
    names: list[str] = []
    notes: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if part in ("all", "adbench"):
            group = ([BUNDLED] if part == "all" else []) + list(ADBENCH_SETS)
            names.extend(n for n in group if frozen.keeps(split_source(n), chosen))
        elif part:
            names.append(part)
            note = frozen.off_side_note(
                split_source(dataset_name(part)), chosen, named=f"dataset={part}"
            )
            if note is not None:
                notes.append(note)
    if not names:
        raise ValueError(f"dispat: dataset={spec!r} selects no dataset on split={chosen}")
    names = list(dict.fromkeys(names))
    sides = {n: frozen.side(split_source(dataset_name(n))) for n in names}
    recorded = frozen.recorded_split((split_source(dataset_name(n)) for n in names), chosen)
    return DatasetSelection(names, recorded, sides, notes)


def expand_datasets(spec: str) -> list[str]:
    """``all`` = wbc + the 16 ADBench sets; ``adbench`` = the 16; else a comma-separated list."""
    names: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        names.extend(
            [BUNDLED, *ADBENCH_SETS]
            if part == "all"
            else ADBENCH_SETS
            if part == "adbench"
            else [part]
        )
    if not names:
        raise ValueError("dataset is empty")
    return list(dict.fromkeys(names))


# ---------------------------------------------------------------------------- protocol
def make_split(ds: TabularDataset, seed: int, *, max_test_rows: int | None = None) -> Split:
    """Normals permuted by ``RandomState(seed)``; first floor(n/2) train, rest + anomalies test.

    ``max_test_rows`` (a named deviation, for the LLM budgets) subsamples the test rows
    stratified by label with ``RandomState(seed + 10_000)``, keeping at least one of each class.
    """
    normals = np.flatnonzero(ds.y == 0)
    anomalies = np.flatnonzero(ds.y == 1)
    perm = np.random.RandomState(seed).permutation(normals)
    half = len(perm) // 2
    train, test = perm[:half], np.concatenate([perm[half:], anomalies])
    if max_test_rows is not None and max_test_rows < len(test):
        if max_test_rows < 2:
            raise ValueError(f"max_test_rows must be >= 2, got {max_test_rows}")
        rng = np.random.RandomState(seed + 10_000)
        n_anom = int(
            np.clip(round(max_test_rows * len(anomalies) / len(test)), 1, max_test_rows - 1)
        )
        test = np.concatenate(
            [
                rng.choice(
                    perm[half:], min(max_test_rows - n_anom, len(perm) - half), replace=False
                ),
                rng.choice(anomalies, min(n_anom, len(anomalies)), replace=False),
            ]
        )
    return Split(ds.name, seed, ds.X[train], ds.X[test], ds.y[test], test, ds.column_names)


def split_records(split: Split) -> list[dict[str, Any]]:
    """One record per test row (what ``record_to_sample`` turns into a Sample)."""
    return [
        {
            "dataset": split.dataset,
            "seed": split.seed,
            "test_index": i,
            "row": int(split.test_rows[i]),
            "label": int(split.y_test[i]),
            "values": split.X_test[i].tolist(),
            "columns": split.column_names,
        }
        for i in range(len(split.y_test))
    ]


def record_to_sample(record: dict[str, Any]) -> Sample:
    """A test row as a Sample: input = the raw row as text, target = ``anomaly``/``normal``."""
    for key in ("dataset", "seed", "test_index", "row", "label", "values"):
        if key not in record:
            raise DatasetFormatError(f"dispat record is missing '{key}': {sorted(record)}")
    if record["label"] not in (0, 1):
        raise DatasetFormatError(
            f"dispat record {record['dataset']}/{record['row']}: label {record['label']!r} is not 0/1"
        )
    values = record["values"]
    columns = record.get("columns") or [f"x{j}" for j in range(len(values))]
    if len(columns) != len(values):
        raise DatasetFormatError(
            f"dispat record {record['dataset']}/{record['row']}: {len(values)} values, {len(columns)} column names"
        )
    text = ", ".join(f"{c} = {v:.6g}" for c, v in zip(columns, values, strict=False))
    return Sample(
        id=f"{record['dataset']}/seed{record['seed']}/row{record['row']}",
        input=text,
        target="anomaly" if record["label"] == 1 else "normal",
        metadata={k: record[k] for k in ("dataset", "seed", "test_index", "row", "label")},
    )
