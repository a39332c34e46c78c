"""`harness data list | pull <task>`: where each task's data is found, and fetching it.

A task declares its external data in `tasks/<name>/dataset.py` as `DATA: tuple[DataSpec, ...]`
(a local path under HARNESS_DATA_DIR and/or a pinned hub dataset). Tasks without `DATA` use only
bundled or generated data.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from harness.data import DATA_DIR_ENV, content_hash, data_dir
from harness.hub import DataSpec, HubDataset, HubUnavailableError, materialise, materialised_dir

__all__ = ["DataStatus", "data_status", "pull", "run_data_command", "task_data"]

USAGE = """harness data list [task ...]
harness data pull <task>
  list: per task, each dataset it reads, where it is found (HARNESS_DATA_DIR, the Hugging Face
  cache, a pulled hub copy) with its content hash, or how to fetch it when missing.
  pull: download the task's pinned hub datasets and copy them into
  $HARNESS_DATA_DIR/hub/<owner>/<name>/<revision>/ (needs the hub: unset HF_HUB_OFFLINE)."""


def task_data(names: list[str]) -> dict[str, tuple[DataSpec, ...]]:
    """`DATA` of each task's dataset module (empty for tasks that declare none)."""
    out: dict[str, tuple[DataSpec, ...]] = {}
    for name in names:
        try:
            module = importlib.import_module(f"tasks.{name}.dataset")
        except ModuleNotFoundError as exc:
            if exc.name != f"tasks.{name}.dataset":
                raise
            out[name] = ()
            continue
        out[name] = tuple(getattr(module, "DATA", ()))
    return out


@dataclass(frozen=True)
class DataStatus:
    task: str
    spec: DataSpec
    where: str  #: "" when missing
    path: Path | None
    content_hash: str
    fetch: str  #: how to get it when missing ("" when present)


def _hub_cached(ds: HubDataset) -> Path | None:
    """The hub-cache snapshot of `ds` when present (never goes to the network)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(
            snapshot_download(
                ds.repo_id, repo_type="dataset", revision=ds.revision, local_files_only=True
            )
        )
    except (LocalEntryNotFoundError, OSError):
        return None


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:12]


def data_status(task: str, spec: DataSpec) -> DataStatus:
    """Where the task finds `spec`, in the order it looks: the hub cache, a pulled hub copy,
    HARNESS_DATA_DIR."""
    if spec.hub is not None:
        cached = _hub_cached(spec.hub)
        if cached is not None:
            return DataStatus(task, spec, "HF cache", cached, content_hash(cached), "")
        pulled = materialised_dir(spec.hub)
        if pulled is not None and pulled.is_dir():
            return DataStatus(task, spec, "pulled hub copy", pulled, content_hash(pulled), "")
    root = data_dir()
    if spec.local is not None and root is not None and (root / spec.local).exists():
        path = root / spec.local
        return DataStatus(task, spec, DATA_DIR_ENV, path, content_hash(path), "")
    fetch = f"harness data pull {task}" if spec.hub is not None else spec.how_to_get
    return DataStatus(task, spec, "", None, "", fetch)


def _list(tasks: dict[str, tuple[DataSpec, ...]], console: Console) -> int:
    """Plain lines (they stay readable in a README and in 80 columns)."""

    def out(text: str) -> None:
        console.print(text, soft_wrap=True, highlight=False, markup=False)

    out(f"{DATA_DIR_ENV}={data_dir() or '(unset)'}")
    for task, specs in tasks.items():
        if not specs:
            out(f"{task}: bundled or generated data only")
            continue
        out(f"{task}:")
        for spec in specs:
            s = data_status(task, spec)
            hub = ""
            if spec.hub is not None:
                rev = spec.hub.revision[:7] if spec.hub.pinned else f"{spec.hub.revision}, unpinned"
                hub = f"  [hub {spec.hub.repo_id}@{rev}]"
            out(f"  {spec.option}  {spec.name}{hub}")
            if s.path is not None:
                line = (
                    f"    present  {_display(s.path)}  ({s.where}, content {s.content_hash[:19]})"
                )
                out(line)
            else:
                out(f"    missing  fetch: {s.fetch}")
    return 0


def _display(path: Path | None) -> str:
    """The path under $HARNESS_DATA_DIR or $HF_HUB_CACHE when it is there (no machine paths)."""
    from huggingface_hub import constants

    if path is None:
        return ""
    roots = [("$HARNESS_DATA_DIR", data_dir()), ("$HF_HUB_CACHE", Path(constants.HF_HUB_CACHE))]
    for name, root in roots:
        if root is not None and path.is_relative_to(root):
            return f"{name}/{path.relative_to(root).as_posix()}"
    return str(path)


def pull(task: str, specs: tuple[DataSpec, ...], console: Console) -> int:
    """Materialise each pinned hub dataset of `task` into HARNESS_DATA_DIR/hub/."""
    hub_specs = [s for s in specs if s.hub is not None]
    for spec in specs:
        if spec.hub is None:
            console.print(f"{task} {spec.option}: no hub dataset; {spec.how_to_get}")
    if not hub_specs:
        raise HubUnavailableError(f"task {task!r} has no Hugging Face datasets to pull")
    for spec in hub_specs:
        assert spec.hub is not None
        target = materialise(spec.hub)
        console.print(
            f"{task} {spec.option}: {spec.hub.uri} → {target} (sha256 {_short(content_hash(target))})",
            highlight=False,
        )
    return 0


def run_data_command(args: list[str], task_names: list[str], console: Console) -> int:
    """`harness data list [task ...]` / `harness data pull <task>`; ValueError on bad use."""
    if not args or args[0] not in ("list", "pull"):
        raise ValueError(f"expected `list` or `pull`\n{USAGE}")
    action, rest = args[0], args[1:]
    unknown = [t for t in rest if t not in task_names]
    if unknown:
        raise ValueError(f"unknown task(s) {unknown}; tasks: {', '.join(task_names)}")
    if action == "list":
        return _list(task_data(rest or task_names), console)
    if len(rest) != 1:
        raise ValueError("harness data pull takes one task name")
    return pull(rest[0], task_data(rest)[rest[0]], console)
