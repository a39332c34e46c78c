"""One instance's files inside a sandbox, and the jail runner driven through it.

The sandbox is anything with inspect's ``SandboxEnvironment`` methods ``exec``, ``write_file``
and ``read_file`` (structural typing: this package imports no inspect). Layout under the work
dir: ``base/`` (the base commit's tree), ``repo/`` (base + gold patch + test patch: the tree the
warm runner collects), ``cand-<n>/`` (fresh trees for untrusted candidates), ``runner.py``.
"""

from __future__ import annotations

import io
import json
import tarfile
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from methods.swe_abs._diff import apply_patch
from methods.swe_abs._instance import Instance

_JAIL = Path(__file__).resolve().parent / "_jail"
_JAIL_MAIN = (
    "import sys\n\nfrom swe_abs_jail.main import main\n\nraise SystemExit(main(sys.argv[1]))\n"
)


def _runner_archive() -> bytes:
    """The jail package as one zip file that Python runs directly (its ``__main__.py`` calls
    ``swe_abs_jail.main``); reproducible: sorted names, a fixed date."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        entries = {"__main__.py": _JAIL_MAIN}
        for path in sorted(_JAIL.glob("*.py")):
            entries[f"swe_abs_jail/{path.name}"] = path.read_text(encoding="utf-8")
        for name, text in sorted(entries.items()):
            zf.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), text)
    return buf.getvalue()


RUNNER_SOURCE: bytes = _runner_archive()
"""The warm runner as shipped to the sandbox (``runner.py``, a zip archive of :mod:`._jail`)."""


class ExecResultLike(Protocol):
    @property
    def returncode(self) -> int: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...


class SandboxLike(Protocol):
    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,  # noqa: A002 - inspect's name
        cwd: str | None = None,
        env: dict[str, str] = ...,
        user: str | None = None,
        timeout: int | None = None,
    ) -> Any: ...

    async def write_file(self, file: str, contents: str | bytes) -> None: ...

    async def read_file(self, file: str, text: bool = True) -> Any: ...


class RunnerError(RuntimeError):
    """The jail runner itself failed (an infrastructure error, not a candidate's fault)."""


@dataclass(frozen=True)
class RunnerEnv:
    """How commands run in the sandbox: its Python and the package folders on its path."""

    python: str = "python3"
    pythonpath: tuple[str, ...] = ()
    workdir: str = ""  # the sandbox's working directory; "" = ask the sandbox (`pwd`)
    env: dict[str, str] = field(default_factory=dict)

    def environment(self, extra: tuple[str, ...] = ()) -> dict[str, str]:
        path = ":".join([*extra, *self.pythonpath])
        out = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", **self.env}
        if path:
            out["PYTHONPATH"] = path
        return out


def tar_files(files: Mapping[str, bytes], root: str) -> bytes:
    """An uncompressed tar of `files` (path → bytes) under `root/`, reproducible (mtime 0, sorted)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{root}/{path}")
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Workspace:
    """An instance's trees in one sandbox; texts of the base tree are kept on the host so that
    patches are applied (and judged malformed) here, without running anything."""

    def __init__(
        self,
        box: SandboxLike,
        instance: Instance,
        base_files: Mapping[str, bytes] | None,
        env: RunnerEnv,
        *,
        source_dir: str | None = None,
    ) -> None:
        """``base_files``: the base tree, written into the sandbox (offline instances); or None
        with ``source_dir``: the base tree is already in the sandbox there (a SWE-bench image's
        /testbed at its base commit) and only the files the patches touch are read back."""
        if base_files is None and not source_dir:
            raise ValueError(
                "Workspace: give the base tree's files or the sandbox folder holding it"
            )
        self.box = box
        self.instance = instance
        self.base_files = dict(base_files or {})
        self.source_dir = source_dir
        self.env = env
        self.texts: dict[str, str] = {}
        for path, data in self.base_files.items():
            if path.endswith((".py", ".txt", ".cfg", ".toml", ".ini", ".rst", ".md")):
                try:
                    self.texts[path] = data.decode("utf-8")
                except UnicodeDecodeError:
                    pass
        self.gold_changes: dict[str, str] = {}
        self.test_changes: dict[str, str] = {}
        self.gold_texts: dict[str, str] = {}
        if base_files is not None:
            self._derive()
        self.commands = 0
        self._root = ""
        self.timings: list[tuple[str, int, float, dict[str, Any]]] = []
        self.exec_seconds = 0.0
        self._fresh = 0

    def _derive(self) -> None:
        inst = self.instance
        self.gold_changes = {
            p: t for p, t in apply_patch(self.texts, inst.patch).items() if t is not None
        }
        gold_texts = {**self.texts, **self.gold_changes}
        self.test_changes = (
            {p: t for p, t in apply_patch(gold_texts, inst.test_patch).items() if t is not None}
            if inst.test_patch.strip()
            else {}
        )
        self.gold_texts = {**gold_texts, **self.test_changes}

    async def _read_sources(self) -> None:
        """The texts of every file a patch of the instance touches, read from ``source_dir``."""
        from methods.swe_abs._diff import PatchError, parse_patch

        inst = self.instance
        paths: set[str] = set()
        for text in (inst.patch, inst.test_patch, inst.removed_tests_patch,
                     *(c.patch for c in inst.candidates)):  # fmt: skip
            try:
                paths |= {fp.source_path for fp in parse_patch(text) if fp.source_path}
            except PatchError:
                continue  # a malformed candidate is judged later
        for path in sorted(paths):
            try:
                self.texts[path] = await self.box.read_file(f"{self.source_dir}/{path}")
            except (FileNotFoundError, UnicodeDecodeError):
                continue
        self._derive()

    @property
    def root(self) -> str:
        return self._root or self.env.workdir or "/workspace"

    def path(self, *parts: str) -> str:
        return "/".join([self.root, *parts])

    def sys_path(self, tree: str) -> tuple[str, ...]:
        return tuple(
            self.path(tree) if p in ("", ".") else self.path(tree, p)
            for p in self.instance.sys_path
        )

    async def run(self, cmd: list[str], *, timeout: int, cwd: str | None = None) -> Any:
        started = time.monotonic()
        try:
            return await self.box.exec(
                cmd, cwd=cwd or self.root, env=self.env.environment(), timeout=timeout
            )
        finally:
            self.commands += 1
            self.exec_seconds += time.monotonic() - started

    async def prepare(self) -> None:
        """base/ and repo/ (gold tree) in the sandbox, and the runner script."""
        if not self.env.workdir and not self._root:  # bwrap/docker: /workspace; local: a tmp dir
            res = await self.box.exec(["pwd"], timeout=30)
            if res.returncode != 0 or not res.stdout.strip():
                raise RunnerError(
                    f"swe_abs: cannot find the sandbox's work dir: {res.stderr[-300:]}"
                )
            self._root = res.stdout.strip()
        await self.run(["rm", "-rf", "base", "repo"], timeout=120)
        if self.source_dir:
            if not self.gold_texts:
                await self._read_sources()
            res = await self.run(["cp", "-a", self.source_dir, "base"], timeout=600)
            if res.returncode != 0:
                raise RunnerError(
                    f"swe_abs: cannot copy the repository from {self.source_dir}: {res.stderr[-500:]}"
                )
        else:
            await self.box.write_file(self.path("base.tar"), tar_files(self.base_files, "base"))
            res = await self.run(["tar", "xf", "base.tar"], timeout=120)
            if res.returncode != 0:
                raise RunnerError(f"swe_abs: cannot unpack the base tree: {res.stderr[-500:]}")
        res = await self.run(["cp", "-a", "base", "repo"], timeout=120)
        if res.returncode != 0:
            raise RunnerError(f"swe_abs: cannot copy the base tree: {res.stderr[-500:]}")
        for path, text in {**self.gold_changes, **self.test_changes}.items():
            await self.box.write_file(self.path("repo", path), text)
        await self.box.write_file(self.path("runner.py"), RUNNER_SOURCE)

    async def write_tree_files(self, tree: str, files: Mapping[str, str | None]) -> None:
        for path, text in files.items():
            if text is None:
                await self.run(["rm", "-f", self.path(tree, path)], timeout=30)
            else:
                await self.box.write_file(self.path(tree, path), text)

    async def fresh_tree(self, files: Mapping[str, str | None]) -> str:
        """A copy of base/ with ``files`` written over it; returns the tree's folder name."""
        self._fresh += 1
        name = f"cand-{self._fresh}"
        res = await self.run(["cp", "-a", "base", name], timeout=120)
        if res.returncode != 0:
            raise RunnerError(f"swe_abs: cannot copy the base tree: {res.stderr[-500:]}")
        await self.write_tree_files(name, files)
        return name

    async def run_plan(
        self,
        tree: str,
        test_files: list[str],
        target_files: list[str],
        jobs: list[dict[str, Any]],
        *,
        timeout: int,
    ) -> dict[str, Any]:
        """Run the jail runner on ``tree`` with ``jobs``; raises TimeoutError when the whole
        exec overruns (the sandbox kills it), RunnerError when the runner itself broke."""
        started = time.monotonic()
        tag = f"{tree}-{self.commands}"
        result_path = self.path(f"result-{tag}.json")
        plan: dict[str, Any] = {
            "repo": self.path(tree),
            "sys_path": list(self.sys_path(tree)),
            "test_files": test_files,
            "target_files": target_files,
            "pytest_args": ["--tb=native", "-W", "ignore::DeprecationWarning"],
            "jobs": jobs,
            "result_path": result_path,
        }
        await self.box.write_file(self.path(f"plan-{tag}.json"), json.dumps(plan))
        res = await self.run(
            [self.env.python, self.path("runner.py"), self.path(f"plan-{tag}.json")],
            timeout=timeout,
        )
        if res.returncode != 0:
            raise RunnerError(
                f"swe_abs: the jail runner failed (exit {res.returncode}): "
                f"{(res.stderr or res.stdout)[-1500:]}"
            )
        try:
            text = await self.box.read_file(result_path)
        except FileNotFoundError as exc:
            raise RunnerError(f"swe_abs: the jail runner wrote no result ({exc})") from None
        result: dict[str, Any] = json.loads(text)
        self.timings.append(
            (tree, len(jobs), round(time.monotonic() - started, 2),
             {k: v.get("seconds") for k, v in result.get("jobs", {}).items()})
        )  # fmt: skip
        return result
