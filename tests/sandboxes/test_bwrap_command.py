"""The bwrap command line, checked without running it (runs where bwrap is absent too)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandboxes.bwrap._command import (
    CTL_DIR,
    ENTER_CWD,
    SANDBOX_PATH,
    SandboxLayout,
    bwrap_argv,
    check_cwd,
    launcher_argv,
)

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
    remounted = [argv[i + 1] for i, a in enumerate(argv) if a == "--remount-ro"]
    assert "/" in remounted and "/proc" in remounted  # read-only root and /proc (incl. /proc/sys)
    assert argv.index("--remount-ro", argv.index("--proc")) > argv.index("--proc")
    # bwrap (privileged) only ever enters the fixed work dir; the caller's cwd is entered after
    # setpriv, as the sample's uid, by ENTER_CWD (issue 26.1)
    assert argv[argv.index("--chdir") + 1] == "/workspace"
    tail = argv[argv.index("--clearenv") :]
    sep = tail.index("--")
    # the privileged part (bwrap, setpriv) gets PATH only; the caller's env comes after setpriv
    assert _pairs(argv, "--setenv") == [("PATH", SANDBOX_PATH)]
    assert tail[sep + 1 : sep + 3] == ["/usr/bin/setpriv", "--reuid=1234567890"]
    assert "--no-new-privs" in tail and "--bounding-set=-all" in tail
    after = tail[tail.index("--", tail.index("--no-new-privs")) + 1 :]
    assert after[:5] == ["/bin/sh", "-c", ENTER_CWD, "sh", "/workspace/sub"]
    after = after[5:]
    assert after[:3] == ["/usr/bin/env", "-i", "--"]
    assert "A=1" in after and "HOME=/workspace" in after
    assert after[-2:] == ["echo", "hi"]


def test_caller_env_never_reaches_privileged_part() -> None:
    env = {"LD_PRELOAD": "/workspace/x.so", "LD_LIBRARY_PATH": "/workspace"}
    argv = bwrap_argv("/usr/bin/bwrap", LAYOUT, ["true"], env=env,
                      drop_to=("/usr/bin/setpriv", 1234567890))  # fmt: skip
    setpriv_at = argv.index("/usr/bin/setpriv")
    before = " ".join(argv[:setpriv_at])
    assert "LD_PRELOAD" not in before and "LD_LIBRARY_PATH" not in before
    assert "LD_PRELOAD=/workspace/x.so" in argv[argv.index("/usr/bin/env") :]


def test_command_named_like_a_variable_is_not_an_assignment() -> None:
    argv = bwrap_argv("bwrap", LAYOUT, ["a=b", "x"], env={}, drop_to=("/usr/bin/setpriv", 7))
    tail = argv[argv.index("/usr/bin/env") :]
    assert tail[-5:] == ["/bin/sh", "-c", 'exec "$0" "$@"', "a=b", "x"]


def test_bad_environment_names_refused() -> None:
    for env in ({"A=B": "1"}, {"": "1"}, {"A": "x\0y"}):
        with pytest.raises(ValueError, match="invalid environment variable"):
            bwrap_argv("bwrap", LAYOUT, ["true"], env=env)


def test_seccomp_fd_and_proc_masks() -> None:
    argv = bwrap_argv("bwrap", LAYOUT, ["true"], seccomp_fd=5)
    assert argv[argv.index("--seccomp") + 1] == "5"
    assert argv.index("--seccomp") < argv.index("--")  # a bwrap option, not the command's
    for name in ("keys", "key-users", "timer_list"):
        if Path(f"/proc/{name}").exists():
            assert ("/dev/null", f"/proc/{name}") in _pairs(argv, "--ro-bind")


def test_unprivileged_uses_user_namespace() -> None:
    argv = bwrap_argv("bwrap", LAYOUT, ["true"])
    assert "--unshare-user" in argv and "--cap-add" not in argv and "setpriv" not in " ".join(argv)


def test_launcher_applies_limits() -> None:
    argv = launcher_argv(["bwrap", "x"], cgroup_procs=["/cg/a/cgroup.procs"], max_processes=64,
                         max_file_mb=10, max_open_files=256, address_space_mb=512)  # fmt: skip
    assert argv[:2] == ["/bin/sh", "-c"]
    rest = argv[3:]
    assert rest == ["sh", "/cg/a/cgroup.procs", "--", "64", str(10 * 2048), "256",
                    str(512 * 1024), "bwrap", "x"]  # fmt: skip


def test_persistent_server_argv() -> None:
    argv = bwrap_argv("bwrap", LAYOUT, ["python3", "server.py"], drop_to=("/usr/bin/setpriv", 7),
                      keep_caps=("CAP_SETUID", "CAP_KILL"), ctl_dir="/h/ctl")  # fmt: skip
    assert ("/h/ctl", CTL_DIR) in _pairs(argv, "--bind") and len(_pairs(argv, "--bind")) == 3
    assert "/usr/bin/env" not in argv  # env=None: the server gets PATH only
    added = [argv[i + 1] for i, a in enumerate(argv) if a == "--cap-add"]
    assert "CAP_KILL" in added and len(added) == len(set(added))
    tail = argv[argv.index("--clearenv") :]
    assert (
        "--ambient-caps=-all,+setuid,+kill" in tail and "--bounding-set=-all,+setuid,+kill" in tail
    )
    assert "--no-new-privs" in tail and tail[-2:] == ["python3", "server.py"]


@pytest.mark.parametrize(
    ("cwd", "expected"),
    [(None, None), ("sub", "/workspace/sub"), ("/workspace", None), (".", None), ("/tmp", "/tmp"),
     ("/tmp/../tmp/a", "/tmp/a"), ("../../tmp", "/tmp"), ("//tmp//x", "/tmp/x")],
)  # fmt: skip
def test_check_cwd_accepts_sample_folders(cwd: str | None, expected: str | None) -> None:
    assert check_cwd(cwd) == expected


@pytest.mark.parametrize(
    "cwd", ["/proc/self/fd/3", "..", "/", "/etc", "../proc", "//proc", "/workspacex", "/tmpx",
            "sub/../../etc", "", "a\0b"],
)  # fmt: skip
def test_check_cwd_refuses_everything_else(cwd: str) -> None:
    with pytest.raises(ValueError, match="cwd"):
        check_cwd(cwd)
