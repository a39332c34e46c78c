"""The HTML report in headless Chromium: screenshot, no console errors, tables and plots present."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--window-size=1400,2400",
    "--hide-scrollbars",
]
# Chromium logs every console message and uncaught exception as "...:CONSOLE:<line>] ..."
_CONSOLE = re.compile(r":CONSOLE(?:\(\d+\)|:\d+)\] (.*)")


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(
        "headless Chromium not installed (Debian: apt-get install -y chromium; "
        "`make setup` does it when run as root)"
    )


def _run(page: Path, tmp: Path, *mode: str) -> subprocess.CompletedProcess[str]:
    cmd = [_chromium(), *_FLAGS, f"--user-data-dir={tmp / 'profile'}", *mode, page.as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp)


def _console(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [m.group(1) for m in _CONSOLE.finditer(proc.stderr)]


def test_console_capture_detects_errors(tmp_path):
    """Control: the capture really sees console errors and exceptions (else the test is blind)."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<html><body><script>console.error("boom-1"); missingFn();</script></body></html>'
    )
    proc = _run(bad, tmp_path, "--dump-dom")
    messages = _console(proc)
    assert any("boom-1" in m for m in messages), proc.stderr[-2000:]
    assert any("missingFn" in m for m in messages)


def test_report_renders_without_console_errors(toy_report, tmp_path):
    page = toy_report.html
    shot = tmp_path / "report.png"
    proc = _run(page, tmp_path, f"--screenshot={shot}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _console(proc) == [], _console(proc)
    assert shot.is_file() and shot.stat().st_size > 20_000  # a real render, not a blank page
    # Keep the screenshot beside the report for people (and CI artefacts) to look at.
    shutil.copy(shot, page.parent / "screenshot.png")

    dom_proc = _run(page, tmp_path, "--dump-dom")
    assert _console(dom_proc) == []
    dom = dom_proc.stdout
    # The inline script ran to the end (it marks the document when the tables are sortable).
    assert 'data-report-ready="1"' in dom
    assert len(re.findall(r'<table class="sortable leaderboard"', dom)) == 3
    plots = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,', dom)
    assert len(plots) >= 4
    assert 'data-kind="roc"' in dom and 'data-kind="bars"' in dom


def test_sorting_reorders_rows(toy_report, tmp_path):
    """Click a header through an injected script and check the row order flips."""
    html = toy_report.html.read_text()
    probe = """
<script>
window.addEventListener("load", function () {
  var t = document.querySelector('table.leaderboard[data-task="qa_toy"]');
  var ths = t.tHead.rows[0].cells, col = -1;
  for (var i = 0; i < ths.length; i++) { if (ths[i].textContent.indexOf("exact/accuracy") === 0) col = i; }
  function firstModel() { return t.tBodies[0].rows[0].cells[0].textContent; }
  ths[col].click(); var asc = firstModel();
  ths[col].click(); var desc = firstModel();
  document.body.setAttribute("data-sort-probe", asc + "|" + desc);
});
</script></body>"""
    page = tmp_path / "probe.html"
    page.write_text(html.replace("</body>", probe))
    proc = _run(page, tmp_path, "--dump-dom")
    assert _console(proc) == []
    m = re.search(r'data-sort-probe="([^"]*)"', proc.stdout)
    assert m, proc.stdout[:500]
    assert m.group(1) == "scripted/weak|scripted/strong"
