"""The layers and privacy rules of the code base, checked on the source (nothing is imported).

Every `import` and `from ... import` in the project's modules, at any depth (inside functions and
`if TYPE_CHECKING:` too), is checked against:

- layer rules: `methods/` imports no inspect_ai, tasks or harness; `scorers/` no tasks, methods or
  harness; `reports/` no tasks or methods; the library part of `harness` (data, records, paths,
  models and every other module that is not app) nothing of its app part (cli, config, eval,
  discovery, the inspect entry point, the grid executors);
- privacy: a `_private` module (or name) of the project is imported only from inside the package
  that holds it; tests may reach into what they test;
- inspect's private modules (`inspect_ai._util`, `inspect_ai.model._model_output`, ...) only from
  the allow-list below, each entry with its reason, the same list as in CONTRIBUTING.md.

A violation fails naming the file, the line and the import.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("harness", "tasks", "methods", "scorers", "reports", "sandboxes")
SCANNED = (*PACKAGES, "tests", "bench")

# The harness's app is a folder: everything under harness/cli/ (the command, its options, the task
# registry, eval-sets, grids, the closing table, inspect's plugin). The rest of harness/ is the
# library tasks build on. A module pyproject.toml names as an entry point is the outermost layer
# wherever it sits (it loads the app for its caller).
HARNESS_APP = "harness.cli"


def entry_point_modules(root: Path) -> tuple[str, ...]:
    """The modules pyproject.toml names as console scripts or entry points (`module:attr`)."""
    import tomllib

    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return ()
    project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    groups = [project.get("scripts", {}), *project.get("entry-points", {}).values()]
    return tuple(sorted({value.split(":")[0].strip() for g in groups for value in g.values()}))


@dataclass(frozen=True)
class LayerRule:
    """Modules under `importers` (or named exactly in `exact`) import nothing under `forbidden`."""

    importers: tuple[str, ...]
    forbidden: tuple[str, ...]
    why: str
    excluded: tuple[str, ...] = ()  # modules under `importers` the rule does not cover

    def applies_to(self, module: str) -> bool:
        return _under(module, self.importers) and not _under(module, self.excluded)


def layer_rules(root: Path) -> tuple[LayerRule, ...]:
    """The rules, with the entry points of the checkout at `root` exempt from the library's."""
    return (*LAYER_RULES, _harness_library_rule(entry_point_modules(root)))


LAYER_RULES = (
    LayerRule(
        ("methods",),
        ("inspect_ai", "tasks", "harness"),
        "methods are plain Python: plain data and callables in, plain data out",
    ),
    LayerRule(
        ("scorers",), ("tasks", "methods", "harness"), "scorers are shared metrics below tasks"
    ),
    LayerRule(("reports",), ("tasks", "methods"), "reports read logs only"),
)


def _harness_library_rule(entry_points: tuple[str, ...]) -> LayerRule:
    return LayerRule(
        ("harness",),
        (HARNESS_APP, "tasks"),
        "the harness library (harness/ outside harness/cli/: data, records, models, ...) sits "
        "below the tasks and the app (harness/cli/)",
        excluded=(HARNESS_APP, *entry_points),  # every other harness module is library
    )


# inspect_ai's private modules the project may import, and why (mirrored in CONTRIBUTING.md).
# Key: (importing module, inspect module). Anything with a public equivalent does not belong here.
INSPECT_PRIVATE_ALLOWED: dict[tuple[str, str], str] = {
    ("sandboxes.bwrap._sandbox", "inspect_ai.util._subprocess"): (
        "max_subprocesses_context_var: inspect's per-eval subprocess limit, which the bwrap "
        "sandbox's own exec path must honour like inspect's subprocess(); no public accessor"
    ),
    ("sandboxes.bwrap._probe", "inspect_ai._util.error"): (
        "PrerequisiteError: inspect prints this error class as a one-line message instead of "
        "a traceback; no public export"
    ),
    ("harness.cli.undefined", "inspect_ai._display.core.results"): (
        "task_scores: the rows of inspect's end-of-task results panel, wrapped during a harness "
        "run to leave NaN metrics out (one row says how many); no option or hook filters them"
    ),
    ("harness.models.scripted", "inspect_ai.log._samples"): (
        "sample_active(): the running sample's id and epoch, so a script keeps one position per "
        "sample under concurrency; no public accessor"
    ),
}


@dataclass(frozen=True)
class Import:
    file: str  # relative to the scanned root
    line: int
    importer: str  # the importing module's dotted name
    module: str  # the imported module (absolute)
    names: tuple[str, ...]  # for `from module import a, b`: a, b
    dynamic: bool = False  # importlib.import_module("...") / __import__("...") with a literal

    def targets(self) -> Iterator[str]:
        """Each dotted name this import reaches: the module and `module.name` per name."""
        yield self.module
        for name in self.names:
            yield f"{self.module}.{name}"

    def __str__(self) -> str:
        what = f"from {self.module} import {', '.join(self.names)}" if self.names else self.module
        if self.dynamic:
            what = f"import_module({self.module}...)"
        return f"{self.file}:{self.line}: {what}"


def _dynamic_import(call: ast.Call) -> str | None:
    """The module (or, for an f-string, the literal package prefix) a call imports by name:
    `importlib.import_module(f"tasks.{name}.dataset")` imports from `tasks`."""
    func = call.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if called not in ("import_module", "__import__") or not call.args:
        return None
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value or None
    if isinstance(first, ast.JoinedStr) and first.values:
        head = first.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            prefix = head.value.rpartition(".")[0]
            return prefix or None
    return None


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


class ImportChecker:
    """Walks the source under `root` (a checkout, or a synthetic tree in a test)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def files(self) -> list[Path]:
        return sorted(
            file
            for folder in SCANNED
            if (self.root / folder).is_dir()
            for file in (self.root / folder).rglob("*.py")
            if "__pycache__" not in file.parts
        )

    def module_name(self, file: Path) -> str:
        parts = list(file.relative_to(self.root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts)

    def imports(self) -> Iterator[Import]:
        """Every import statement, relative imports resolved against the importer's package."""
        for file in self.files():
            importer = self.module_name(file)
            package = importer if file.name == "__init__.py" else importer.rpartition(".")[0]
            relative = file.relative_to(self.root).as_posix()
            try:
                text = file.read_text(encoding="utf-8")
            except FileNotFoundError:  # moved away while the tree was being read
                continue
            tree = ast.parse(text, filename=str(file))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        yield Import(relative, node.lineno, importer, alias.name, ())
                elif isinstance(node, ast.ImportFrom):
                    module = node.module or ""
                    if node.level:
                        base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                        module = ".".join([*base, module] if module else base)
                    names = tuple(alias.name for alias in node.names if alias.name != "*")
                    yield Import(relative, node.lineno, importer, module, names)
                elif isinstance(node, ast.Call) and (dynamic := _dynamic_import(node)):
                    yield Import(relative, node.lineno, importer, dynamic, (), dynamic=True)

    def private_scope(self, target: str) -> str | None:
        """The package a private dotted name belongs to; None when nothing in it is private.

        `methods.dispat._lm` → `methods.dispat`; `harness.cli.discovery._parse` → `harness.cli` (a
        private name in a module is private to the module's package).
        """
        parts = target.split(".")
        for i, part in enumerate(parts):
            if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
                scope = parts[:i]
                if len(scope) >= 2 and not (self.root.joinpath(*scope) / "__init__.py").is_file():
                    scope = scope[:-1]
                return ".".join(scope)
        return None

    def violations(self) -> list[str]:
        """Every broken rule, one line each: file:line: the import — the rule."""
        found: list[str] = []
        rules = layer_rules(self.root)
        for imp in self.imports():
            is_test = imp.importer.split(".")[0] == "tests"
            if _under(imp.module, ("inspect_ai",)):
                if self._inspect_private(imp) and (imp.importer, imp.module) not in (
                    INSPECT_PRIVATE_ALLOWED
                ):
                    found.append(
                        f"{imp}  — inspect private module: use inspect's public API, or add it "
                        "to INSPECT_PRIVATE_ALLOWED and CONTRIBUTING.md with the reason"
                    )
            if is_test:
                continue  # tests may import what they test, private parts included
            for rule in rules:
                if rule.applies_to(imp.importer) and any(
                    _under(t, rule.forbidden) for t in imp.targets()
                ):
                    found.append(f"{imp}  — layer: {rule.why}")
            if not _under(imp.module, PACKAGES):
                continue
            for target in imp.targets():
                scope = self.private_scope(target)
                if scope and not _under(imp.importer, (scope,)):
                    found.append(
                        f"{imp}  — private: '{target}' belongs to {scope}; import what {scope} "
                        "exports (make it public, re-exported in its __init__)"
                    )
                    break
        return found

    def import_graph(self) -> dict[str, set[str]]:
        """Module → the project modules it imports (the most specific one each import names)."""
        modules = {
            self.module_name(f) for f in self.files() if _under(self.module_name(f), PACKAGES)
        }
        graph: dict[str, set[str]] = {m: set() for m in modules}
        for imp in self.imports():
            if imp.importer not in modules:
                continue
            for target in [*(f"{imp.module}.{n}" for n in imp.names), imp.module]:
                if target in modules:
                    if target != imp.importer:
                        graph[imp.importer].add(target)
                    if target != imp.module:
                        continue  # `from pkg import submodule`: the submodule, per name
                    break
        return graph

    def cycles(self) -> list[list[str]]:
        """Every import circle (a strongly connected set of two or more modules), sorted."""
        graph = self.import_graph()
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[list[str]] = []

        def visit(node: str) -> None:  # Tarjan's algorithm
            index[node] = low[node] = len(index)
            stack.append(node)
            on_stack.add(node)
            for nxt in sorted(graph[node]):
                if nxt not in index:
                    visit(nxt)
                    low[node] = min(low[node], low[nxt])
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

        for node in sorted(graph):
            if node not in index:
                visit(node)
        return sorted(found)

    def _inspect_private(self, imp: Import) -> bool:
        return any(self.private_scope(t) is not None for t in imp.targets())

    def inspect_private_uses(self) -> set[tuple[str, str]]:
        return {
            (imp.importer, imp.module)
            for imp in self.imports()
            if _under(imp.module, ("inspect_ai",)) and self._inspect_private(imp)
        }


# Packages with import circles today, which other sessions are restructuring (issue 28): a circle
# inside one of them is reported as a warning; a circle anywhere else fails. Remove a package once
# its circles are broken (the test warns when one has none left).
KNOWN_CIRCLE_PACKAGES: dict[str, str] = {}


# ------------------------------------------------------------------------------------ the tests
def test_the_project_keeps_its_layers_and_privacy():
    found = ImportChecker(REPO_ROOT).violations()
    assert not found, "import rules broken:\n" + "\n".join(found)


def test_no_package_has_an_import_circle():
    found = ImportChecker(REPO_ROOT).cycles()

    def known(circle: list[str]) -> str | None:
        return next(
            (p for p in KNOWN_CIRCLE_PACKAGES if all(_under(m, (p,)) for m in circle)), None
        )

    new = [c for c in found if known(c) is None]
    assert not new, "import circles (break each: shared types or helpers in one module):\n" + (
        "\n".join(" -> ".join(c) for c in new)
    )
    tidy = sorted(set(KNOWN_CIRCLE_PACKAGES) - {known(c) for c in found})
    if tidy:  # broken meanwhile: remove them from the list
        warnings.warn(
            f"no import circle left in {tidy}: remove from KNOWN_CIRCLE_PACKAGES", stacklevel=1
        )
    for circle in found:
        warnings.warn(f"known import circle: {' -> '.join(circle)}", stacklevel=1)


def test_every_methods_package_keeps_its_code_in_private_modules():
    """One privacy rule for `methods/` (issue 28 item 5): a package's public API is its
    `__init__`; every other module and subpackage is `_private`."""
    public = sorted(
        str(path.relative_to(REPO_ROOT))
        for package in (REPO_ROOT / "methods").iterdir()
        if (package / "__init__.py").is_file()
        for path in package.iterdir()
        if not path.name.startswith(("_", "."))
        and (path.suffix == ".py" or (path / "__init__.py").is_file())
    )
    assert public == [], f"public modules in methods/ (rename to _name): {public}"


def test_the_harness_app_is_the_cli_folder():
    app = REPO_ROOT / "harness" / "cli"
    assert (app / "__init__.py").is_file() and HARNESS_APP == "harness.cli"
    assert "harness._inspect_entry" in entry_point_modules(REPO_ROOT)  # the one shim outside


@pytest.mark.parametrize(
    "files, circle",
    [
        ({"scorers/a.py": "from scorers import b\n", "scorers/b.py": "import scorers.a\n"}, 2),
        (  # inside a function too: a lazy import still ties the two modules together
            {
                "harness/__init__.py": "from harness.records import x\n",
                "harness/records.py": "def f():\n    from harness import __version__\n",
            },
            2,
        ),
        (
            {
                "methods/m/__init__.py": "from methods.m.a import A\n",
                "methods/m/a.py": "from methods.m.b import B\n",
                "methods/m/b.py": "from methods.m import A\n",
            },
            3,
        ),
    ],
)
def test_an_import_circle_is_found(tmp_path, files, circle):
    [found] = ImportChecker(_tree(tmp_path, files)).cycles()
    assert len(found) == circle, found


def test_a_package_that_imports_its_submodules_is_no_circle(tmp_path):
    files = {
        "methods/m/__init__.py": "from methods.m.a import A\nfrom . import b\n",
        "methods/m/a.py": "from methods.m.b import B\n",
        "methods/m/b.py": "import numpy\n",
    }
    assert ImportChecker(_tree(tmp_path, files)).cycles() == []


def test_every_allowed_inspect_private_import_is_used_and_documented():
    used = ImportChecker(REPO_ROOT).inspect_private_uses()
    stale = sorted(set(INSPECT_PRIVATE_ALLOWED) - used)
    assert not stale, (
        f"allow-list entries no longer used (remove them here and in CONTRIBUTING): {stale}"
    )
    contributing = (REPO_ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    undocumented = [
        f"{importer} → {module}"
        for importer, module in INSPECT_PRIVATE_ALLOWED
        if f"`{module}`" not in contributing or f"`{importer}`" not in contributing
    ]
    assert not undocumented, f"document these in CONTRIBUTING.md with the reason: {undocumented}"


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "pyproject.toml").write_text(
        '[project.scripts]\nh = "harness.cli:main"\n'
        '[project.entry-points.inspect_ai]\np = "harness._entry"\n'
    )
    for package in (
        "harness",
        "harness/cli",
        "harness/models",
        "methods",
        "methods/m",
        "tasks",
        "tasks/t",
    ):
        init = tmp_path / package / "__init__.py"
        init.parent.mkdir(parents=True, exist_ok=True)
        if not init.exists():
            init.write_text("")
    for package in ("scorers", "reports"):
        (tmp_path / package).mkdir(exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    return tmp_path


@pytest.mark.parametrize(
    "relative, source, expected",
    [
        ("methods/m/algo.py", "import inspect_ai\n", "methods/m/algo.py:1: inspect_ai  — layer"),
        (
            "methods/m/algo.py",
            "def f():\n    from tasks.t import x\n",
            "methods/m/algo.py:2: from tasks.t import x  — layer",
        ),
        ("scorers/s.py", "from methods.m import algo\n", "scorers/s.py:1: from methods.m"),
        ("reports/r.py", "import tasks.t.task\n", "reports/r.py:1: tasks.t.task  — layer"),
        ("harness/models/x.py", "from harness.cli import main\n", "from harness.cli import main"),
        (
            "harness/data.py",
            "from harness.cli import discovery\n",
            "from harness.cli import discovery",
        ),
        (
            "harness/newpart.py",
            "from harness.cli.config import EvalConfig\n",
            "harness/newpart.py:1",
        ),
        ("harness/__init__.py", "from harness.cli.eval import run_eval\n", "harness/__init__.py:1"),
        ("harness/data.py", "def f():\n    from tasks.t import x\n", "harness/data.py:2"),
        (
            "harness/models/x.py",
            "import importlib\nimportlib.import_module(f'tasks.{name}.dataset')\n",
            "harness/models/x.py:2: import_module(tasks...)  — layer",
        ),
        (
            "tasks/t/runner.py",
            "from methods.m._detector import D\n",
            "'methods.m._detector' belongs to methods.m",
        ),
        (
            "tasks/t/runner.py",
            "from methods.m import _helper\n",
            "'methods.m._helper' belongs to methods.m",
        ),
        (
            "tasks/t/runner.py",
            "from inspect_ai.model._model_output import ChatCompletionChoice\n",
            "inspect private module",
        ),
        ("tasks/t/runner.py", "from inspect_ai._util.registry import x\n", "inspect private"),
    ],
)
def test_a_deliberate_violation_is_caught_naming_file_and_import(
    tmp_path, relative, source, expected
):
    found = ImportChecker(_tree(tmp_path, {relative: source})).violations()
    assert len(found) == 1 and expected in found[0], found


@pytest.mark.parametrize(
    "relative, source",
    [
        ("methods/m/algo.py", "from methods.m._lm import LM\nimport numpy\n"),
        ("methods/m/_lm.py", "from ._helper import x\nfrom . import _other\n"),
        ("tasks/t/task.py", "from tasks.t._runner import R\nfrom methods.m import Detector\n"),
        ("tasks/t/task.py", "from inspect_ai.model import get_model\nimport harness.models\n"),
        ("harness/cli/main.py", "from harness.cli.discovery import discover_tasks\n"),
        ("harness/cli/config.py", "from harness.cli.discovery import _type_name\n"),
        (
            "harness/cli/data.py",
            "import importlib\nimportlib.import_module(f'tasks.{n}.dataset')\n",
        ),
        ("harness/_entry.py", "from harness.cli.inspect_entry import PACKAGE\n"),  # pyproject's
        ("scorers/s.py", "from inspect_ai.scorer import metric\n"),
        ("tests/methods/test_m.py", "from methods.m._lm import LM\n"),
    ],
)
def test_allowed_imports_pass(tmp_path, relative, source):
    assert ImportChecker(_tree(tmp_path, {relative: source})).violations() == []
