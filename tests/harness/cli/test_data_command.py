"""`harness data list | pull`: per task what is present, where, its hash, and how to fetch the rest;
pull materialises hub datasets into HARNESS_DATA_DIR (here from a filled hub cache, offline)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from harness.cli.data_command import run_data_command, task_data
from harness.hub import HubUnavailableError

TASKS = ["anchor", "dispat", "ood_hallucination"]
CSQA = {
    "id": "q1",
    "question": "Where is milk kept cold?",
    "choices": {"label": ["A", "B"], "text": ["oven", "fridge"]},
    "answerKey": "B",
}


def _run(args: list[str]) -> str:
    buffer = io.StringIO()
    run_data_command(args, TASKS, Console(file=buffer, width=200))
    return buffer.getvalue()


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "data"
    (root / "gsm8k").mkdir(parents=True)
    (root / "gsm8k" / "test.jsonl").write_text(json.dumps({"question": "q", "answer": "#### 1"}))
    monkeypatch.setenv("HARNESS_DATA_DIR", str(root))
    return root


def test_list_shows_present_missing_and_fetch_commands(hub_cache, data: Path) -> None:
    (csqa,) = [s.hub for s in task_data(["ood_hallucination"])["ood_hallucination"][1:2]]
    assert csqa is not None
    hub_cache.fill(
        csqa.repo_id, {"data/validation-0.parquet": hub_cache.parquet([CSQA])}, commit=csqa.revision
    )
    out = _run(["list"])
    assert "anchor: bundled or generated data only" in out
    gsm = out[out.index("dataset=gsm8k") :]
    assert "present  $HARNESS_DATA_DIR/gsm8k/test.jsonl  (HARNESS_DATA_DIR, content sha256:" in gsm
    assert "[hub openai/gsm8k@cc7b047]" in gsm
    csqa_part = out[out.index("dataset=csqa") :]
    assert "(HF cache, content sha256:" in csqa_part.splitlines()[1]
    aqua = out[out.index("dataset=aqua") :].splitlines()
    assert "[hub deepmind/aqua_rat@main, unpinned]" in aqua[0]
    assert aqua[1].strip() == "missing  fetch: harness data pull ood_hallucination"
    adbench = out[out.index("ADBench") :].splitlines()
    assert adbench[1].strip().startswith("missing  fetch: copy the ADBench classical .npz")
    assert _run(["list", "anchor"]).strip().endswith("anchor: bundled or generated data only")


def test_pull_materialises_then_list_reports_the_copy(hub_cache, data: Path) -> None:
    specs = task_data(["ood_hallucination"])["ood_hallucination"]
    with pytest.raises(HubUnavailableError, match="openai/gsm8k"):  # offline, nothing cached
        _run(["pull", "ood_hallucination"])
    for spec in specs:  # what a download would have left in the hub cache
        assert spec.hub is not None
        commit = spec.hub.revision if spec.hub.pinned else hub_cache.COMMIT
        hub_cache.fill(
            spec.hub.repo_id, {"data/x-0.parquet": hub_cache.parquet([CSQA])}, commit=commit
        )
    # the card-less repos hold one split each, so the split names in DATA must match the files
    for spec in specs:
        assert spec.hub is not None
        repo = hub_cache.root / ("datasets--" + spec.hub.repo_id.replace("/", "--"))
        snapshot = next((repo / "snapshots").iterdir())
        (snapshot / "data" / "x-0.parquet").rename(
            snapshot / "data" / f"{spec.hub.split}-0.parquet"
        )
    out = _run(["pull", "ood_hallucination"])
    assert out.count("→") == 3
    copy = data / "hub" / "openai" / "gsm8k" / "cc7b047b6e5bb11b4f1af84efc572db110a51b3c"
    assert (copy / "data" / "test-0.parquet").is_file()
    for path in sorted(hub_cache.root.rglob("*"), reverse=True):  # the hub cache goes away
        path.unlink() if not path.is_dir() or path.is_symlink() else path.rmdir()
    out = _run(["list", "ood_hallucination"])
    assert "present  $HARNESS_DATA_DIR/hub/tau/commonsense_qa/94630fe" in out


def test_bad_use_and_tasks_without_hub_data(hub_cache, data: Path) -> None:
    with pytest.raises(ValueError, match="expected `list` or `pull`"):
        _run([])
    with pytest.raises(ValueError, match=r"unknown task\(s\) \['nope'\]"):
        _run(["list", "nope"])
    with pytest.raises(HubUnavailableError, match="no Hugging Face datasets to pull"):
        _run(["pull", "dispat"])


def test_cli_pull_offline_is_one_clear_line(hub_cache, data: Path, capsys) -> None:
    from harness.cli import main

    assert main(["data", "pull", "ood_hallucination"]) == 1
    err = capsys.readouterr().err
    assert "HubUnavailableError" in err and "not in the Hugging Face cache" in err
    assert "Traceback" not in err
