"""The bwrap command line, checked without running it (runs where bwrap is absent too)."""

from __future__ import annotations

from sandboxes.bwrap._command import CTL_DIR, SandboxLayout, bwrap_argv, launcher_argv

LAYOUT = SandboxLayout("/h/work", "/h/tmp", ("/opt/venv", "/srv/x/py"))


def _pairs(argv: list[str], flag: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == flag]


def test_isolation_flags_and_mounts() -> None:
    argv = bwrap_argv("/usr/bin/bwrap", LAYOUT, ["echo", "hi"], cwd="sub", env={"A": "1"},
                      drop_to=("/usr/bin/setpriv", 1234567890))  # fmt: skip
    for flag in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                 "--die-with-parent", "--new-session", "--clearenv"):  # fmt: skip
        assert flag in argv
    assert ("/h/work", "/workspace") in _pairs(argv, "--bind")
    assert ("/h/tmp", "/tmp") in _pairs(argv, "--bind")
    assert len(_pairs(argv, "--bind")) == 2  # nothing else of the host is writable
    ro = dict(_pairs(argv, "--ro-bind"))
    assert {"/usr", "/etc", "/opt/venv", "/srv/x/py"} <= set(ro)
    assert not {"/", "/root", "/home", "/work"} & set(ro)
    assert argv[argv.index("--remount-ro") + 1] == "/"
    assert argv[argv.index("--chdir") + 1] == "/workspace/sub"
    assert ("A", "1") in _pairs(argv, "--setenv") and ("HOME", "/workspace") in _pairs(
        argv, "--setenv"
    )
    tail = argv[argv.index("--clearenv") :]
    sep = tail.index("--")
    assert tail[sep + 1 : sep + 3] == ["/usr/bin/setpriv", "--reuid=1234567890"]
    assert "--no-new-privs" in tail and "--bounding-set=-all" in tail
    assert tail[-2:] == ["echo", "hi"]


def test_unprivileged_uses_user_namespace() -> None:
    argv = bwrap_argv("bwrap", LAYOUT, ["true"])
    assert "--unshare-user" in argv and "--cap-add" not in argv and "setpriv" not in " ".join(argv)


def test_launcher_applies_limits() -> None:
    argv = launcher_argv(["bwrap", "x"], cgroup_procs=["/cg/a/cgroup.procs"], max_processes=64,
                         max_file_mb=10, address_space_mb=512)  # fmt: skip
    assert argv[:2] == ["/bin/sh", "-c"]
    rest = argv[3:]
    assert rest == ["sh", "/cg/a/cgroup.procs", "--", "64", str(10 * 2048), str(512 * 1024),
                    "bwrap", "x"]  # fmt: skip


def test_persistent_server_argv() -> None:
    argv = bwrap_argv("bwrap", LAYOUT, ["python3", "server.py"], drop_to=("/usr/bin/setpriv", 7),
                      keep_caps=("CAP_SETUID", "CAP_KILL"), ctl_dir="/h/ctl")  # fmt: skip
    assert ("/h/ctl", CTL_DIR) in _pairs(argv, "--bind") and len(_pairs(argv, "--bind")) == 3
    added = [argv[i + 1] for i, a in enumerate(argv) if a == "--cap-add"]
    assert "CAP_KILL" in added and len(added) == len(set(added))
    tail = argv[argv.index("--clearenv") :]
    assert (
        "--ambient-caps=-all,+setuid,+kill" in tail and "--bounding-set=-all,+setuid,+kill" in tail
    )
    assert "--no-new-privs" in tail and tail[-2:] == ["python3", "server.py"]
