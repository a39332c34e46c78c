"""Run selection: which log of a configuration the report uses ("latest complete run")."""

from __future__ import annotations

import os
import shutil

from reports import Run, read_runs, select_runs


def _run(path: str, created: str, completed: str, modified_ns: int, status: str = "success") -> Run:
    return Run(
        path=path,
        task="qa_toy",
        model="scripted/weak",
        model_roles={},
        task_args={"method": "plain"},
        status=status,
        created=created,
        eval_id=path,
        total_samples=30,
        completed_samples=30,
        completed=completed,
        modified_ns=modified_ns,
    )


def test_runs_started_and_finished_in_one_second_are_ordered_by_write_time() -> None:
    """inspect stamps created/completed_at to the second and names logs with a random id: two
    runs of one configuration within a second tie on both times, and the path alone would pick
    either (the flaky test of issue #18). The file written last is the latest run."""
    t = "2026-11-30T20:00:00+00:00"
    older = _run("2026-11-30T20-00-00+00-00_qa-toy_zzzz.eval", t, t, modified_ns=1_000)
    newer = _run("2026-11-30T20-00-00+00-00_qa-toy_aaaa.eval", t, t, modified_ns=2_000)
    for order in ([older, newer], [newer, older]):
        selected, skipped = select_runs(order)
        assert [r.path for r in selected] == [newer.path]
        assert [s.path for s in skipped] == [older.path]
        assert skipped[0].reason == f"superseded by newer complete run {newer.name}"
    # Times decide before the write time; an unfinished newer run never wins.
    later = _run("x_later.eval", "2026-11-30T20:00:01+00:00", t, modified_ns=0)
    assert select_runs([newer, later])[0] == [later]
    crashed = _run("x_crash.eval", "2099-01-01T00:00:00+00:00", "", 9_999, status="started")
    assert select_runs([newer, crashed])[0] == [newer]


def test_grid_cells_differing_only_in_model_args_or_generation_are_all_kept() -> None:
    """A grid over `model_arg.dtype` or `temperature` (executor=ray) gives runs of one task, model
    and arguments: each cell is its own run, labelled by what differs; a re-run of one cell
    still supersedes it."""
    t = "2026-11-30T20:00:00+00:00"
    cells = []
    for i, (dtype, temp) in enumerate([("float32", 0.0), ("bfloat16", 0.0), ("float32", 0.7)]):
        run = _run(f"cell{i}.eval", t, t, modified_ns=i)
        run.settings = {"dtype": dtype, "max_tokens": 64, "temperature": temp}
        cells.append(run)
    rerun = _run("cell0-again.eval", "2026-11-30T21:00:00+00:00", t, modified_ns=9)
    rerun.settings = dict(cells[0].settings)
    selected, skipped = select_runs([*cells, rerun])
    assert sorted(r.path for r in selected) == ["cell0-again.eval", "cell1.eval", "cell2.eval"]
    assert [(s.path, s.reason) for s in skipped] == [
        ("cell0.eval", "superseded by newer complete run cell0-again.eval")
    ]
    labels = {r.path: r.model_label for r in selected}
    assert labels == {  # max_tokens is the same in every cell: not named
        "cell0-again.eval": "scripted/weak [dtype=float32, temperature=0.0]",
        "cell1.eval": "scripted/weak [dtype=bfloat16, temperature=0.0]",
        "cell2.eval": "scripted/weak [dtype=float32, temperature=0.7]",
    }
    # a single run keeps the plain model name
    assert select_runs([cells[1]])[0][0].model_label == "scripted/weak"


def test_read_runs_records_the_file_write_time(toy_logs, tmp_path) -> None:
    root, paths = toy_logs
    copy = tmp_path / "logs"
    shutil.copytree(root, copy)
    old, new = copy / paths["old_weak"].name, copy / paths["weak"].name
    # Make the older run's file look newer than the newer run's: the selection must follow.
    st = new.stat()
    os.utime(old, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    runs, _ = read_runs(copy)
    by_name = {r.name: r for r in runs}
    assert by_name[old.name].modified_ns == old.stat().st_mtime_ns
    assert by_name[new.name].modified_ns == new.stat().st_mtime_ns
    # Same second for both (as when the machine is fast): the file written last wins.
    a, b = by_name[old.name], by_name[new.name]
    a.created, a.completed = b.created, b.completed
    selected, skipped = select_runs(runs)
    assert old.name in {r.name for r in selected}
    assert any(s.path == new.name and "superseded" in s.reason for s in skipped)
