"""Workspace bookkeeping without a real sandbox: a fake box records the commands; patches are
applied on the host; a repository already in the sandbox (a SWE-bench image) is read back."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from methods.swe_abs import Candidate, RunnerEnv, Workspace, instance_from_record, make_patch

SRC = "def f(x):\n    return x\n"
GOLD = make_patch("pkg/m.py", SRC, "def f(x):\n    return x + 1\n")
TESTS = make_patch(
    "tests/test_m.py",
    "import pkg.m\n",
    "import pkg.m\n\n\ndef test_f():\n    assert pkg.m.f(1) == 2\n",
)


class FakeBox:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = dict(files)
        self.commands: list[list[str]] = []

    async def exec(self, cmd, input=None, cwd=None, env=None, user=None, timeout=None):  # noqa: A002
        self.commands.append(cmd)
        return SimpleNamespace(returncode=0, stdout="/work\n" if cmd == ["pwd"] else "", stderr="")

    async def write_file(self, file, contents):
        self.files[file] = contents

    async def read_file(self, file, text=True):
        if file not in self.files:
            raise FileNotFoundError(file)
        return self.files[file]


def _instance(**extra):
    return instance_from_record(
        {
            "instance_id": "o__r-1",
            "repo": "o/r",
            "base_commit": "abc123",
            "patch": GOLD,
            "test_patch": TESTS,
            "problem_statement": "f is off by one",
            "FAIL_TO_PASS": '["tests/test_m.py::test_f"]',
            "PASS_TO_PASS": "[]",
            **extra,
        }  # fmt: skip
    )


def test_offline_tree_is_written_and_patched_on_the_host():
    box = FakeBox({})
    ws = Workspace(box, _instance(), {"pkg/m.py": SRC.encode(), "tests/test_m.py": b"import pkg.m\n"},
                   RunnerEnv(pythonpath=("/site",), workdir="/workspace"))  # fmt: skip
    assert ws.gold_changes == {"pkg/m.py": "def f(x):\n    return x + 1\n"}
    assert "def test_f" in ws.gold_texts["tests/test_m.py"]
    asyncio.run(ws.prepare())
    assert "/workspace/base.tar" in box.files and "/workspace/runner.py" in box.files
    assert box.files["/workspace/repo/pkg/m.py"].endswith("x + 1\n")
    assert ["cp", "-a", "base", "repo"] in box.commands


def test_repository_already_in_the_sandbox_is_read_back():
    box = FakeBox({"/testbed/pkg/m.py": SRC, "/testbed/tests/test_m.py": "import pkg.m\n"})
    cand = Candidate("c", make_patch("pkg/m.py", SRC, "def f(x):\n    return 1 + x\n"), "correct")
    inst = _instance()
    inst = type(inst)(**{**inst.__dict__, "candidates": (cand,)})
    ws = Workspace(box, inst, None, RunnerEnv(), source_dir="/testbed")
    asyncio.run(ws.prepare())
    assert ws.root == "/work"  # asked the sandbox
    assert ["cp", "-a", "/testbed", "base"] in box.commands
    assert set(ws.texts) == {"pkg/m.py", "tests/test_m.py"}
    assert ws.gold_changes["pkg/m.py"].endswith("x + 1\n")
    assert box.files["/work/repo/tests/test_m.py"].count("def test_f") == 1
