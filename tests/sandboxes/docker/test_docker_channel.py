"""Results that no sample process can forge (issue 26 §2, and its property test).

A background process of the sample (tests/sandboxes/docker/_forger.py) attacks every process in
the container that is not one of the harness's commands, while the harness runs exec, read_file
and write_file calls. What the harness reads back (exit codes, stdout/stderr, file contents, what a
write left behind, checked through the engine's own exec) must be exactly what the calls did, and
the forger's log must hold none of the contents the calls carried.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.sandboxes.docker._forger import engine_exec, forger_log, start_command


@pytest.fixture
def container(docker_ok: None) -> Iterator[Any]:
    from sandboxes.docker import DockerConfig, DockerSandboxEnvironment

    config = DockerConfig(memory_mb=512, max_processes=128, timeout_s=60)
    envs = asyncio.run(DockerSandboxEnvironment.sample_init("channel-test", config, {}))
    yield envs["default"]
    asyncio.run(DockerSandboxEnvironment.sample_cleanup("channel-test", None, envs, False))


def _start_forger(sb: Any, marker: str, spare_starts: bool = True) -> None:
    started = asyncio.run(sb.exec(start_command(marker, spare_starts=spare_starts), timeout=30))
    assert started.stdout == "started\n", started
    deadline = time.monotonic() + 20
    while not any(e["event"] == "ready" for e in forger_log(sb, marker)):
        assert time.monotonic() < deadline, "the forger did not start"
        time.sleep(0.1)


def _assert_forger_failed(sb: Any, marker: str, secrets_sent: list[str]) -> list[dict[str, Any]]:
    log = forger_log(sb, marker)
    text = repr(log)
    assert [e for e in log if e["event"] in ("forged", "socket-forged")] == [], log
    assert [e for e in log if e["event"] == "stolen" and e["data"]] == [], log
    for secret in secrets_sent:
        assert secret not in text, f"the forger learned {secret!r}"
    assert any(e["event"] in ("open-denied", "signal-denied") for e in log), log  # it did try
    return log


def test_background_forger_cannot_forge_results(container: Any) -> None:
    """The issue's three calls: an exec that exits 3, a read of a missing file, a write of a
    hidden test. Seen before: rc 0 / 'FORGED', 'FORGED', a write that wrote nothing, and the
    hidden content in the forger's log."""
    sb, marker = container, f"M{secrets.token_hex(6)}"
    _start_forger(sb, marker)
    hidden = f"def test_hidden(): assert {secrets.token_hex(16)!r}\n"
    for round_ in range(3):
        result = asyncio.run(sb.exec(["sh", "-c", f"echo out{round_} {marker}; exit 3"]))
        assert (result.returncode, result.stdout) == (3, f"out{round_} {marker}\n"), result
        with pytest.raises(FileNotFoundError):
            asyncio.run(sb.read_file(f"missing-{marker}-{round_}.txt"))
        asyncio.run(sb.write_file(f"hidden_test_{round_}.py", hidden))
        on_disk = engine_exec(sb, f"/workspace/hidden_test_{round_}.py", marker)
        assert on_disk.decode() == hidden
    _assert_forger_failed(sb, marker, [hidden])


def test_property_interferer_changes_no_result(container: Any) -> None:
    """>= 20 random exec/read_file/write_file calls with a forger running: every result is what
    the call did, every write is on disk as written, and no content reached the forger. Each
    command is one process whose argv carries the marker (a child without it, e.g. the `wc` of
    `sh -c "wc -c"`, is the sample's own process: the forger may write into its pipes, as any
    process of the sample may, and that is no forgery of the channel)."""
    sb, marker = container, f"M{secrets.token_hex(6)}"
    _start_forger(sb, marker)
    rng = random.Random(2600)
    sent: list[str] = []
    written: dict[str, bytes] = {}
    for index in range(24):
        kind = ("exec", "write", "read", "exec_input")[index % 4]
        token = secrets.token_hex(12)
        if kind == "exec":
            code = rng.randrange(0, 50)
            script = f"printf '%s' {token}-{marker}; printf 'e{index}' >&2; exit {code}"
            result = asyncio.run(sb.exec(["sh", "-c", script]))
            assert (result.returncode, result.stdout, result.stderr) == (
                code, f"{token}-{marker}", f"e{index}"), result  # fmt: skip
        elif kind == "exec_input":
            secret = f"stdin-{token}"
            sent.append(secret)
            count = "import sys; print(len(sys.stdin.buffer.read()))"  # one process, marked
            result = asyncio.run(sb.exec(["python3", "-c", count, marker], input=secret))
            assert result.success and result.stdout.strip() == str(len(secret)), result
        elif kind == "write":
            name = f"w{index}.bin"
            data = f"file-{token}".encode() + bytes(rng.randrange(256) for _ in range(2000))
            sent.append(f"file-{token}")
            asyncio.run(sb.write_file(name, data))
            written[name] = data
        else:
            name = rng.choice(sorted(written)) if written else None
            if name is None:
                with pytest.raises(FileNotFoundError):
                    asyncio.run(sb.read_file(f"none-{index}"))
            else:
                assert asyncio.run(sb.read_file(name, text=False)) == written[name]
    for name, data in written.items():  # what the writes left behind, through the engine
        assert engine_exec(sb, f"/workspace/{name}", marker) == data, name
    # the written files are the sample's own (it may read them on disk); the calls carried them,
    # and the forger must not have seen them there: it never reads the work dir
    _assert_forger_failed(sb, marker, sent)


def test_file_helper_is_out_of_the_samples_reach(container: Any) -> None:
    """The file helper (a fork of the server that resolves paths with the sample's rights) keeps
    root as its real and saved uid: a forger that attacks every fork of the server, with no
    sparing rule, can neither stop it (which would hang the channel) nor open its descriptors,
    through >= 20 reads and writes."""
    sb, marker = container, f"M{secrets.token_hex(6)}"
    _start_forger(sb, marker, spare_starts=False)
    sent: list[str] = []
    for index in range(12):
        token = secrets.token_hex(12)
        sent.append(token)
        data = f"hidden-{token}\n".encode() * 100
        asyncio.run(sb.write_file(f"f{index}/h.py", data))
        assert asyncio.run(sb.read_file(f"f{index}/h.py", text=False)) == data
        with pytest.raises(FileNotFoundError):
            asyncio.run(sb.read_file(f"f{index}/missing"))
    log = _assert_forger_failed(sb, marker, sent)
    helpers = {e["pid"] for e in log if e["event"] == "signal-denied" and e["uid"] == 0}
    assert len(helpers) >= 12, f"control: the forger reached few of the file helpers: {log}"


def test_cwd_resolves_with_the_samples_permissions(container: Any) -> None:
    """The working directory is entered with the sample's permissions (issue 26 §1's lesson): a
    cwd under /proc that names the server's or init's descriptors or root is refused."""
    for cwd in ("/proc/self/fd/0", "/proc/self/fd/3", "/proc/1/cwd", "/proc/1/root", "/root"):
        result = asyncio.run(container.exec(["sh", "-c", "pwd; ls"], cwd=cwd))
        assert result.returncode == 126, (cwd, result)
        assert "cannot change to working directory" in result.stderr, (cwd, result)
    inside = asyncio.run(container.exec(["pwd"], cwd="/tmp"))
    assert inside.stdout == "/tmp\n", inside
