"""Escape suite: every test tries to break out of the sandbox through `exec` and checks on the
host that it could not. Each has a positive control, so it fails if isolation breaks.

It runs on the bwrap sandbox (both jail modes) and on the docker_api sandbox (`SANDBOX_KINDS`);
where a check looks at one provider's own mechanism (bwrap's host folders, uids and cgroups;
docker's container), it branches on the kind."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment
from tests.sandboxes._procs import wait_gone

SANDBOX_KINDS = ("bwrap", "docker")
run = asyncio.run
PROJECT = Path(__file__).resolve().parents[2]


def _is_bwrap(sb: object) -> bool:
    return isinstance(sb, BwrapSandboxEnvironment)


_CONNECT = """
import socket, sys, time
t = time.monotonic()
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5).close()
    print("CONNECTED")
except OSError as ex:
    print("FAILED", type(ex).__name__, ex)
print("SECONDS", round(time.monotonic() - t, 2))
"""


def _host_process_count() -> int:
    return sum(1 for e in os.scandir("/proc") if e.name.isdigit())


def _own_descendant_count() -> int:
    """Processes below this test process: other jobs on the host do not move this count."""
    return len(psutil.Process().children(recursive=True))


# ------------------------------------------------------------------------------------- network


def test_loopback_of_host_unreachable(sandbox: BwrapSandboxEnvironment) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        socket.create_connection(("127.0.0.1", port), timeout=2).close()  # control: host reaches it
        result = run(sandbox.exec(["python3", "-c", _CONNECT, "127.0.0.1", str(port)]))
    assert "CONNECTED" not in result.stdout, result
    assert "FAILED" in result.stdout, result


def test_outside_address_fails_fast(sandbox: BwrapSandboxEnvironment) -> None:
    start = time.monotonic()
    result = run(sandbox.exec(["python3", "-c", _CONNECT, "1.1.1.1", "53"]))
    assert "FAILED" in result.stdout and "CONNECTED" not in result.stdout, result
    assert time.monotonic() - start < 4, "an unreachable network must fail at once, not time out"


def test_only_loopback_interface(sandbox: BwrapSandboxEnvironment) -> None:
    host_ifaces = {
        ln.split(":")[0].strip() for ln in Path("/proc/net/dev").read_text().splitlines()[2:]
    }
    result = run(sandbox.exec(["cat", "/proc/net/dev"]))
    inside = {ln.split(":")[0].strip() for ln in result.stdout.splitlines()[2:]}
    assert inside == {"lo"}, (inside, host_ifaces)


# ------------------------------------------------------------------------------------- files


@pytest.mark.parametrize(
    "target",
    ["/escape.txt", "/usr/escape.txt", "/etc/escape.txt", "/usr/bin/escape", "/proc/escape"],
)
def test_writes_outside_work_dir_fail(sandbox: BwrapSandboxEnvironment, target: str) -> None:
    result = run(sandbox.exec(["sh", "-c", f"echo pwned > {target}"]))
    assert not result.success, result
    assert not Path(target).exists()
    with pytest.raises(PermissionError):
        run(sandbox.write_file(target, "pwned"))
    assert not Path(target).exists()


def test_project_dir_read_only_when_bound(
    make_sandbox: Callable[..., BwrapSandboxEnvironment],
) -> None:
    marker = PROJECT / "sandboxes" / "escape-marker.txt"
    hidden = make_sandbox()  # not bound: not even visible
    assert not run(hidden.exec(["ls", str(PROJECT)])).success
    bound = make_sandbox(BwrapConfig(ro_binds=[str(PROJECT)]))
    listed = run(bound.exec(["ls", str(PROJECT)]))
    assert listed.success and "pyproject.toml" in listed.stdout  # control: it is readable
    wrote = run(bound.exec(["sh", "-c", f"echo pwned > {marker}"]))
    assert not wrote.success and "Read-only" in wrote.stderr, wrote
    assert not marker.exists()
    assert not run(bound.exec(["rm", "-f", str(PROJECT / "pyproject.toml")])).success
    assert (PROJECT / "pyproject.toml").exists()


def test_home_and_root_invisible(sandbox: BwrapSandboxEnvironment) -> None:
    host_home = Path(os.path.expanduser("~"))
    assert host_home.is_dir() and any(host_home.iterdir())  # control: the host's home has files
    for path in ("/root", "/home", str(host_home)):
        result = run(sandbox.exec(["ls", "-A", path]))
        assert not result.success and "No such file" in result.stderr, (path, result)
    with pytest.raises(FileNotFoundError):
        run(sandbox.read_file(str(host_home / ".bashrc")))
    env = run(sandbox.exec(["env"])).stdout
    assert str(host_home) not in env.replace("HOME=/workspace", "")


@pytest.mark.skipif(os.geteuid() != 0, reason="only meaningful when the harness runs as root")
def test_root_only_host_files_unreadable(sandbox: BwrapSandboxEnvironment) -> None:
    assert Path("/etc/shadow").read_bytes()  # control: the host (root) can read it
    result = run(sandbox.exec(["cat", "/etc/shadow"]))
    assert not result.success and "Permission denied" in result.stderr, result


def test_file_helpers_do_not_follow_links_to_host_files(sandbox: BwrapSandboxEnvironment) -> None:
    assert Path("/etc/shadow").exists() and Path("/etc/hostname").exists()  # control
    run(sandbox.exec(["sh", "-c", "ln -s /etc/shadow shadow; ln -s /etc/hostname host"]))
    with pytest.raises(PermissionError):
        run(sandbox.read_file("shadow"))  # resolved inside the sandbox, as the sample's uid
    with pytest.raises(PermissionError):
        run(sandbox.write_file("host", "pwned"))  # /etc is read-only inside
    assert "pwned" not in Path("/etc/hostname").read_text()
    hard = run(sandbox.exec(["ln", "/etc/passwd", "passwd-link"]))
    assert not hard.success, hard  # no hard link to a host file (another, read-only mount)


def test_no_harness_descriptor_inherited(sandbox: BwrapSandboxEnvironment, tmp_path: Path) -> None:
    secret = tmp_path / "harness-secret.txt"
    secret.write_text("harness only")
    fd = os.open(secret, os.O_RDONLY)
    os.set_inheritable(fd, True)  # even an inheritable descriptor of the harness stays outside
    try:
        listing = run(sandbox.exec(["sh", "-c", "ls -l /proc/self/fd/"])).stdout
    finally:
        os.close(fd)
    assert "harness-secret" not in listing, listing
    fds = [ln.split()[-3] for ln in listing.splitlines() if "->" in ln]
    assert set(fds) <= {"0", "1", "2", "3"}, listing  # stdio and ls's own directory


def test_other_samples_unreachable(make_sandbox: Callable[..., BwrapSandboxEnvironment]) -> None:
    first, second = make_sandbox(), make_sandbox()
    run(first.write_file("mine.txt", "first's"))
    run(first.exec(["sh", "-c", "sleep 2929.5 >/dev/null 2>&1 &"], timeout=10))
    if _is_bwrap(first):
        assert str(first.root) not in run(second.exec(["sh", "-c", "ls -R / 2>/dev/null"])).stdout
    found = run(second.exec(["sh", "-c", "find / -name 'mine.tx?' 2>/dev/null"]))
    assert "mine.txt" not in found.stdout, found
    listed = run(second.exec(["ps", "-eo", "args"]))
    assert listed.success and "2929.5" not in listed.stdout, listed
    kill = run(second.exec(["sh", "-c", "kill -9 -1; echo done"]))
    assert "done" in kill.stdout or kill.returncode != 0
    if getattr(first.config, "mode", "persistent") == "persistent":  # first's process is alive
        alive = run(first.exec(["sh", "-c", "ps -eo args | grep -c '^sleep 2929.5'"]))
        assert alive.stdout.strip() == "1", alive


# ------------------------------------------------------------------------------------- processes


def test_own_pid_namespace(sandbox: BwrapSandboxEnvironment) -> None:
    result = run(sandbox.exec(["sh", "-c", "echo $$; ls /proc | grep -E '^[0-9]+$'"]))
    lines = result.stdout.split()
    shell_pid, pids = int(lines[0]), [int(p) for p in lines[1:]]
    # docker's runc spends a few pids of the container's namespace on every exec
    low = 10 if _is_bwrap(sandbox) else 100
    assert shell_pid < low, result
    assert len(pids) < 8 and max(pids) < low, pids  # only the sandbox's own few processes
    assert _host_process_count() > len(pids)
    init = run(sandbox.exec(["cat", "/proc/1/cmdline"])).stdout
    assert ("bwrap" if _is_bwrap(sandbox) else "docker-init") in init, init


def test_runaway_loop_killed_at_time_limit(sandbox: BwrapSandboxEnvironment) -> None:
    marker = "31337.4242"
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        run(sandbox.exec(["sh", "-c", f"sleep {marker} & while :; do :; done"], timeout=2))
    assert time.monotonic() - start < 6
    assert wait_gone(marker) == [], "a background child outlived the timeout"
    if sandbox.uid is not None:
        assert not [p for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == sandbox.uid]
    assert run(sandbox.exec(["echo", "alive"])).stdout == "alive\n"  # the sandbox still works


def _uid_of(pid: str) -> int | None:
    try:
        for line in Path("/proc", pid, "status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def test_process_limit_enforced(sandbox: BwrapSandboxEnvironment) -> None:
    script = """
import os, time
n = 0
for _ in range(500):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30); os._exit(0)
    n += 1
print(n)
"""
    result = run(sandbox.exec(["python3", "-c", script], timeout=60))
    forked = int(result.stdout.strip())
    assert 0 < forked < 80, result  # max_processes=64 (+ a few for bwrap itself)


def test_fork_bomb_stopped_host_fine(sandbox: BwrapSandboxEnvironment) -> None:
    baseline = _own_descendant_count()
    script = "bomb_31415() { bomb_31415 | bomb_31415 & }; bomb_31415; sleep 60"
    with pytest.raises(TimeoutError):
        run(sandbox.exec(["bash", "-c", script], timeout=5))
    subprocess.run(["true"], check=True, timeout=10)  # the host can still spawn processes
    # anywhere on the host (re-parented orphans included): nothing of the bomb is left
    assert wait_gone("bomb_31415", 10) == [], "fork bomb processes outlived the sandbox call"
    # and nothing else it left below this process (a persistent sandbox keeps its own few)
    assert _own_descendant_count() <= baseline + 2
    assert run(sandbox.exec(["echo", "alive"])).stdout == "alive\n"


def test_memory_hog_stopped(sandbox: BwrapSandboxEnvironment) -> None:
    hog = "b = bytearray(4 * 1024**3); print('ALLOCATED', len(b))"
    result = run(sandbox.exec(["python3", "-c", hog], timeout=60))
    assert not result.success and "ALLOCATED" not in result.stdout, result
    touch = """
chunks = []
for i in range(40):  # 4 GB in touched 100 MB chunks
    chunks.append(bytearray(100 * 1024**2))
    for j in range(0, len(chunks[-1]), 4096):
        chunks[-1][j] = 1
print('SURVIVED')
"""
    result = run(sandbox.exec(["python3", "-c", touch], timeout=120))
    assert not result.success and "SURVIVED" not in result.stdout, result


def test_memory_split_across_processes_stopped(sandbox: BwrapSandboxEnvironment) -> None:
    if _is_bwrap(sandbox) and sandbox.cgroup is None:
        pytest.skip("without a memory cgroup the limit is per process (RLIMIT_AS); see README")
    script = """
import os, time
for _ in range(8):  # 8 x 200 MB > the sample's 512 MB
    if os.fork() == 0:
        b = bytearray(200 * 1024**2)
        for j in range(0, len(b), 4096): b[j] = 1
        time.sleep(5); os._exit(0)
ok = 0
for _ in range(8):
    ok += os.wait()[1] == 0
print('OK', ok)
"""
    result = run(sandbox.exec(["python3", "-c", script], timeout=60))
    assert "OK 8" not in result.stdout, result


# ------------------------------------------------------------------------------------- cleanup


def test_cleanup_removes_work_dir(make_sandbox: Callable[..., BwrapSandboxEnvironment]) -> None:
    sb = make_sandbox()
    run(sb.write_file("x/y.txt", "data"))
    run(sb.exec(["sh", "-c", "sleep 4242.77 & disown; echo started"], timeout=5))
    if not _is_bwrap(sb):  # docker: the container (and its tmpfs work dir) is removed
        from sandboxes.docker import DockerSandboxEnvironment, docker_client

        assert run(sb.read_file("x/y.txt")) == "data"
        run(DockerSandboxEnvironment.sample_cleanup("test", None, {"default": sb}, False))
        found = docker_client().api.containers(all=True, filters={"id": sb.container_id})
        assert found == [], found
        assert wait_gone("4242.77") == []
        return
    root, cgroup = sb.root, sb.cgroup
    assert (root / "workspace" / "x" / "y.txt").exists()
    run(BwrapSandboxEnvironment.sample_cleanup("test", None, {"default": sb}, False))
    assert not root.exists()
    assert wait_gone("4242.77") == []
    if cgroup is not None:
        assert not any(d.exists() for d in cgroup.dirs)


# ------------------------------------------------------------------------------------- hardening
# Each test below failed on the sandbox before the hardening of issue 18 and passes after it.

_PRELOAD_C = r"""
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void probe(void) {
    char comm[64] = "", cap[64] = "?", line[256];
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) { if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0; fclose(f); }
    f = fopen("/proc/self/status", "r");
    if (f) { while (fgets(line, sizeof line, f)) if (!strncmp(line, "CapEff:", 7))
                 sscanf(line + 7, "%63s", cap);
             fclose(f); }
    fprintf(stderr, "LOADED comm=%s uid=%d euid=%d capeff=%s\n", comm, getuid(), geteuid(), cap);
    if (access("/etc/shadow", R_OK) == 0) fprintf(stderr, "SHADOW-READABLE comm=%s\n", comm);
}
"""


@pytest.fixture(scope="module")
def preload_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A shared library whose constructor writes to stderr who loaded it (and whether it could
    read /etc/shadow): the exec's stderr, or the jail's log for the exec server and its launcher."""
    import shutil

    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build the LD_PRELOAD probe library")
    folder = tmp_path_factory.mktemp("preload")
    (folder / "probe.c").write_text(_PRELOAD_C)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(folder / "probe.so"),
                    str(folder / "probe.c")], check=True, capture_output=True)  # fmt: skip
    return folder / "probe.so"


def _preload_lines(sb: BwrapSandboxEnvironment, stderr: str) -> list[str]:
    jail_log = sb.root / "jail.log" if _is_bwrap(sb) else None
    text = stderr + (jail_log.read_text(errors="replace") if jail_log and jail_log.exists() else "")
    return [ln for ln in text.splitlines() if ln.startswith(("LOADED", "SHADOW"))]


def _assert_only_unprivileged(sb: BwrapSandboxEnvironment, lines: list[str]) -> None:
    assert lines, "control: the library was never loaded, not even into the command"
    assert not [ln for ln in lines if "SHADOW-READABLE" in ln], lines
    for line in lines:
        assert line.startswith("LOADED"), lines
        fields = dict(f.split("=", 1) for f in line.split()[1:])
        assert fields["capeff"] == "0000000000000000", lines
        assert fields["comm"] not in ("setpriv", "bwrap", "env"), lines
        if sb.uid is not None:
            assert int(fields["uid"]) == sb.uid and int(fields["euid"]) == sb.uid, lines


def test_caller_env_reaches_only_the_command(
    make_sandbox: Callable[..., BwrapSandboxEnvironment], preload_library: Path
) -> None:
    """issue 18.1: exec(env={"LD_PRELOAD": <sample-written library>}) loaded it into `setpriv`
    while it ran as uid 0 with capabilities (per_exec)."""
    sb = make_sandbox()
    run(sb.write_file("probe.so", preload_library.read_bytes()))  # the sample's own library
    result = run(sb.exec(["sh", "-c", "true"], env={"LD_PRELOAD": "/workspace/probe.so"}))
    assert result.success, result
    _assert_only_unprivileged(sb, _preload_lines(sb, result.stderr))


def test_config_env_reaches_only_the_command(
    make_sandbox: Callable[..., BwrapSandboxEnvironment], preload_library: Path
) -> None:
    """issue 18.1, persistent mode: BwrapConfig(env=...) reached `setpriv` and the exec server
    (which holds CAP_SETUID) when the jail started."""
    sb = make_sandbox(BwrapConfig(files={"probe.so": str(preload_library)},
                                  env={"LD_PRELOAD": "/workspace/probe.so"}))  # fmt: skip
    result = run(sb.exec(["sh", "-c", "true"]))
    assert result.success, result
    _assert_only_unprivileged(sb, _preload_lines(sb, result.stderr))


def _mounts(sb: BwrapSandboxEnvironment) -> list[tuple[str, str]]:
    """(mount point, per-mount options) inside the sandbox; where mounts are stacked on one point
    (docker's runc binds /proc read-only over itself), the top one (listed last) is what counts."""
    info = run(sb.exec(["cat", "/proc/self/mountinfo"])).stdout
    top = {ln.split()[4]: ln.split()[5] for ln in info.splitlines()}
    return list(top.items())


def test_proc_read_only(sandbox: BwrapSandboxEnvironment) -> None:
    """issue 18.2: /proc/sys (and /proc/sysrq-trigger) were writable for uid 0 inside the jail."""
    under_proc = [(p, o) for p, o in _mounts(sandbox) if p == "/proc" or p.startswith("/proc/")]
    assert "/proc" in [p for p, _ in under_proc], under_proc  # control: /proc is mounted
    # docker (runc) masks files with a bind of a null device after making /proc read-only;
    # writing to one writes nowhere (test below: the masked files read empty)
    masked = set() if _is_bwrap(sandbox) else {"/proc/keys", "/proc/key-users", "/proc/timer_list"}
    for point, options in under_proc:
        assert options.split(",")[0] == "ro" or point in masked, (point, options)
    wrote = run(sandbox.exec(["sh", "-c", "echo x > /proc/sys/kernel/core_pattern"]))
    assert not wrote.success and "Read-only" in wrote.stderr, wrote
    assert run(sandbox.exec(["cat", "/proc/self/status"])).success  # /proc still readable
    keys = run(sandbox.exec(["sh", "-c", "cat /proc/keys /proc/key-users 2>/dev/null | wc -c"]))
    assert keys.stdout.strip() == "0", keys  # masked


_KEYS = r"""
import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = json.loads(sys.argv[1])
out = {}
def sys_(name, *a):
    ctypes.set_errno(0)
    r = libc.syscall(NR[name], *a)
    return r if r >= 0 else -ctypes.get_errno()
key = sys_("request_key", b"user", sys.argv[2].encode(), None, 0)
out["request"] = key
if key > 0:
    buf = ctypes.create_string_buffer(256)
    n = sys_("keyctl", 11, ctypes.c_long(key), buf, 256)  # KEYCTL_READ
    out["read"] = buf.raw[:n].decode() if n > 0 else n
out["plant"] = sys_("add_key", b"user", b"planted-by-sample", b"evil", 4, ctypes.c_long(-3))
out["session"] = sys_("keyctl", 0, ctypes.c_long(-3), 0)  # KEYCTL_GET_KEYRING_ID, session
print(json.dumps(out))
"""


def test_kernel_keyring_not_shared(make_sandbox: Callable[..., BwrapSandboxEnvironment]) -> None:
    """issue 18.3: a sample could read the harness's session key (request_key + KEYCTL_READ) and
    plant keys another sample finds."""
    import ctypes
    import json

    from sandboxes.bwrap._seccomp import syscall_table

    numbers = syscall_table().numbers
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    # a fresh session keyring for this test process, so nothing lands in the user's own
    assert libc.syscall(numbers["keyctl"], 1, None) > 0  # KEYCTL_JOIN_SESSION_KEYRING
    secret = f"harness-secret-{os.getpid()}"
    key = libc.syscall(numbers["add_key"], b"user", secret.encode(), b"s3cret", 6, -3)
    assert key > 0  # control: the harness holds a readable session key
    first, second = make_sandbox(), make_sandbox()
    found = json.loads(
        run(first.exec(["python3", "-c", _KEYS, json.dumps(numbers), secret])).stdout
    )
    assert found["request"] < 0 and "read" not in found, found  # the harness's key: unreachable
    assert found["plant"] < 0 and found["session"] < 0, found  # no keyring access at all
    other = json.loads(
        run(second.exec(["python3", "-c", _KEYS, json.dumps(numbers), "planted-by-sample"])).stdout
    )
    assert other["request"] < 0, other


def test_seccomp_denies_each_syscall(make_sandbox: Callable[..., BwrapSandboxEnvironment]) -> None:
    """issue 18.4: no seccomp filter (nested user namespaces gave a full capability set). Every
    denied syscall is called inside the sandbox; the same calls without the filter are the
    control that shows the filter, not the kernel, refused them."""
    import json

    from sandboxes.bwrap._seccomp import syscall_table
    from tests.sandboxes._syscall_probe import CAPABILITY_FIRST, PROBE

    numbers = json.dumps(syscall_table().numbers)

    def probe(config: BwrapConfig) -> dict[str, str]:
        sb = make_sandbox(config)
        result = run(sb.exec(["python3", "-c", PROBE, numbers]))
        assert result.success, result
        status = run(sb.exec(["grep", "^Seccomp:", "/proc/self/status"])).stdout.split()
        return {**json.loads(result.stdout), "mode": status[1]}

    filtered = probe(BwrapConfig())
    assert filtered.pop("mode") == "2", filtered  # 2: a seccomp filter is loaded
    unfiltered = probe(BwrapConfig(seccomp=False))
    assert unfiltered.pop("mode") == "0"
    assert filtered.pop("allowed:personality_query") == "ok"
    assert filtered.pop("allowed:socket_unix") == "ok"
    for name, got in filtered.items():
        assert got == ("ENOSYS" if name == "clone3" else "EPERM"), (name, got)
        if name not in CAPABILITY_FIRST:
            assert unfiltered[name] != got, (name, "the kernel gives the same without the filter")
    assert len(filtered) >= 55
    nested = run(make_sandbox().exec(["unshare", "-Ur", "id"]))
    assert not nested.success and "uid=0" not in nested.stdout, nested


def test_cleanup_survives_what_the_sample_built(
    make_sandbox: Callable[..., BwrapSandboxEnvironment],
) -> None:
    """issue 18.5: a 3000-level directory made sample_cleanup (and the stale-sample reaper) raise
    RecursionError and leave the folder."""
    build = """
import os
for top in ("/workspace", "/tmp"):
    os.chdir(top)
    for i in range(3000):
        os.mkdir("d"); os.chdir("d")
        if i % 500 == 0:
            os.mkfifo("fifo"); os.symlink("/etc/passwd", "link"); open("f", "w").write("x")
    os.chdir(top + "/" + "/".join(["d"] * 10))
    os.mkdir("locked"); open("locked/f", "w").close(); os.chmod("locked", 0)
print("BUILT")
"""
    for stale in (False, True):
        sb = make_sandbox()
        assert run(sb.exec(["python3", "-c", build], timeout=120)).stdout == "BUILT\n"
        if not _is_bwrap(sb):  # docker: removing the container removes its tmpfs mounts
            from sandboxes.docker import DockerSandboxEnvironment, docker_client

            run(DockerSandboxEnvironment.sample_cleanup("test", None, {"default": sb}, False))
            found = docker_client().api.containers(all=True, filters={"id": sb.container_id})
            assert found == [], found
            return  # stale containers: tests/sandboxes/docker/test_docker_reaper.py
        root = sb.root
        if stale:  # its harness "died": the next run's reaper removes it
            from sandboxes.bwrap import reap_stale_samples

            owner = root / "owner"
            owner.write_text("999999999:0\n" + owner.read_text().split("\n", 1)[1])
            assert reap_stale_samples() >= 1
        else:
            run(BwrapSandboxEnvironment.sample_cleanup("test", None, {"default": sb}, False))
        assert not root.exists(), f"{root} left behind (stale={stale})"


@pytest.mark.skipif(os.geteuid() != 0, reason="the disk quota (a tmpfs mount) needs root")
def test_disk_quota(make_sandbox: Callable[..., BwrapSandboxEnvironment]) -> None:
    """issue 18.6: with max_file_mb=1 a sample wrote 24 MiB; work dirs had no size limit."""
    sb = make_sandbox(BwrapConfig(disk_mb=8, max_file_mb=1))
    fill = "for i in $(seq 24); do head -c 1048576 /dev/zero > f$i || break; done; du -sk ."
    result = run(sb.exec(["sh", "-c", fill], timeout=60))
    assert "No space left" in result.stderr, result
    assert int(result.stdout.split()[0]) <= 8 * 1024, result
    if _is_bwrap(sb):
        more = run(sb.exec(["sh", "-c", "head -c 1048576 /dev/zero > /tmp/more"]))
        assert not more.success and "No space left" in more.stderr  # /tmp shares the quota
    else:  # docker: /tmp is a tmpfs of its own, a quarter of disk_mb
        more = run(sb.exec(["sh", "-c", fill.replace("> f$i", "> /tmp/f$i")], timeout=60))
        assert "No space left" in more.stderr, more
    with pytest.raises(OSError, match="No space left"):
        run(sb.write_file("big.bin", b"x" * 1_000_000))
    run(sb.exec(["sh", "-c", "rm -f f*"]))
    run(sb.write_file("small.txt", "fits again"))  # freed space is usable again
    assert run(sb.read_file("small.txt")) == "fits again"


def test_open_files_capped_by_host_file_table(sandbox: BwrapSandboxEnvironment) -> None:
    """issue 18.7: 256 processes x RLIMIT_NOFILE 20000 was twice the host's file table."""
    file_max = int(Path("/proc/sys/fs/file-max").read_text())
    limit = int(run(sandbox.exec(["sh", "-c", "ulimit -Hn"])).stdout)
    assert limit * sandbox.config.max_processes <= file_max // 2, (limit, file_max)
    expected = sandbox.open_files if _is_bwrap(sandbox) else sandbox.config.max_open_files
    assert limit == expected <= sandbox.config.max_open_files
    opened = run(sandbox.exec(["python3", "-c", """
import os
fds = []
try:
    while True:
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as ex:
    print(len(fds), ex.errno)
"""]))  # fmt: skip
    count, err = opened.stdout.split()
    assert int(count) < limit and err == "24", opened  # EMFILE


def test_special_files_refused_at_once(
    make_sandbox: Callable[..., BwrapSandboxEnvironment],
) -> None:
    """issue 18.8: a FIFO at the path made read_file/write_file block up to the full timeout."""
    sb = make_sandbox(BwrapConfig(timeout_s=20))
    assert run(sb.exec(["sh", "-c", "mkfifo pipe /tmp/pipe && ln -s pipe link"])).success
    for path in ("pipe", "/tmp/pipe", "link", "/dev/zero", "/dev/null"):
        start = time.monotonic()
        with pytest.raises(PermissionError, match="not a regular file") as read:
            run(sb.read_file(path, text=False))
        assert type(read.value).__name__ == "NotRegularFileError"
        if path != "/dev/null":  # /dev/null is read-only for the write: /dev is not the sample's
            with pytest.raises(PermissionError, match="not a regular file"):
                run(sb.write_file(path, "data"))
        assert time.monotonic() - start < 10, path
    run(sb.write_file("plain.txt", "ok"))  # control: regular files still work
    assert run(sb.read_file("plain.txt")) == "ok"
