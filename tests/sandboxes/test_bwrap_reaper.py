"""The host reaper (`_reaper.py`): folders, processes, mounts and cgroups left by dead harness
processes, and bwrap processes orphaned to a harness that is a child subreaper (or PID 1)."""

from __future__ import annotations

import asyncio
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sandboxes.bwrap import BwrapSandboxEnvironment, reap_stale_samples
from sandboxes.bwrap._disk import mounts_under
from sandboxes.bwrap._reaper import ORPHAN_AGE_S, PREFIX, owner_alive, owner_token, processes_of

run = asyncio.run
Factory = Callable[..., BwrapSandboxEnvironment]
PROJECT = Path(__file__).resolve().parents[2]


def _dead_pid() -> int:
    return int(subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True).stdout)


def test_owner_token_survives_pid_reuse() -> None:
    me = owner_token()
    assert owner_alive(me)
    assert not owner_alive(f"{_dead_pid()}:123")
    pid, _, start = me.partition(":")
    assert not owner_alive(f"{pid}:{int(start) + 1}")  # same pid, another process: reaped
    assert owner_alive(pid)  # older folders hold a bare pid


def test_stale_samples_of_dead_harness_reaped(make_sandbox: Factory) -> None:
    live, stale = make_sandbox(), make_sandbox()
    run(stale.exec(["sh", "-c", "sleep 777.125 >/dev/null 2>&1 &"], timeout=10))
    owner = stale.root / "owner"
    owner.write_text(f"{_dead_pid()}:0\n" + owner.read_text().split("\n", 1)[1])
    assert reap_stale_samples() >= 1
    assert not stale.root.exists() and not mounts_under(stale.root)
    assert live.root.exists()  # a sample of a running harness is never touched
    assert run(live.exec(["echo", "alive"])).stdout == "alive\n"
    if stale.uid is not None:
        assert processes_of(stale.uid) == []
    if stale.cgroup is not None:
        assert not any(d.exists() for d in stale.cgroup.dirs)


def test_ownerless_sample_folders_reaped_only_when_old(bwrap_ok: None) -> None:
    """A harness killed between creating a sample folder and writing its owner file leaves a
    folder nobody owns: removed once it is old, never while it may still be being created."""
    old = Path(tempfile.mkdtemp(prefix=PREFIX))
    fresh = Path(tempfile.mkdtemp(prefix=PREFIX))
    try:
        (old / "workspace").mkdir()
        (old / "workspace" / "f.txt").write_text("x")
        stale = time.time() - ORPHAN_AGE_S - 60
        os.utime(old, (stale, stale))
        reap_stale_samples()
        assert not old.exists()
        assert fresh.exists()
    finally:
        for d in (old, fresh):
            if d.exists():
                shutil.rmtree(d)


def test_orphan_cgroups_reaped(bwrap_ok: None) -> None:
    """A sample cgroup whose sample folder is gone (harness killed mid-cleanup) is removed."""
    from sandboxes.bwrap._cgroup import create_sample_cgroup

    name = f"{PREFIX}gone{os.getpid()}"
    orphan = create_sample_cgroup(name, memory_mb=64, max_processes=8)
    if orphan is None:
        pytest.skip("cgroups are not usable here (needs root and writable memory/pids cgroups)")
    try:
        assert all(d.is_dir() for d in orphan.dirs)  # control: it exists before the reap
        assert not Path(tempfile.gettempdir(), name).exists()
        reap_stale_samples()
        assert not any(d.exists() for d in orphan.dirs)
    finally:
        orphan.remove()


# A harness that is a child subreaper (as PID 1 of a container is) receives bwrap's orphans.
_SUBREAPER_RUN = """
import asyncio, ctypes, json, os, sys
from pathlib import Path
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment

def children():
    found = []
    for tid in os.listdir("/proc/self/task"):
        found += Path(f"/proc/self/task/{tid}/children").read_text().split()
    return len(found)

async def sample(mode):
    envs = await BwrapSandboxEnvironment.sample_init("t", BwrapConfig(mode=mode), {})
    box = envs["default"]
    for _ in range(3):
        await box.exec(["sh", "-c", "echo hi"])
    try:
        await box.exec(["sleep", "60"], timeout=1)  # a killed jail orphans its init too
    except TimeoutError:
        pass
    await BwrapSandboxEnvironment.sample_cleanup("t", None, envs, False)

async def main(mode, rounds):
    counts = []
    for _ in range(rounds):
        await asyncio.gather(*(sample(mode) for _ in range(4)))
        counts.append(children())
    print(json.dumps(counts))

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


@pytest.mark.parametrize("mode", ["persistent", "per_exec"])
def test_no_zombies_when_harness_is_a_subreaper(bwrap_ok: None, mode: str) -> None:
    """issue 19: `[bwrap] <defunct>` processes piled up in the harness until it exited."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_SUBREAPER_RUN), mode, "5"],
        capture_output=True, text=True, cwd=PROJECT, timeout=300,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    counts = [int(c) for c in done.stdout.strip().strip("[]").split(",")]
    assert max(counts) <= 1, counts  # 20 samples, 80 execs: no child left behind


def test_reap_orphans_is_a_no_op_without_subreaper() -> None:
    from sandboxes.bwrap import reap_orphans, receives_orphans

    libc = ctypes.CDLL(None)
    flag = ctypes.c_int(0)
    libc.prctl(37, ctypes.byref(flag), 0, 0, 0)
    assert receives_orphans() == (os.getpid() == 1 or bool(flag.value))
    if not receives_orphans():
        assert reap_orphans() == 0


def test_kill_9_of_harness_then_cleanup_leaves_nothing(bwrap_ok: None, tmp_path: Path) -> None:
    """issue 19: after `kill -9` of the harness in the middle of a run, `inspect sandbox cleanup
    bwrap` (or the next run's task_init) leaves no process, folder, mount or cgroup behind."""
    script = tmp_path / "harness.py"
    script.write_text(
        textwrap.dedent("""
        import asyncio, sys
        from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment
        async def sample(mode):
            envs = await BwrapSandboxEnvironment.sample_init("t", BwrapConfig(mode=mode), {})
            box = envs["default"]
            await box.exec(["sh", "-c", "sleep 3131.5 >/dev/null 2>&1 &"], timeout=10)
            await box.exec(["sleep", "3132.5"], timeout=600)
        async def main():
            jobs = [sample(m) for m in ("persistent", "per_exec") for _ in range(3)]
            await asyncio.gather(*jobs)
        asyncio.run(main())
    """)
    )
    harness = subprocess.Popen([sys.executable, str(script)], cwd=PROJECT,
                               env={**os.environ, "PYTHONPATH": str(PROJECT)})  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        mine: list[Path] = []
        while time.monotonic() < deadline:
            mine = [r for r in Path(tempfile.gettempdir()).glob(PREFIX + "*")
                    if (r / "owner").exists()
                    and (r / "owner").read_text().startswith(f"{harness.pid}:")]  # fmt: skip
            if len(mine) == 6 and _running("3132.5") >= 6:
                break
            time.sleep(0.2)
        assert len(mine) == 6, "control: the harness did not start its six samples"
        owners = {r: (r / "owner").read_text().split("\n") for r in mine}
    finally:
        harness.kill()
        harness.wait()
    uids = [int(o[1]) for o in owners.values() if o[1].isdigit()]
    cgroups = [Path(g) for o in owners.values() for g in o[2:] if g]
    done = subprocess.run([str(Path(sys.executable).parent / "inspect"), "sandbox", "cleanup",
                           "bwrap"], capture_output=True, text=True, cwd=PROJECT,
                          env={**os.environ, "PYTHONPATH": str(PROJECT)}, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (_running("3131.5") or _running("3132.5")):
        time.sleep(0.1)
    assert _running("3131.5") == 0 and _running("3132.5") == 0
    assert not [r for r in mine if r.exists()]
    assert not [m for r in mine for m in mounts_under(r)]
    assert not [c for c in cgroups if c.exists()]
    for uid in uids:
        assert processes_of(uid) == [] and processes_of(uid + 500_000_000) == []


def _running(marker: str) -> int:
    from tests.sandboxes._procs import host_pids_with

    return len(host_pids_with(marker))


_ORPHANS = r"""
import ctypes, json, os, shutil, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
from sandboxes.bwrap import _reaper as r
fake = os.path.join(sys.argv[1], "bwrap")  # a program whose process is named "bwrap"
shutil.copy("/bin/true", fake)
out = {}
with r.launching() as register:
    assert r._launching == 1
    mine = subprocess.Popen([fake])
    register(mine.pid)
    assert r._launching == 0  # registered: reaping may go on while the child runs
time.sleep(0.3)  # a zombie now, but ours to wait for
out["reaped_while_own_child_exists"] = r.reap_orphans()
out["own_child_status"] = mine.wait()
r.forget(mine.pid)
with r.launching() as register:
    early = subprocess.Popen([fake])
    register(early.pid)
time.sleep(0.3)  # a zombie whose owner gives up before waiting (a cancelled call)
r.forget(early.pid)
out["reaped_after_early_forget"] = r.reap_orphans()  # still ours: its waiter comes later
early.wait()
subprocess.run(["sh", "-c", f"{fake} & sleep 0.01 & exit 0"], check=True)  # two orphans
time.sleep(0.3)
out["reaped"] = r.reap_orphans()
def children():
    found = []
    for tid in os.listdir("/proc/self/task"):
        try:
            found += open(f"/proc/self/task/{tid}/children").read().split()
        except OSError:
            pass
    return found
out["left"] = len(children())  # the orphaned `sleep`: not named bwrap, not reaped
print(json.dumps(out))
"""


def test_reap_orphans_takes_only_orphaned_bwrap_zombies(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _ORPHANS, str(tmp_path)], capture_output=True,
                          text=True, cwd=PROJECT, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(PROJECT)})  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    out = __import__("json").loads(done.stdout)
    assert out == {"reaped_while_own_child_exists": 0, "own_child_status": 0,
                   "reaped_after_early_forget": 0, "reaped": 1, "left": 1}, out  # fmt: skip
