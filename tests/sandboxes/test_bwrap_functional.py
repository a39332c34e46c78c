"""Functional tests of the bwrap sandbox: exec options, files, errors, limits, config, probe."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.util import (
    OutputLimitExceededError,
    SandboxEnvironmentSpec,
    SandboxUserUnsupportedError,
    override_sandbox_output_limit,
)
from pydantic import ValidationError

from sandboxes.bwrap import (
    BwrapConfig,
    BwrapSandboxEnvironment,
    BwrapUnavailableError,
    _probe,
    require_bwrap,
)

run = asyncio.run
Factory = Callable[..., BwrapSandboxEnvironment]


def test_exec_input_cwd_env(sandbox: BwrapSandboxEnvironment) -> None:
    assert run(sandbox.exec(["cat"], input="text in")).stdout == "text in"
    assert run(sandbox.exec(["od", "-An", "-tx1"], input=b"\x00\xff")).stdout.split() == [
        "00",
        "ff",
    ]
    assert run(sandbox.exec(["pwd"])).stdout == "/workspace\n"
    run(sandbox.exec(["mkdir", "-p", "sub/dir"]))
    assert run(sandbox.exec(["pwd"], cwd="sub/dir")).stdout == "/workspace/sub/dir\n"
    assert run(sandbox.exec(["pwd"], cwd="/tmp")).stdout == "/tmp\n"
    out = run(sandbox.exec(["sh", "-c", 'echo "$FOO|$HOME|${HARNESS_CACHE_DIR:-unset}"'],
                           env={"FOO": "bar"})).stdout  # fmt: skip
    assert out == "bar|/workspace|unset\n"  # the host's environment does not leak in


def test_exec_failures_are_results(sandbox: BwrapSandboxEnvironment) -> None:
    result = run(sandbox.exec(["sh", "-c", "echo oops >&2; exit 3"]))
    assert (result.success, result.returncode, result.stderr) == (False, 3, "oops\n")
    assert run(sandbox.exec(["sh", "-c", "exit 125"])).returncode == 125  # not a launcher failure
    missing = run(sandbox.exec(["no-such-command-xyz"]))
    assert not missing.success and "no-such-command-xyz" in missing.stderr


def test_users(sandbox: BwrapSandboxEnvironment) -> None:
    uid = run(sandbox.exec(["id", "-u"])).stdout.strip()
    if os.geteuid() == 0:  # root harness: commands run as the sample's private unprivileged uid
        assert uid == str(sandbox.uid) and int(uid) != 0
    assert run(sandbox.exec(["id", "-u"], user=uid)).stdout.strip() == uid
    status = run(sandbox.exec(["grep", "-E", "^(CapEff|CapPrm|NoNewPrivs)", "/proc/self/status"]))
    assert (
        "CapEff:\t0000000000000000" in status.stdout
        and "CapPrm:\t0000000000000000" in status.stdout
    )
    assert "NoNewPrivs:\t1" in status.stdout, status
    if os.geteuid() == 0:  # as root: the bounding set is emptied too (in both modes)
        bounding = run(sandbox.exec(["grep", "-E", "^(CapBnd|CapAmb|CapInh)", "/proc/self/status"]))
        assert bounding.stdout.count("0000000000000000") == 3, bounding
    with pytest.raises(SandboxUserUnsupportedError):
        run(sandbox.exec(["id"], user="root"))


def test_files_round_trip(sandbox: BwrapSandboxEnvironment) -> None:
    run(sandbox.write_file("a/b/c.txt", "line1\r\nline2\n"))
    assert run(sandbox.read_file("a/b/c.txt")) == "line1\r\nline2\n"  # newlines preserved
    assert run(sandbox.read_file("/workspace/a/b/c.txt")) == "line1\r\nline2\n"
    blob = bytes(range(256)) * 1000
    run(sandbox.write_file("/tmp/deep/er/blob.bin", blob))
    assert run(sandbox.read_file("/tmp/deep/er/blob.bin", text=False)) == blob
    assert run(sandbox.exec(["cat", "a/b/c.txt"])).stdout == "line1\r\nline2\n"  # seen by exec
    run(sandbox.exec(["sh", "-c", "echo made > made.txt"]))
    assert run(sandbox.read_file("made.txt")) == "made\n"
    run(sandbox.write_file("a/b/c.txt", "over"))
    assert run(sandbox.read_file("a/b/c.txt")) == "over"


def test_file_errors(sandbox: BwrapSandboxEnvironment) -> None:
    with pytest.raises(FileNotFoundError):
        run(sandbox.read_file("nope.txt"))
    with pytest.raises(FileNotFoundError):
        run(sandbox.read_file("/no/such/dir/file"))
    run(sandbox.exec(["mkdir", "d"]))
    with pytest.raises(IsADirectoryError):
        run(sandbox.read_file("d"))
    with pytest.raises(IsADirectoryError):
        run(sandbox.write_file("d", "x"))
    with pytest.raises(PermissionError):
        run(sandbox.write_file("/etc/passwd", "x"))
    run(sandbox.exec(["sh", "-c", "echo s > secret; chmod 000 secret"]))
    with pytest.raises(PermissionError):  # uid 0 inside has no CAP_DAC_OVERRIDE
        run(sandbox.read_file("secret"))
    run(sandbox.write_file("bad.bin", b"\xff\xfe\xfa"))
    with pytest.raises(UnicodeDecodeError):
        run(sandbox.read_file("bad.bin"))


def test_file_errors_paths_and_modes(sandbox: BwrapSandboxEnvironment) -> None:
    """The same errors, ownership and modes in both jail modes (persistent mode's file helper
    and per_exec's scripts): an ancestor that is a file, dangling and looping links, a file
    without write permission; written files 0644 and folders 0755 of the sample's uid."""
    run(sandbox.write_file("plain", "x"))
    with pytest.raises(NotADirectoryError):
        run(sandbox.read_file("plain/inner"))
    with pytest.raises(NotADirectoryError):
        run(sandbox.write_file("plain/inner/f", "x"))
    run(sandbox.exec(["sh", "-c", "ln -s nowhere dangling; ln -s loop loop; "
                                  "echo ro > ro; chmod 444 ro"]))  # fmt: skip
    for path in ("dangling", "loop"):
        with pytest.raises(FileNotFoundError):
            run(sandbox.read_file(path))
    with pytest.raises(PermissionError):
        run(sandbox.write_file("ro", "x"))
    run(sandbox.write_file("dangling", "through the link"))  # like `echo > dangling`
    assert run(sandbox.read_file("nowhere")) == "through the link"
    run(sandbox.write_file("m/n/f.txt", "x"))
    modes = run(sandbox.exec(["stat", "-c", "%a %u", "m", "m/n", "m/n/f.txt"])).stdout.split("\n")
    uid = run(sandbox.exec(["id", "-u"])).stdout.strip()
    assert modes[:3] == [f"755 {uid}", f"755 {uid}", f"644 {uid}"], modes
    assert run(sandbox.exec(["sh", "-c", "umask"])).stdout == "0022\n"


def test_output_limits(sandbox: BwrapSandboxEnvironment) -> None:
    with override_sandbox_output_limit(10_000):
        with pytest.raises(OutputLimitExceededError) as info:
            run(sandbox.exec(["sh", "-c", "yes | head -c 1000000"]))
        assert info.value.truncated_output and len(info.value.truncated_output) <= 10_000
        with pytest.raises(OutputLimitExceededError):  # a never-ending writer is cut off too
            run(sandbox.exec(["yes"], timeout=30))
        run(sandbox.exec(["sh", "-c", "head -c 20000 /dev/zero > big"]))
        with pytest.raises(OutputLimitExceededError):
            run(sandbox.read_file("big", text=False))
        assert run(sandbox.exec(["sh", "-c", "head -c 9000 /dev/zero | wc -c"])).stdout == "9000\n"


def test_config_files_binds_and_python(make_sandbox: Factory, tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("X = 41\n")
    (tmp_path / "one.txt").write_text("one")
    venv = Path(sys.prefix)
    binds = sorted({str(venv), os.path.realpath(sys.base_prefix)})
    sb = make_sandbox(BwrapConfig(files={"lib/pkg": str(tmp_path / "pkg"),
                                         "/workspace/one.txt": str(tmp_path / "one.txt")},
                                  ro_binds=binds, env={"PYTHONPATH": "/workspace/lib"}))  # fmt: skip
    assert run(sb.read_file("one.txt")) == "one"
    result = run(
        sb.exec([f"{venv}/bin/python", "-c", "import pkg.mod, pydantic; print(pkg.mod.X + 1)"])
    )
    assert result.stdout == "42\n", result
    assert run(sb.exec(["python3", "-c", "print('system python')"])).success


def test_config_validation_and_spec() -> None:
    cfg = BwrapConfig(memory_mb=300, files={"a": "/b"})
    assert BwrapSandboxEnvironment.config_deserialize(cfg.model_dump()) == cfg
    with pytest.raises(ValidationError):
        BwrapConfig(memory_mb=0)
    with pytest.raises(ValidationError):
        BwrapConfig(memory=1)  # type: ignore[call-arg]  (unknown key)
    spec = SandboxEnvironmentSpec.model_validate({"type": "bwrap", "config": cfg.model_dump()})
    assert spec.config == cfg  # inspect deserializes logged configs through config_deserialize


def test_files_may_not_leave_work_dir(bwrap_ok: None, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    for target in ("/etc/evil", "../evil"):
        with pytest.raises(ValueError, match="work dir|not under"):
            run(BwrapSandboxEnvironment.sample_init(
                "t", BwrapConfig(files={target: str(tmp_path / "f")}), {}))  # fmt: skip


def test_clear_error_when_bwrap_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_probe, "bwrap_path", lambda: None)
    _probe._probe.cache_clear()
    try:
        with pytest.raises(BwrapUnavailableError, match="apt-get install bubblewrap"):
            require_bwrap()
    finally:
        _probe._probe.cache_clear()


def test_clear_error_when_namespaces_forbidden(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(_probe, "bwrap_path", lambda: str(fake))
    _probe._probe.cache_clear()
    try:
        with pytest.raises(BwrapUnavailableError) as info:
            require_bwrap()
        message = str(info.value)
        assert "cannot create" in message and "No permissions" in message
        assert "sandbox=docker" in message
    finally:
        _probe._probe.cache_clear()
