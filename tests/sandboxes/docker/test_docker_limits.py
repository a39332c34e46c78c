"""docker_api limits that did not hold (issue 26 §4): every writable place of the container
counts against `disk_mb`, and output a background process writes after its command returned
does not turn a successful exec into OutputLimitExceededError (as in bwrap)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

_FILL = r"""
import ctypes, errno, json, os
MIB = 1 << 20
def fill(folder):
    written, path = 0, os.path.join(folder, ".fill")
    try:
        with open(path, "wb", buffering=0) as f:
            while written < 256 * MIB:
                written += f.write(b"\0" * MIB)
    except OSError as ex:
        return written, errno.errorcode.get(ex.errno, str(ex.errno))
    return written, "ok"
# every mount point the sample's uid can create a file in, from the mount table
places = {}
for line in open("/proc/self/mountinfo"):
    point = line.split()[4]
    try:
        probe = os.path.join(point, ".probe-%d" % os.getpid())
        open(probe, "w").close(); os.unlink(probe)
    except OSError:
        continue
    places[point] = None
for point in sorted(places):
    places[point] = fill(point)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
rt.mq_open.restype = ctypes.c_int
mq = rt.mq_open(b"/harness-probe", os.O_CREAT | os.O_RDWR, 0o600, None)
print(json.dumps({"places": places, "mqueue": "ok" if mq >= 0 else errno.errorcode[ctypes.get_errno()]}))
"""


@pytest.fixture
def small_disk(docker_ok: None) -> Iterator[Any]:
    from sandboxes.docker import DockerConfig, DockerSandboxEnvironment

    config = DockerConfig(disk_mb=16, memory_mb=512, max_file_mb=1024, timeout_s=120)
    envs = asyncio.run(DockerSandboxEnvironment.sample_init("limits-test", config, {}))
    yield envs["default"]
    asyncio.run(DockerSandboxEnvironment.sample_cleanup("limits-test", None, envs, False))


def test_every_writable_place_counts_against_disk_mb(small_disk: Any) -> None:
    """Before: 16 MiB in /workspace + 16 MiB in /tmp + 64 MiB in /dev/shm with disk_mb=16, and a
    writable /dev/mqueue."""
    result = asyncio.run(small_disk.exec(["python3", "-c", _FILL], timeout=120))
    assert result.success, result
    report = json.loads(result.stdout)
    places = report["places"]
    assert {"/workspace", "/tmp"} <= set(places), places
    total = sum(written for written, _ in places.values())
    assert total <= 16 * 1024 * 1024, places
    assert all(outcome == "ENOSPC" for _, outcome in places.values()), places
    assert report["mqueue"] != "ok", report  # no POSIX message queues (kernel memory)


def test_background_output_after_return_is_discarded(small_disk: Any) -> None:
    """A background child that floods the command's stdout once the command has exited: the
    result is what the command wrote before it exited, not OutputLimitExceededError."""
    script = (
        "p=$$; (while kill -0 $p 2>/dev/null; do sleep 0.001; done; head -c 30000000 /dev/zero)"
        " & echo done"
    )
    for _ in range(3):
        result = asyncio.run(small_disk.exec(["sh", "-c", script], timeout=60))
        assert (result.returncode, result.stdout) == (0, "done\n"), result
    after = asyncio.run(small_disk.exec(["echo", "still fine"]))
    assert after.stdout == "still fine\n"


def test_disk_split_adds_up_and_compose_sums_its_tmpfs(tmp_path: Any) -> None:
    from sandboxes.docker import from_compose
    from sandboxes.docker._sandbox import disk_split

    for disk_mb in (1, 16, 64, 2048):
        sizes = disk_split(disk_mb)
        assert sum(sizes.values()) == disk_mb * 1024 and min(sizes.values()) > 0, sizes
    assert disk_split(2048)["/dev/shm"] == 64 * 1024  # Docker's own default at the default size
    compose = tmp_path / "compose.yaml"
    compose.write_text(
        "services:\n  default:\n    image: x\n    tmpfs:\n"
        "      - /tmp:size=512m,mode=1777\n      - /workspace:size=1g,mode=0777\n"
    )
    assert from_compose(compose).disk_mb == 1536  # the compose file's writable space, together
