"""The inspect entry point registers tasks that import their module only when built."""

from __future__ import annotations

import shutil
import sys

from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from inspect_ai.util import registry_info

import harness.cli.inspect_entry as entry_point
from harness.cli.discovery import discover_tasks, load_task_ref
from harness.cli.inspect_entry import lazy_task
from tests.conftest import REPO_ROOT


def test_every_task_is_registered_with_inspect_under_its_name():
    for name in discover_tasks().tasks:
        registered = getattr(entry_point, name)
        assert registry_info(registered).name == name
        assert registry_info(registered).type == "task"


def test_a_lazy_task_imports_its_module_when_built_and_records_the_real_defaults(tmp_path):
    file = tmp_path / "lazy_arith_probe.py"
    shutil.copy(REPO_ROOT / "tests" / "harness" / "fixtures" / "arith_task.py", file)
    entry = load_task_ref(f"{file}@arith", load=False)
    entry.name = "lazy_arith_probe"
    registered = lazy_task(entry)
    assert "_harness_task_lazy_arith_probe" not in sys.modules
    info = registry_info(registered)
    assert info.name == "lazy_arith_probe" and info.metadata["params"] == ["n", "delay_s", "busy_s"]

    [log] = inspect_eval(
        registered(n=2),
        model=get_model("scripted/lazy", reply="1"),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert "_harness_task_lazy_arith_probe" in sys.modules
    assert log.status == "success" and len(log.samples) == 2
    assert log.eval.task_registry_name == "lazy_arith_probe"
    # Defaults come from the real function (imported), not from reading its source.
    assert log.eval.task_args == {"n": 2, "delay_s": 0.0, "busy_s": 0.0}


HEAVY = ("torch", "transformers", "pyod", "vllm", "sklearn", "scipy", "pandas", "datasets", "PIL")

_IMPORTS = """
import sys, inspect_ai
before = set(sys.modules)
import harness.cli.inspect_entry
print(" ".join(sorted({m.split(".")[0] for m in set(sys.modules) - before})))
"""


def test_the_entry_point_imports_no_heavy_library():
    """inspect loads the entry point for every command (`inspect view` too): it must stay light,
    the tasks' heavy libraries imported only when a task is built (issue 13: it took 6.2 s when
    it imported every task, and torch, transformers and PyOD with them)."""
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", _IMPORTS], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert "harness" in out  # the probe saw the import
    assert not [m for m in HEAVY if m in out], out
