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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("harness", "tasks", "methods", "scorers", "reports", "sandboxes")
SCANNED = (*PACKAGES, "tests", "bench")

HARNESS_APP = (
    "harness.cli",
    "harness.config",
    "harness.eval",
    "harness.discovery",
    "harness._inspect_entry",
    "harness.executors",  # runs eval grids (in process or on Ray) from the CLI's config
)


@dataclass(frozen=True)
class LayerRule:
    """Modules under `importers` (or named exactly in `exact`) import nothing under `forbidden`."""

    importers: tuple[str, ...]
    forbidden: tuple[str, ...]
    why: str
    excluded: tuple[str, ...] = ()  # modules under `importers` the rule does not cover

    def applies_to(self, module: str) -> bool:
        return _under(module, self.importers) and not _under(module, self.excluded)


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
    LayerRule(
        ("harness",),
        HARNESS_APP,
        "the harness library (data, records, paths, models, ...) sits below its app (CLI, discovery)",
        excluded=HARNESS_APP,  # every other harness module, __init__ included, is library
    ),
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

    def targets(self) -> Iterator[str]:
        """Each dotted name this import reaches: the module and `module.name` per name."""
        yield self.module
        for name in self.names:
            yield f"{self.module}.{name}"

    def __str__(self) -> str:
        what = f"from {self.module} import {', '.join(self.names)}" if self.names else self.module
        return f"{self.file}:{self.line}: {what}"


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
            tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
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

    def private_scope(self, target: str) -> str | None:
        """The package a private dotted name belongs to; None when nothing in it is private.

        `methods.dispat._lm` → `methods.dispat`; `harness.discovery._parse` → `harness` (a
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
            for rule in LAYER_RULES:
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

    def _inspect_private(self, imp: Import) -> bool:
        return any(self.private_scope(t) is not None for t in imp.targets())

    def inspect_private_uses(self) -> set[tuple[str, str]]:
        return {
            (imp.importer, imp.module)
            for imp in self.imports()
            if _under(imp.module, ("inspect_ai",)) and self._inspect_private(imp)
        }


# ------------------------------------------------------------------------------------ the tests
def test_the_project_keeps_its_layers_and_privacy():
    found = ImportChecker(REPO_ROOT).violations()
    assert not found, "import rules broken:\n" + "\n".join(found)


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
    for package in ("harness", "harness/models", "methods", "methods/m", "tasks", "tasks/t"):
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
        ("harness/data.py", "from harness import discovery\n", "from harness import discovery"),
        ("harness/newpart.py", "from harness.config import EvalConfig\n", "harness/newpart.py:1"),
        ("harness/__init__.py", "from harness.eval import run_eval\n", "harness/__init__.py:1"),
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
        ("harness/cli.py", "from harness.discovery import discover_tasks\n"),
        ("harness/config.py", "from harness.discovery import _type_name\n"),
        ("scorers/s.py", "from inspect_ai.scorer import metric\n"),
        ("tests/methods/test_m.py", "from methods.m._lm import LM\n"),
    ],
)
def test_allowed_imports_pass(tmp_path, relative, source):
    assert ImportChecker(_tree(tmp_path, {relative: source})).violations() == []
