"""Escape suite, caller-supplied paths (issue 26.1): a working directory, a file path or an
environment variable that the caller passes must be resolved inside the jail after privileges are
dropped, never by a privileged process that still sees the host.

Each attack tries to list the host's `/tmp`, read a secret file placed there and create a marker
file there; the host then checks that none of it happened (a positive control in the host's own
view proves the secret and the folder are there to be found). The suite runs on both bwrap jail
modes and on the docker_api sandbox (`SANDBOX_KINDS`)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sandboxes.bwrap import BwrapSandboxEnvironment

SANDBOX_KINDS = ("bwrap", "docker")
run = asyncio.run
_FDS = range(0, 10)  # bwrap's own descriptor 3 was the host's /proc (issue 26.1)
_OUTSIDE = "bwrap sandbox: cwd"


@dataclass(frozen=True)
class HostBait:
    """Two files in the host's /tmp (a secret, and one whose name no attack mentions: it shows
    up only in a listing) and a marker name there, which no sample may see or touch."""

    secret_name: str
    secret: str
    marker_name: str
    listed_name: str

    def attack(self, base: str) -> str:
        """A shell command that, if `base` is the host's root, lists its /tmp, reads the secret
        and creates the marker."""
        tmp = f"{base}/tmp"
        return (f"ls -a {tmp} 2>&1; cat {tmp}/{self.secret_name} 2>&1; "
                f"touch {tmp}/{self.marker_name} 2>&1; pwd 2>&1")  # fmt: skip

    def check(self, *outputs: object) -> None:
        text = "\n".join(str(o) for o in outputs)
        assert self.listed_name not in text, f"the host's /tmp was listed: {text[:2000]}"
        assert self.secret not in text, f"the host's secret was read: {text[:2000]}"
        assert not Path("/tmp", self.marker_name).exists(), "a file was created on the host"


@pytest.fixture
def bait() -> Iterator[HostBait]:
    token = secrets.token_hex(8)
    found = HostBait(f"bwrap-bait-{token}", f"host-secret-{token}", f"bwrap-marker-{token}",
                     f"bwrap-listed-{token[::-1]}")  # fmt: skip
    secret, listed = Path("/tmp", found.secret_name), Path("/tmp", found.listed_name)
    secret.write_text(found.secret)
    listed.write_text("")
    assert found.listed_name in {p.name for p in Path("/tmp").iterdir()}  # control
    try:
        yield found
    finally:
        secret.unlink()
        listed.unlink()
        Path("/tmp", found.marker_name).unlink(missing_ok=True)


def _exec_refused(sb: BwrapSandboxEnvironment, cmd: list[str], **kwargs: object) -> object:
    """Run the exec and return what the caller saw (result or exception), for the host-side
    checks. bwrap must refuse (an exception, or a failed command); docker's container is its whole
    world, so there only the host-side checks apply."""
    try:
        result = run(sb.exec(cmd, **kwargs))  # type: ignore[arg-type]
    except (ValueError, PermissionError, NotADirectoryError, FileNotFoundError) as ex:
        return ex
    if isinstance(sb, BwrapSandboxEnvironment):
        assert not result.success, f"the command ran in {kwargs}: {result}"
    return result


def test_cwd_through_proc_fd_refused(sandbox: BwrapSandboxEnvironment, bait: HostBait) -> None:
    """issue 26.1: cwd=/proc/self/fd/3 ran the command in the host's /proc (per_exec)."""
    for fd in _FDS:
        cwd = f"/proc/self/fd/{fd}"
        bait.check(_exec_refused(sandbox, ["sh", "-c", bait.attack("../../..")], cwd=cwd))


@pytest.mark.parametrize(
    "cwd",
    ["/proc", "/proc/self/cwd", "/proc/self/root", "/proc/1/root", "/proc/1/cwd",
     "/proc/thread-self/fd/3", "/etc", "/usr/bin", "/", "/dev", "../proc/self/fd/3",
     "sub/../../proc/self/fd/3", "../../../proc/1/root/tmp"],
)  # fmt: skip
def test_cwd_outside_sample_tree_is_a_clear_error(
    sandbox: BwrapSandboxEnvironment, bait: HostBait, cwd: str
) -> None:
    """A cwd that lies (as written) outside /workspace and /tmp is refused before anything runs."""
    seen = _exec_refused(sandbox, ["sh", "-c", bait.attack("../../..")], cwd=cwd)
    bait.check(seen)
    if isinstance(sandbox, BwrapSandboxEnvironment):
        assert isinstance(seen, ValueError) and repr(cwd) in str(seen), seen
        assert "/workspace" in str(seen) and "/tmp" in str(seen), seen
        with pytest.raises(ValueError, match="cwd"):  # the file API has no cwd; exec checks it
            run(sandbox.exec(["true"], cwd=cwd + "\0x"))


def test_cwd_inside_sample_tree_still_works(sandbox: BwrapSandboxEnvironment) -> None:
    """Control for the refusals: the sample's own folders, relative and absolute, as before."""
    assert run(sandbox.exec(["mkdir", "-p", "a/b", "/tmp/t"])).success
    for cwd, expected in [("a/b", "/workspace/a/b"), ("/workspace/a", "/workspace/a"),
                          ("/tmp/t", "/tmp/t"), ("/tmp", "/tmp"), ("a/../a/b", "/workspace/a/b"),
                          (".", "/workspace"), ("../../../tmp", "/tmp")]:  # fmt: skip
        result = run(sandbox.exec(["sh", "-c", "pwd -P"], cwd=cwd))
        assert result.success and result.stdout == expected + "\n", (cwd, result)


def test_cwd_symlink_leading_out_refused(sandbox: BwrapSandboxEnvironment, bait: HostBait) -> None:
    """A cwd inside the work dir that is a symlink (planted by the sample) to /proc/self/fd/N,
    /proc/1/root or /etc is followed as the sample's uid and refused: the command never runs."""
    links = {f"fd{n}": f"/proc/self/fd/{n}" for n in _FDS}
    links |= {"init-root": "/proc/1/root", "init-cwd": "/proc/1/cwd", "etc": "/etc",
              "up": "..", "proc": "/proc"}  # fmt: skip
    made = " ; ".join(f"ln -s {target} {name}" for name, target in links.items())
    assert run(sandbox.exec(["sh", "-c", made])).success
    for name in links:
        for cwd in (name, f"{name}/self/fd/3" if name == "proc" else f"{name}/tmp/x"):
            bait.check(_exec_refused(sandbox, ["sh", "-c", bait.attack("../../..")], cwd=cwd))


def test_cwd_symlink_within_sample_tree_followed(sandbox: BwrapSandboxEnvironment) -> None:
    """Control: a symlink that stays in the sample's folders is a fine cwd."""
    assert run(sandbox.exec(["sh", "-c", "mkdir -p /tmp/real && ln -s /tmp/real here"])).success
    result = run(sandbox.exec(["sh", "-c", "pwd -P"], cwd="here"))
    assert result.success and result.stdout == "/tmp/real\n", result


def test_pwd_and_cdpath_env_do_not_move_the_command(
    sandbox: BwrapSandboxEnvironment, bait: HostBait
) -> None:
    """PWD/OLDPWD/CDPATH from the caller are plain variables of the command: the command starts
    in /workspace whatever they say."""
    for value in ["/proc/self/fd/3", "/proc/1/root", "/"]:
        env = {"PWD": value, "OLDPWD": value, "CDPATH": value}
        result = run(sandbox.exec(["sh", "-c", "pwd -P; " + bait.attack("../../..")], env=env))
        assert result.stdout.startswith("/workspace\n"), result
        bait.check(result)
        result = run(sandbox.exec(["bash", "-c", "pwd -P"], env=env, cwd="/tmp"))
        assert result.stdout == "/tmp\n", result


def test_file_paths_through_proc_fd_stay_inside(
    sandbox: BwrapSandboxEnvironment, bait: HostBait
) -> None:
    """read_file/write_file paths through /proc/self/fd/N (and /proc/1/root) resolve in the jail,
    as the sample's uid: the host's /tmp is never reached."""
    seen: list[object] = []
    bases = [f"/proc/self/fd/{fd}/../../.." for fd in _FDS]
    bases += ["/proc/self/fd/3", "/proc/1/root", "/proc/1/cwd/../../..", "/proc/self/root",
              "/proc/thread-self/fd/3/../../.."]  # fmt: skip
    for base in bases:
        try:
            seen.append(run(sandbox.read_file(f"{base}/tmp/{bait.secret_name}")))
        except (OSError, UnicodeDecodeError) as ex:
            seen.append(ex)
        try:
            run(sandbox.write_file(f"{base}/tmp/{bait.marker_name}", "pwned"))
            seen.append("written")
        except OSError as ex:
            seen.append(ex)
    bait.check(*seen)


def test_file_paths_with_dotdot_stay_inside(
    sandbox: BwrapSandboxEnvironment, bait: HostBait
) -> None:
    for path in (f"../../../tmp/{bait.secret_name}", f"/workspace/../../tmp/{bait.secret_name}"):
        with pytest.raises(FileNotFoundError):
            run(sandbox.read_file(path))
    run(sandbox.write_file(f"../../../tmp/{bait.marker_name}", "inside"))  # the sample's /tmp
    assert run(sandbox.read_file(f"/tmp/{bait.marker_name}")) == "inside"
    bait.check()
