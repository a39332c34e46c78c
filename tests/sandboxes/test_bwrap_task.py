"""A tiny inspect Task with sandbox="bwrap": inspect calls sample_init, copies Sample.files in
through write_file, the solver runs commands, and sample_cleanup removes the work dir."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import SandboxEnvironmentSpec, sandbox

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment

_seen_roots: list[str] = []


@solver
def probe_sandbox():  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        box = sandbox()
        _seen_roots.append(str(box.as_type(BwrapSandboxEnvironment).root))
        result = await box.exec(
            [
                "sh",
                "-c",
                "cat data.txt; python3 -c 'print(6*7)'; touch /usr/x 2>/dev/null || echo ro",
            ]
        )
        await box.write_file("out/answer.txt", result.stdout)
        state.metadata["answer"] = await box.read_file("out/answer.txt")
        return state

    return solve


@scorer(metrics=[accuracy()])
def answer_check():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value="C" if state.metadata.get("answer") == target.text else "I",
                     answer=state.metadata.get("answer"))  # fmt: skip

    return score


@pytest.mark.parametrize("mode", ["persistent", "per_exec"])
def test_task_runs_in_bwrap(bwrap_ok: None, tmp_path: Path, mode: str) -> None:
    config = BwrapConfig(memory_mb=512, timeout_s=30, mode=mode)  # type: ignore[arg-type]
    task = Task(
        dataset=[Sample(input="go", target="payload\n42\nro\n", files={"data.txt": "payload\n"})],
        solver=probe_sandbox(),
        scorer=answer_check(),
        sandbox=SandboxEnvironmentSpec("bwrap", config),
    )
    [log] = eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert log.results is not None
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    assert log.eval.sandbox is not None and log.eval.sandbox.type == "bwrap"
    assert log.eval.sandbox.config == config
    assert _seen_roots and not any(Path(r).exists() for r in _seen_roots)  # cleaned up


def test_task_by_name_string(bwrap_ok: None, tmp_path: Path) -> None:
    task = Task(dataset=[Sample(input="go", target="payload\n42\nro\n", files={"data.txt": "payload\n"})],
                solver=probe_sandbox(), scorer=answer_check(), sandbox="bwrap")  # fmt: skip
    [log] = eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert log.results is not None and log.results.scores[0].metrics["accuracy"].value == 1.0


_TWO_HUNDRED = r"""
import ctypes, json, os, sys
from pathlib import Path
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: as a harness that is PID 1
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import solver
from inspect_ai.util import SandboxEnvironmentSpec, sandbox
from sandboxes.bwrap import BwrapConfig

def children():
    pids = []
    for tid in os.listdir("/proc/self/task"):
        try:
            pids += Path(f"/proc/self/task/{tid}/children").read_text().split()
        except OSError:  # the thread ended meanwhile
            pass
    return len(pids)

seen = []

@solver
def work():
    async def solve(state, generate):
        seen.append(children())
        for _ in range(2):
            assert (await sandbox().exec(["sh", "-c", "echo hi"])).stdout == "hi\n"
        return state
    return solve

mode = sys.argv[1]
task = Task(dataset=[Sample(input="x", id=i) for i in range(200)], solver=work(),
            sandbox=SandboxEnvironmentSpec("bwrap", BwrapConfig(mode=mode, memory_mb=256)))
[log] = eval(task, model="mockllm/model", log_dir=sys.argv[2], display="none", max_samples=8)
assert log.status == "success", log.error
print(json.dumps({"seen": seen, "after": children()}))
"""


@pytest.mark.parametrize("mode", ["persistent", "per_exec"])
def test_200_samples_in_one_harness_process_count_flat(
    bwrap_ok: None, tmp_path: Path, mode: str
) -> None:
    """issue 19: `[bwrap] <defunct>` processes piled up in the harness until it exited (here the
    harness is a child subreaper, as PID 1 of a container is, so bwrap's orphans come to it)."""
    import json
    import os
    import subprocess
    import sys

    project = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _TWO_HUNDRED, mode, str(tmp_path)], capture_output=True,
        text=True, cwd=project, env={**os.environ, "PYTHONPATH": str(project)}, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    seen = result["seen"]
    assert len(seen) == 200
    # the harness's children while samples run: launchers of the samples in flight only
    assert max(seen[100:]) <= max(seen[:100]) + 4 and max(seen) <= 24, seen
    assert result["after"] <= 1, result
