"""What a run records about the code: the harness's git record agrees with inspect's revision."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from harness import records
from tests.conftest import REPO_ROOT


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(
        repo,
        "-c",
        "user.email=t@t",
        "-c",
        "user.name=t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    (repo / "tracked.txt").write_text("a\n")
    _git(repo, "add", "tracked.txt")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "y")
    monkeypatch.setattr(records, "_REPO_ROOT", repo)
    monkeypatch.chdir(repo)
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)  # inspect skips git under pytest
    return repo


@pytest.mark.parametrize("change", [None, "untracked", "modified", "staged"])
def test_the_dirty_flag_counts_what_git_status_shows(repo, change):
    # inspect's `revision.dirty` is `git status --porcelain` non-empty: untracked files count
    if change == "untracked":
        (repo / "new.txt").write_text("b\n")
    elif change == "modified":
        (repo / "tracked.txt").write_text("changed\n")
    elif change == "staged":
        (repo / "tracked.txt").write_text("changed\n")
        _git(repo, "add", "tracked.txt")
    records.git_revision.cache_clear()
    try:
        assert records.git_revision()["dirty"] is (change is not None)
    finally:
        records.git_revision.cache_clear()


def test_a_run_records_the_same_dirty_flag_as_inspects_revision(tmp_path):
    # issue 31 item 13: one run, two records of the checkout (inspect's and the harness's)
    fixture = REPO_ROOT / "tests" / "harness" / "fixtures" / "arith_task.py"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    command = [sys.executable, "-m", "harness.cli", "eval", f"task={fixture}@arith", "n=1"]
    command += ["model=scripted/x", "model_arg.reply=one", f"log_dir={tmp_path}", "display=none"]
    subprocess.run(command, cwd=REPO_ROOT, env=env, check=True, capture_output=True, timeout=300)
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info, header_only=True)
    if log.eval.revision is None and not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout: inspect records no revision")
    assert log.eval.revision is not None, "inspect recorded no revision"
    ours = log.eval.metadata["harness_git"]
    assert ours["commit"].startswith(log.eval.revision.commit)
    assert ours["dirty"] == log.eval.revision.dirty
