"""Task discovery reads tasks from source and imports a task module only when it is needed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from harness.cli.discovery import SourceDefault, TaskLoadError, discover_tasks, load_task_ref
from tests.conftest import REPO_ROOT

# Libraries a task may need but that listing tasks or loading inspect's entry point must not pay.
HEAVY = ("torch", "transformers", "sklearn", "scipy", "pyod", "numpy", "pandas", "peft")


def _new_modules(code: str) -> list[str]:
    """Modules (top-level heavy ones and task modules) that `code` imports beyond inspect_ai."""
    probe = textwrap.dedent(
        f"""
        import sys, inspect_ai
        before = set(sys.modules)
        {code}
        new = set(sys.modules) - before
        print("\\n".join(sorted(m for m in new
              if m.split(".")[0] in {HEAVY!r} or (m.startswith("tasks.") and m.count(".") >= 1))))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    return [line for line in out.stdout.splitlines() if line.strip()]


def test_discovery_reads_every_task_without_importing_it():
    assert _new_modules("from harness.cli.discovery import discover_tasks; discover_tasks()") == []


def test_inspect_entry_point_imports_no_task_and_no_heavy_library():
    # inspect imports the entry point for every command it runs, `inspect view` included.
    assert _new_modules("import harness.cli.inspect_entry") == []


def test_discovered_tasks_match_the_task_folders():
    registry = discover_tasks()
    folders = sorted(
        p.parent.name
        for p in (REPO_ROOT / "tasks").glob("*/task.py")
        if not p.parent.name.startswith("_")
    )
    assert sorted(registry.tasks) == folders and registry.errors == {}
    for name, entry in registry.tasks.items():
        assert entry.module == f"tasks.{name}.task" and entry.description
        # The names read from source are the names of the real function's parameters.
        assert list(entry.signature.parameters) == list(entry.params), name


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_a_task_file_is_read_without_running_it(tmp_path):
    file = _write(
        tmp_path / "t.py",
        '''
        """Module doc."""
        from inspect_ai import Task, task
        from inspect_ai.model import get_model

        DEFAULT = ("a", "b")
        RAN = []
        RAN.append(1)
        raise RuntimeError("imported")

        @task
        def judged(k: int = 3, mode: str = ",".join(DEFAULT), *, flag: bool = False) -> Task:
            """Judged task."""
            get_model(role="judge")
            get_model(role=some_variable)  # not literal: cannot be known, ignored
        ''',
    )
    entry = load_task_ref(f"{file}", load=False)
    assert entry.name == str(file) and entry.function_name == "judged"
    # roles are declared (ROLES), never guessed from get_model(role=...) calls
    assert entry.description == "Judged task." and entry.roles == ()
    params = entry.signature.parameters
    assert params["k"].default == 3 and params["flag"].kind is params["flag"].KEYWORD_ONLY
    assert isinstance(params["mode"].default, SourceDefault)
    assert repr(params["mode"].default) == "','.join(DEFAULT)"
    with pytest.raises(TaskLoadError, match="could not be loaded: RuntimeError: imported"):
        entry.params  # noqa: B018


def test_roles_are_the_declared_ROLES_of_the_package_and_the_task_module(tmp_path):
    folder = tmp_path / "mytask"
    _write(
        folder / "__init__.py", 'ROLES = ("judge", "mutator")\nGENERATE = {"temperature": 0.0}\n'
    )
    task_file = _write(
        folder / "task.py",
        '''
        from inspect_ai import task
        ROLES = ("grader", "judge")

        @task
        def mytask():
            """A task."""
        ''',
    )
    _write(
        folder / "solver.py", 'from inspect_ai.model import get_model\nget_model(role="auditor")\n'
    )
    from harness.cli.discovery import TaskEntry, _entry_from_source

    entry = _entry_from_source(
        "mytask", task_file, module="tasks.mytask.task", function_name="mytask"
    )
    assert isinstance(entry, TaskEntry)
    assert entry.roles == ("judge", "mutator", "grader")  # not "auditor": undeclared
    assert entry.declarations.generate == {"temperature": 0.0}


def _literal_role_requests(folder) -> set[str]:
    """Literal names in `get_model(role="...")` calls under `folder`."""
    import ast

    roles = set()
    for file in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "get_model":
                for kw in node.keywords:
                    if kw.arg == "role" and isinstance(kw.value, ast.Constant):
                        roles.add(kw.value.value)
    return roles


def test_every_task_declares_the_roles_it_asks_for():
    # issue 31 item 2: swe_abs asks for its roles through a variable; only a declaration shows them
    registry = discover_tasks()
    for name, entry in registry.tasks.items():
        missing = _literal_role_requests(REPO_ROOT / "tasks" / name) - set(entry.roles)
        assert not missing, f"{name}: declare ROLES {sorted(missing)} in tasks/{name}/__init__.py"
    assert registry.tasks["swe_abs"].roles == ("judge", "mutator", "tester")


@pytest.mark.parametrize(
    "source, message",
    [
        ("def other():\n    pass\n", "'t' is not defined"),
        ("def t():\n    pass\n", "'t' is not decorated with @task"),
        ("def t(:\n", "cannot be read as Python: SyntaxError"),
        ("from inspect_ai import task\nROLES = make()\n@task\ndef t():\n    pass\n", "ROLES must"),
    ],
)
def test_a_broken_task_file_names_the_file_and_the_problem(tmp_path, source, message):
    file = _write(tmp_path / "bad.py", source)
    with pytest.raises(TaskLoadError, match=message) as caught:
        entry = load_task_ref(f"{file}@t", load=False)
        entry.roles  # noqa: B018 - ROLES is read with the roles
    assert str(file) in str(caught.value)


def test_a_file_with_several_tasks_needs_a_name(tmp_path):
    file = _write(
        tmp_path / "two.py",
        "from inspect_ai import task\n@task\ndef a():\n    pass\n@task()\ndef b():\n    pass\n",
    )
    with pytest.raises(TaskLoadError, match="defines 2 @task functions"):
        load_task_ref(str(file))
    assert load_task_ref(f"{file}@b", load=False).function_name == "b"
