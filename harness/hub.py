"""Datasets on the Hugging Face hub, pinned to a revision, read through `datasets`.

One code path online and offline: `huggingface_hub.snapshot_download` fetches the files a
dataset's config and split need into the hub cache (`HF_HUB_CACHE`), or, with
`HF_HUB_OFFLINE=1`, finds them there; `datasets.load_dataset` then reads those files with its
packaged builder (parquet, json, csv). A local file or folder goes through the same reader.
`harness data pull <task>` copies a snapshot's files into `HARNESS_DATA_DIR/hub/<repo>/<revision>/`
(`materialised_dir`), which the resolver tries when the hub cache lacks them.

Sources are written `hf://<owner>/<name>[@<revision>][?config=<c>&split=<s>]` or as a path.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from harness.data import DatasetNotFoundError, content_hash, data_dir, data_path

__all__ = [
    "DataSpec",
    "DatasetFormatError",
    "HubDataset",
    "HubUnavailableError",
    "Records",
    "hub_snapshot",
    "materialise",
    "materialised_dir",
    "parse_source",
    "read_json_records",
    "read_records",
    "resolve_records",
]

logger = logging.getLogger(__name__)

_COMMIT = re.compile(r"[0-9a-f]{40}")
_BUILDERS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv"}
HUB_PREFIX = "hf://"


class DatasetFormatError(ValueError):
    """A data file `datasets` cannot read; the message names the file."""


class HubUnavailableError(DatasetNotFoundError):
    """The hub dataset is neither in the Hugging Face cache nor reachable (offline)."""


@dataclass(frozen=True)
class HubDataset:
    """A dataset on the Hugging Face hub at one revision, one config and one split.

    `revision` is a 40-hex commit when `pin_source` names where the pin was read; an unpinned
    dataset (`revision="main"`) logs a warning each time it is read, since its content can move.
    `split=None` takes the repository's only split (an error lists them when there are several).
    """

    repo_id: str
    revision: str = "main"
    config: str | None = None
    split: str | None = None
    pin_source: str = ""

    @property
    def pinned(self) -> bool:
        return bool(_COMMIT.fullmatch(self.revision))

    @property
    def uri(self) -> str:
        query = {k: v for k, v in (("config", self.config), ("split", self.split)) if v}
        return f"{HUB_PREFIX}{self.repo_id}@{self.revision}" + (
            f"?{urlencode(query)}" if query else ""
        )


@dataclass(frozen=True)
class DataSpec:
    """One piece of data a task reads: where it lives locally and on the hub."""

    name: str  #: what it is, e.g. "GSM8K test"
    option: str  #: the task argument that selects it, e.g. "dataset=gsm8k"
    local: str | None  #: path under HARNESS_DATA_DIR (None: hub only)
    hub: HubDataset | None  #: None: no Hugging Face copy is known
    how_to_get: str


@dataclass
class Records:
    """Rows read through `datasets`, with where they came from and their content hash."""

    rows: list[dict[str, Any]]
    source: str
    content_hash: str
    files: tuple[Path, ...] = field(default_factory=tuple)
    #: per row, where it came from for error messages: `file:line` (JSON lines), `file row i`
    locations: list[str] = field(default_factory=list)

    def numbered(self) -> list[tuple[str, dict[str, Any]]]:
        """(location, row) pairs."""
        return list(zip(self.locations, self.rows, strict=True))


def parse_source(value: str, default: HubDataset | None = None) -> HubDataset | Path:
    """`hf://owner/name[@rev][?config=&split=]` → HubDataset (missing parts from `default` when
    it names the same repository), anything else → a local Path."""
    if not value.startswith(HUB_PREFIX):
        return Path(value).expanduser()
    body, _, query = value[len(HUB_PREFIX) :].partition("?")
    repo_id, _, revision = body.partition("@")
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ValueError(f"hub dataset {value!r}: expected hf://<owner>/<name>[@<revision>]")
    params = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=False).items()}
    unknown = set(params) - {"config", "split"}
    if unknown:
        raise ValueError(f"hub dataset {value!r}: unknown parameter(s) {sorted(unknown)}")
    base = default if default is not None and default.repo_id == repo_id else HubDataset(repo_id)
    return replace(
        base,
        revision=revision or base.revision,
        config=params.get("config", base.config),
        split=params.get("split", base.split),
        pin_source=base.pin_source if (revision or base.revision) == base.revision else "",
    )


# ----------------------------------------------------------------- hub files
def _card_configs(readme: Path) -> dict[str, dict[str, list[str]]]:
    """config name → split → path patterns, from the dataset card's YAML `configs:`."""
    import yaml

    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    header = text.split("---", 2)[1] if text.count("---") >= 2 else ""
    card = yaml.safe_load(header) or {}
    out: dict[str, dict[str, list[str]]] = {}
    for entry in card.get("configs") or []:
        name = str(entry.get("config_name", "default"))
        files = entry.get("data_files")
        splits: dict[str, list[str]] = {}
        if isinstance(files, str):
            splits["train"] = [files]
        elif isinstance(files, list):
            for item in files:
                if isinstance(item, str):
                    splits.setdefault("train", []).append(item)
                else:
                    paths = item.get("path")
                    splits.setdefault(str(item.get("split", "train")), []).extend(
                        [paths] if isinstance(paths, str) else list(paths)
                    )
        elif isinstance(files, dict):
            for split, paths in files.items():
                splits[str(split)] = [paths] if isinstance(paths, str) else list(paths)
        if entry.get("data_dir") and not splits:
            splits["*"] = [f"{entry['data_dir']}/**"]
        out[name] = splits
    return out


def _pick(choices: Sequence[str], wanted: str | None, what: str, where: str) -> str:
    if wanted is not None:
        if wanted not in choices:
            raise DatasetNotFoundError(f"{where}: no {what} {wanted!r}; it has {sorted(choices)}")
        return wanted
    if len(choices) != 1:
        raise DatasetNotFoundError(
            f"{where}: name the {what} (?{what}=...); it has {sorted(choices)}"
        )
    return choices[0]


def _download(ds: HubDataset, allow_patterns: list[str] | None) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled

    try:
        return Path(
            snapshot_download(
                ds.repo_id, repo_type="dataset", revision=ds.revision, allow_patterns=allow_patterns
            )
        )
    except (LocalEntryNotFoundError, OfflineModeIsEnabled, OSError) as exc:
        from huggingface_hub import constants

        offline = " (HF_HUB_OFFLINE=1)" if constants.HF_HUB_OFFLINE else ""
        raise HubUnavailableError(
            f"{ds.uri} is not in the Hugging Face cache ({constants.HF_HUB_CACHE}) and the hub "
            f"cannot be reached{offline}: {type(exc).__name__}"
        ) from exc


def hub_snapshot(ds: HubDataset) -> tuple[Path, list[str]]:
    """The local folder holding `ds`'s files (hub cache, downloading what is missing when online,
    else the `materialised_dir` copy) and the repo-relative patterns of its config and split."""
    if not ds.pinned:
        logger.warning(
            "%s is not pinned to a commit: its content may change; pass @<commit> to pin it",
            ds.uri,
        )
    try:
        root = _download(ds, ["README.md"])
        fallback_error: HubUnavailableError | None = None
    except HubUnavailableError as exc:
        local = materialised_dir(ds)
        if local is None or not local.is_dir():
            raise
        root, fallback_error = local, exc
    readme = root / "README.md"
    configs = _card_configs(readme) if readme.is_file() else {}
    if configs:
        config = _pick(list(configs), ds.config, "config", ds.uri)
        split = _pick(list(configs[config]), ds.split, "split", f"{ds.uri} config {config}")
        patterns = configs[config][split]
    else:
        patterns = []  # no card configs: `datasets` infers the splits from the file names
    if fallback_error is None:
        root = _download(ds, ["README.md", *patterns] if patterns else None)
    return root, patterns


def _files(root: Path, patterns: list[str], ds: HubDataset) -> list[Path]:
    relative = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.suffix in _BUILDERS and not p.name.startswith(".")
    )
    if patterns:
        chosen = [r for r in relative if any(fnmatch.fnmatch(r, pat) for pat in patterns)]
    else:
        from datasets.data_files import get_data_patterns

        inferred = get_data_patterns(str(root))
        split = _pick(list(inferred), ds.split, "split", ds.uri)
        chosen = [r for r in relative if any(fnmatch.fnmatch(r, p) for p in inferred[split])]
    if not chosen:
        raise DatasetNotFoundError(
            f"{ds.uri}: no data files in {root} match {patterns or 'the split'}"
        )
    return [root / r for r in chosen]


def materialised_dir(ds: HubDataset) -> Path | None:
    """`HARNESS_DATA_DIR/hub/<owner>/<name>/<revision>` (None when no data dir is set)."""
    root = data_dir()
    return None if root is None else root / "hub" / ds.repo_id / ds.revision


def materialise(ds: HubDataset) -> Path:
    """Copy `ds`'s files (README and the config's data files) from the hub into
    `materialised_dir(ds)`; online machines (offline it raises `HubUnavailableError`)."""
    target = materialised_dir(ds)
    if target is None:
        raise DatasetNotFoundError("HARNESS_DATA_DIR is unset: set it to the data directory")
    root, patterns = hub_snapshot(ds)
    if root == target:
        return target
    files = _files(root, patterns, ds)
    readme = root / "README.md"
    for file in [readme, *files] if readme.is_file() else files:
        dest = target / file.relative_to(root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, dest)  # resolves the cache's blob symlinks
    return target


# ----------------------------------------------------------------- reading
def _load(files: list[Path], where: str, *, decode_images: bool) -> list[dict[str, Any]]:
    import datasets

    kinds = {_BUILDERS.get(f.suffix) for f in files}
    if None in kinds or len(kinds) != 1:
        raise DatasetNotFoundError(
            f"{where}: cannot read {[f.name for f in files]} (expected one of "
            f"{sorted(_BUILDERS)}, all of one kind)"
        )
    (builder,) = kinds
    try:
        ds = datasets.load_dataset(
            builder, data_files={"rows": [str(f) for f in files]}, split="rows"
        )
    except Exception as exc:  # noqa: BLE001 - pyarrow/datasets raise many types; name the file
        for file in files if builder == "json" else []:
            read_json_records(file)  # names the first bad line (datasets' own errors do not)
        raise DatasetFormatError(f"{where}: not readable as {builder} ({exc})") from None
    if not decode_images:
        for name, feature in ds.features.items():
            if isinstance(feature, datasets.Image):
                ds = ds.cast_column(name, datasets.Image(decode=False))
    return ds.to_list()


def _json_lines(lines: list[str]) -> list[int] | None:
    """Line numbers of the non-blank lines when `lines` are JSON lines (None: one JSON document,
    a list: the first non-blank line starts with `[`)."""
    numbers = [n for n, line in enumerate(lines, 1) if line.strip()]
    if numbers and lines[numbers[0] - 1].lstrip().startswith("["):
        return None
    return numbers


def read_json_records(file: Path) -> list[tuple[str, dict[str, Any]]]:
    """(location, record) pairs of a local JSON-lines file or JSON list, as written (no
    `datasets` schema coercion): `file:line` for JSON lines, `file row i` for a list. A line or
    document that is not JSON, or a record that is not an object, raises `DatasetFormatError`
    naming the file and line."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(f"{file}: not UTF-8 text (byte {exc.start})") from None
    numbers = _json_lines(lines)
    if numbers is None:
        try:
            document = json.loads("\n".join(lines))
        except json.JSONDecodeError as exc:
            raise DatasetFormatError(f"{file}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        if not isinstance(document, list):
            raise DatasetFormatError(f"{file}: expected a JSON list of records")
        numbered = [(f"{file} row {i}", record) for i, record in enumerate(document)]
    else:
        numbered = []
        for n in numbers:
            try:
                numbered.append((f"{file}:{n}", json.loads(lines[n - 1])))
            except json.JSONDecodeError as exc:
                raise DatasetFormatError(f"{file}:{n}: invalid JSON ({exc.msg})") from None
    for where, record in numbered:
        if not isinstance(record, dict):
            raise DatasetFormatError(
                f"{where}: not a JSON object (a {type(record).__name__} record)"
            )
    return numbered


def _locations(files: Sequence[Path], n_rows: int, root: Path | None, prefix: str) -> list[str]:
    """`file:line` per row for JSON lines, else `file row i` (files named under `root`)."""

    def name(file: Path) -> str:
        return prefix + (file.relative_to(root).as_posix() if root else str(file))

    out: list[str] = []
    for file in files:
        numbers = (
            _json_lines(file.read_text(encoding="utf-8").splitlines())
            if file.suffix in (".jsonl", ".json")
            else None
        )
        if numbers is None:
            break
        out += [f"{name(file)}:{n}" for n in numbers]
    if len(out) == n_rows:
        return out
    out = []
    for file in files:
        if len(files) > 1 or file.suffix != ".parquet":
            break
        out = [f"{name(file)} row {i}" for i in range(n_rows)]
    return out or [f"{prefix or files[0].parent} row {i}" for i in range(n_rows)]


def read_records(
    source: HubDataset | str | Path,
    *,
    default: HubDataset | None = None,
    decode_images: bool = False,
) -> Records:
    """Rows of a hub dataset (`HubDataset` or an `hf://` string) or a local JSON/JSONL/Parquet/
    CSV file or folder, read with `datasets`. Images stay `{"bytes", "path"}` unless
    `decode_images`."""
    if isinstance(source, str):
        source = parse_source(source, default)
    if isinstance(source, HubDataset):
        root, patterns = hub_snapshot(source)
        files = _files(root, patterns, source)
        label = source.uri + ("" if source.pinned else " (unpinned)")
        where, prefix, base = f"{source.uri} ({root})", f"{source.uri} ", root
    else:
        path = Path(source)
        if not path.exists():
            raise DatasetNotFoundError(f"data file or folder not found: {path}")
        files = (
            sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _BUILDERS)
            if path.is_dir()
            else [path]
        )
        if not files:
            raise DatasetNotFoundError(f"{path}: no {'/'.join(sorted(_BUILDERS))} files")
        label = where = str(path)
        prefix, base = "", None
    rows = _load(files, where, decode_images=decode_images)
    return Records(
        rows, label, content_hash(*files), tuple(files), _locations(files, len(rows), base, prefix)
    )


def resolve_records(
    value: str | None,
    spec: DataSpec,
    *,
    task: str,
    decode_images: bool = False,
) -> Records | Path:
    """What a task reads for `spec`: `value` (an `hf://` id or a path) when given; otherwise
    the pinned hub dataset (hub cache, a download, or its `harness data pull` copy) and, when
    that is unavailable offline, the local file under HARNESS_DATA_DIR — returned as a Path for
    the task's own reader. Missing everywhere: one error naming every place looked in."""
    if value:
        if not value.startswith(HUB_PREFIX) and not Path(value).expanduser().exists():
            raise DatasetNotFoundError(
                f"{spec.name} data not found: {value}. How to obtain it: {spec.how_to_get}"
            )
        return read_records(value, default=spec.hub, decode_images=decode_images)
    problems = []
    if spec.hub is not None:
        try:
            return read_records(spec.hub, decode_images=decode_images)
        except HubUnavailableError as exc:
            problems.append(str(exc))
    if spec.local is not None:
        try:
            return data_path(spec.local, how_to_get=spec.how_to_get)
        except DatasetNotFoundError as exc:
            problems.append(str(exc))
    pull = f" Online: `harness data pull {task}`." if spec.hub is not None else ""
    raise DatasetNotFoundError(" ".join(problems) + pull)
