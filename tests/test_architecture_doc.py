"""docs/ARCHITECTURE.md against the tree: what it names exists, and what exists is named.

Checked on the source (nothing imported):

- the top-level parts: the folders the page's "Parts" block lists (`name/` at a line's start)
  are exactly the project's top-level folders (tracked by git, or Python packages not yet
  committed), hidden ones aside;
- the tasks: the page's task table (first column) lists exactly the `tasks/<name>/` packages
  that hold a `task.py` (the rule `harness.cli.discovery` finds tasks by);
- every package under `harness/`, every sandbox provider under `sandboxes/` and every package
  under `methods/` is named by its path (`harness/cli/executors/`);
- every repository path the page names (`sandboxes/docker/_channel.py`) exists, and every dotted
  name under a project package (`harness.records.task_metadata`) names a module, or a name
  that its longest module defines or re-exports.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DOC = Path("docs") / "ARCHITECTURE.md"
TOP_LEVEL = (
    "harness",
    "tasks",
    "methods",
    "scorers",
    "sandboxes",
    "reports",
    "bench",
    "docs",
    "tests",
)
PYTHON_PACKAGES = ("harness", "tasks", "methods", "scorers", "sandboxes", "reports")
IGNORED_TOP = {"build", "logs", "reports-out"}  # outputs (.gitignore), never parts

_PATH = re.compile(r"(?<![\w./<-])((?:" + "|".join(TOP_LEVEL) + r")/[A-Za-z0-9_./-]*)")
_DOTTED = re.compile(r"(?<![\w./])((?:" + "|".join(PYTHON_PACKAGES) + r")(?:\.[A-Za-z_]\w*)+)")


# ----------------------------------------------------------------------------- reading the page
def parts_listed(doc: str) -> set[str]:
    """The top-level folders the "## Parts" code block lists (`name/` at the start of a line)."""
    match = re.search(r"^## Parts\n.*?^```\n(.*?)^```", doc, re.S | re.M)
    assert match, f"{DOC} has no '## Parts' section with a code block"
    return set(re.findall(r"^([A-Za-z_][\w.-]*)/(?:\s|<)", match.group(1), re.M))


def tasks_listed(doc: str) -> set[str]:
    """The first column of the task table (the table whose header starts `| task |`)."""
    match = re.search(r"^\| task \|.*\n\|[-| ]+\|\n((?:\|.*\n)+)", doc, re.M)
    assert match, f"{DOC} has no task table (a header starting '| task |')"
    names = set()
    for line in match.group(1).splitlines():
        cell = line.split("|")[1].strip()
        assert re.fullmatch(r"`\w+`", cell), (
            f"{DOC}: task table row {line!r}: first cell not `name`"
        )
        names.add(cell.strip("`"))
    return names


def paths_named(doc: str) -> set[str]:
    """Repository paths the page names, cut at a placeholder (`tasks/<name>/` -> `tasks/`)."""
    return {m.rstrip(".,;:") for m in _PATH.findall(doc)}


def dotted_named(doc: str) -> set[str]:
    return {m.rstrip(".") for m in _DOTTED.findall(doc)}


# ----------------------------------------------------------------------------- reading the tree
def top_level_parts(root: Path) -> set[str]:
    """Top-level folders holding tracked files, and top-level Python packages (committed or not)."""
    found = {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    try:
        tracked = subprocess.run(
            ["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        tracked = []
    found |= {line.split("/")[0] for line in tracked if "/" in line}
    return {
        name
        for name in found
        if not name.startswith((".", "_"))
        and not name.endswith(".egg-info")
        and name not in IGNORED_TOP
    }


def tasks_in_tree(root: Path) -> set[str]:
    """`tasks/<name>/` packages with a `task.py` (what discovery registers)."""
    return {
        p.parent.name
        for p in (root / "tasks").glob("*/task.py")
        if (p.parent / "__init__.py").is_file() and not p.parent.name.startswith(("_", "."))
    }


def packages_under(root: Path, top: str, *, recursive: bool) -> set[str]:
    """`top/<sub>/` paths of the packages under `top` (at any depth when `recursive`)."""
    base = root / top
    inits = base.rglob("*/__init__.py") if recursive else base.glob("*/__init__.py")
    return {
        p.parent.relative_to(root).as_posix() + "/"
        for p in inits
        if "__pycache__" not in p.parts and not any(s.startswith(".") for s in p.parts)
    }


def _defines(module_file: Path, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", module_file.read_text(encoding="utf-8")) is not None


def _dotted_problem(root: Path, dotted: str) -> str | None:
    parts = dotted.split(".")
    module_file: Path | None = None
    depth = 0
    for i in range(1, len(parts) + 1):
        base = root.joinpath(*parts[:i])
        if (base / "__init__.py").is_file():
            module_file, depth = base / "__init__.py", i
        elif base.with_suffix(".py").is_file():
            module_file, depth = base.with_suffix(".py"), i
            break
        else:
            break
    if module_file is None:
        return f"{dotted}: no package {parts[0]}"
    if depth == len(parts):
        return None
    name = parts[depth]
    if not _defines(module_file, name):
        return f"{dotted}: {module_file.relative_to(root)} neither is nor defines {name!r}"
    return None


# ----------------------------------------------------------------------------- the checks
def doc_problems(doc: str, root: Path) -> list[str]:
    """Every difference between the page and the tree at `root`, one line each."""
    problems: list[str] = []
    listed, present = parts_listed(doc), top_level_parts(root)
    problems += [f"part {p}/ is listed but does not exist" for p in sorted(listed - present)]
    problems += [f"part {p}/ exists but is not in 'Parts'" for p in sorted(present - listed)]
    listed_tasks, tasks = tasks_listed(doc), tasks_in_tree(root)
    problems += [
        f"task {t} is in the table but not in tasks/" for t in sorted(listed_tasks - tasks)
    ]
    problems += [f"task {t} exists but is not in the table" for t in sorted(tasks - listed_tasks)]
    named = paths_named(doc)
    required = (
        packages_under(root, "harness", recursive=True)
        | packages_under(root, "sandboxes", recursive=False)
        | packages_under(root, "methods", recursive=False)
    )
    problems += [f"{p} exists but is not named" for p in sorted(required - named)]
    problems += [
        f"{p} is named but does not exist" for p in sorted(named) if not (root / p).exists()
    ]
    problems += [p for d in sorted(dotted_named(doc)) if (p := _dotted_problem(root, d))]
    return problems


def test_the_architecture_page_names_exactly_the_parts_and_tasks_that_exist():
    doc = (REPO_ROOT / DOC).read_text(encoding="utf-8")
    problems = doc_problems(doc, REPO_ROOT)
    assert not problems, f"{DOC} and the tree differ (update the page):\n" + "\n".join(problems)
    assert parts_listed(doc) >= set(TOP_LEVEL)


# ----------------------------------------------------------------------------- the checks' own tests
_FAKE_DOC = """# Architecture

| task | system |
|---|---|
| `alpha` | one |

## Parts

```
harness/     harness/cli/ and harness/models/
tasks/       tasks/alpha/task.py
sandboxes/   sandboxes/bwrap/
methods/     methods/alpha/ and harness.records.task_metadata
```
"""


def _fake_tree(tmp_path: Path, files: list[str]) -> Path:
    for relative in files:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("def task_metadata(): ...\n" if relative.endswith("records.py") else "")
    return tmp_path


_FAKE_FILES = [
    "harness/__init__.py",
    "harness/records.py",
    "harness/cli/__init__.py",
    "harness/models/__init__.py",
    "tasks/__init__.py",
    "tasks/alpha/__init__.py",
    "tasks/alpha/task.py",
    "sandboxes/__init__.py",
    "sandboxes/bwrap/__init__.py",
    "methods/__init__.py",
    "methods/alpha/__init__.py",
]


def test_the_fake_page_matches_its_fake_tree(tmp_path):
    assert doc_problems(_FAKE_DOC, _fake_tree(tmp_path, _FAKE_FILES)) == []


@pytest.mark.parametrize(
    "extra, expected",
    [
        (
            ["tasks/beta/__init__.py", "tasks/beta/task.py"],
            "task beta exists but is not in the table",
        ),
        (["harness/cli/executors/__init__.py"], "harness/cli/executors/ exists but is not named"),
        (["sandboxes/docker/__init__.py"], "sandboxes/docker/ exists but is not named"),
        (["methods/beta/__init__.py"], "methods/beta/ exists but is not named"),
        (["scorers/__init__.py"], "part scorers/ exists but is not in 'Parts'"),
    ],
)
def test_an_undocumented_part_fails_naming_it(tmp_path, extra, expected):
    assert expected in doc_problems(_FAKE_DOC, _fake_tree(tmp_path, [*_FAKE_FILES, *extra]))


@pytest.mark.parametrize(
    "edit, expected",
    [
        (
            ("| `alpha` | one |", "| `alpha` | one |\n| `gamma` | two |"),
            "task gamma is in the table",
        ),
        (("sandboxes/bwrap/", "sandboxes/bwrap/ sandboxes/k8s/"), "sandboxes/k8s/ is named but"),
        (("methods/     ", "methods/     \nreports/     "), "part reports/ is listed but"),
        (("records.task_metadata", "records.task_meta"), "neither is nor defines 'task_meta'"),
        (("harness.records", "harness.recs"), "harness/__init__.py neither is nor defines 'recs'"),
    ],
)
def test_a_name_the_page_invents_fails_naming_it(tmp_path, edit, expected):
    doc = _FAKE_DOC.replace(*edit)
    assert doc != _FAKE_DOC
    problems = doc_problems(doc, _fake_tree(tmp_path, _FAKE_FILES))
    assert any(expected in p for p in problems), problems


def test_the_task_list_follows_discovery_not_a_fixed_list(tmp_path):
    root = _fake_tree(tmp_path, [*_FAKE_FILES, "tasks/_shared/__init__.py", "tasks/noworkyet/x.py"])
    assert tasks_in_tree(root) == {"alpha"}
