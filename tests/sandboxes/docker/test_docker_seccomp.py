"""The docker_api seccomp profile compares what the kernel reads (issue 26 §3).

`syscall(SYS_socket, (1 << 32) | AF_VSOCK, SOCK_STREAM, 0)` got a vsock socket: the rule compared
all 64 bits of an argument the kernel reads as a 32-bit int. Here every rule on an int argument is
checked with high bits set, rule by rule (on the profile, as libseccomp evaluates it), and the
socket/personality/clone probes run inside a container with high bits set.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from sandboxes.bwrap import AF_VSOCK, CLONE_NEW_FLAGS, PERSONALITY_ALLOWED

HIGH = (1 << 32, 0xFFFFFFFF00000000, 0x8000000000000000)
# The argument each rule looks at, and whether the kernel reads it as 32 bits (int / unsigned
# int) or as 64 (unsigned long): socket(int domain), personality(unsigned int persona),
# clone(unsigned long flags).
INT_ARGUMENT = {"socket": True, "personality": True, "clone": False}


def _matches(condition: dict[str, Any], value: int) -> bool:
    """One condition as libseccomp evaluates it on a 64-bit architecture (all 64 bits)."""
    op, datum, two = condition["op"], condition["value"], condition.get("valueTwo", 0)
    if op == "SCMP_CMP_EQ":
        return value == datum
    if op == "SCMP_CMP_NE":
        return value != datum
    if op == "SCMP_CMP_MASKED_EQ":
        return value & datum == two
    raise AssertionError(f"unexpected comparison {op}")


def _denied(rules: list[dict[str, Any]], name: str, value: int) -> bool:
    return any(
        all(_matches(c, value) for c in rule["args"])
        for rule in rules
        if name in rule["names"] and rule.get("args")
    )


def _profile(machine: str) -> list[dict[str, Any]]:
    from sandboxes.docker import seccomp_profile

    return json.loads(seccomp_profile(machine))["syscalls"]


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_every_argument_rule_reads_what_the_kernel_reads(machine: str) -> None:
    rules = _profile(machine)
    with_args = [r for r in rules if r.get("args")]
    assert {n for r in with_args for n in r["names"]} == set(INT_ARGUMENT)
    for rule in with_args:
        [name] = rule["names"]
        for condition in rule["args"]:
            assert condition["index"] == 0, rule
            if INT_ARGUMENT[name]:  # the high 32 bits must not take part in the comparison
                assert condition["op"] == "SCMP_CMP_MASKED_EQ", rule
                assert condition["value"] <= 0xFFFFFFFF, rule
    # rule by rule: a value the kernel reads as denied is denied whatever the high bits say
    probes = {
        "socket": [AF_VSOCK, 1, 2, 10, 16, 39, 41],
        "personality": [0, 1, 8, 0x20000, 0x20008, 0x40000, 0x0400000, 0xFFFFFFFE, 0xFFFFFFFF],
        "clone": [1 << b for b in range(32)] + [CLONE_NEW_FLAGS, 0x11, 0],
    }
    for name, values in probes.items():
        for value in values:
            expected = _denied(rules, name, value)
            for high in HIGH:
                if INT_ARGUMENT[name]:
                    assert _denied(rules, name, value | high) == expected, (
                        name,
                        hex(value),
                        hex(high),
                    )
                elif expected:  # unsigned long: a denied flag stays denied with more bits set
                    assert _denied(rules, name, value | high), (name, hex(value), hex(high))
    assert _denied(rules, "socket", AF_VSOCK) and not _denied(rules, "socket", 1)
    assert all(not _denied(rules, "personality", v) for v in PERSONALITY_ALLOWED)


_HIGH_PROBE = r"""
import ctypes, errno, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = json.loads(sys.argv[1])
def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(NR[name]), *[ctypes.c_ulong(a) for a in args])
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
H = 1 << 32
print(json.dumps({
    "socket_vsock": call("socket", 40, 1, 0),
    "socket_vsock_high": call("socket", H | 40, 1, 0),
    "socket_vsock_all_high": call("socket", 0xFFFFFFFF00000000 | 40, 1, 0),
    "socket_unix_high": call("socket", H | 1, 1, 0),
    "personality_high": call("personality", H | 0x0040000),
    "clone_newuser_high": call("clone", H | 0x10000000 | 0x200, 0, 0, 0, 0),
}))
"""


def test_high_bits_do_not_pass_the_filter_in_a_container(docker_ok: None) -> None:
    """In a container: with the profile every variant is refused (EPERM); the control run
    without any filter shows the kernel itself would not have said EPERM."""
    from sandboxes.bwrap import syscall_table
    from sandboxes.docker import DockerConfig, DockerSandboxEnvironment

    numbers = syscall_table().numbers
    table = json.dumps({k: numbers[k] for k in ("socket", "personality", "clone")})

    async def probe(config: DockerConfig) -> dict[str, str]:
        envs = await DockerSandboxEnvironment.sample_init("seccomp-test", config, {})
        try:
            result = await envs["default"].exec(["python3", "-c", _HIGH_PROBE, table], timeout=60)
            assert result.success, result
            return json.loads(result.stdout)
        finally:
            await DockerSandboxEnvironment.sample_cleanup("seccomp-test", None, envs, False)

    filtered = asyncio.run(probe(DockerConfig()))
    control = asyncio.run(probe(DockerConfig(seccomp_unconfined=True)))
    for key in ("socket_vsock", "socket_vsock_high", "socket_vsock_all_high", "personality_high",
                "clone_newuser_high"):  # fmt: skip
        assert filtered[key] == "EPERM", (key, filtered)
        assert control[key] != "EPERM", (key, control)
    assert filtered["socket_unix_high"] == control["socket_unix_high"] == "ok"
