"""A damaged log is never used (issue 31, item 7): its integrity is checked, it is skipped with
the reason (in the report and on stderr) and an intact log of the same run is used instead."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from reports import build_report

ZEROED = 56 * 1024


def _zero_middle(path: Path, size: int = ZEROED) -> None:
    """`size` bytes zeroed in the middle of the file (at most a third of it), as a disk or a
    copy interrupted mid-write leaves it."""
    data = bytearray(path.read_bytes())
    n = min(size, len(data) // 3)
    start = (len(data) - n) // 2
    data[start : start + n] = bytes(n)
    path.write_bytes(bytes(data))


def _pair(src: Path, folder: Path, damage) -> tuple[Path, Path]:
    """An intact copy and a damaged copy of one log; the damaged one written last (newer)."""
    folder.mkdir(parents=True)
    intact = folder / f"intact{src.suffix}"
    damaged = folder / f"damaged{src.suffix}"
    shutil.copy(src, intact)
    shutil.copy(src, damaged)
    damage(damaged)
    st = intact.stat()
    os.utime(damaged, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    return intact, damaged


def test_a_log_with_56_kb_zeroed_is_skipped_and_the_intact_copy_used(toy_logs, tmp_path, capsys):
    _, paths = toy_logs
    intact, damaged = _pair(paths["weak"], tmp_path / "logs", _zero_middle)
    result = build_report(tmp_path / "logs", tmp_path / "out", n_boot=100)
    assert [r.path for r in result.runs] == [intact.name]
    [skip] = result.skipped
    assert skip.path == damaged.name
    assert skip.reason.startswith("damaged log (integrity check failed:"), skip.reason
    # Said on stderr while the report is built, and shown at the top of the page.
    err = capsys.readouterr().err
    assert damaged.name in err and "integrity check failed" in err
    html = result.html.read_text()
    warning = html[: html.index('<section id="summary">')]
    assert damaged.name in warning and "integrity check failed" in warning
    assert "integrity check failed" in result.markdown.read_text().split("## Summary")[0]


def test_a_truncated_json_log_is_skipped(toy_logs, tmp_path, capsys):
    _, paths = toy_logs
    src = tmp_path / "src.json"
    from inspect_ai.log import read_eval_log, write_eval_log

    write_eval_log(read_eval_log(str(paths["strong"])), str(src))

    def truncate(path: Path) -> None:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) * 2 // 3])

    intact, damaged = _pair(src, tmp_path / "logs", truncate)
    result = build_report(tmp_path / "logs", tmp_path / "out", n_boot=100)
    assert [r.path for r in result.runs] == [intact.name]
    [skip] = result.skipped
    assert skip.path == damaged.name and "integrity check failed" in skip.reason
    assert "not valid JSON" in skip.reason
    assert damaged.name in capsys.readouterr().err
