"""The seccomp program, checked by running it in a small classic-BPF interpreter (no kernel
needed), and its syscall tables checked against the kernel headers where they are installed."""

from __future__ import annotations

import errno
import re
import struct
from pathlib import Path

import pytest

from sandboxes.bwrap._seccomp import (
    AF_VSOCK,
    CLONE_NEW_FLAGS,
    DENIED,
    PERSONALITY_ALLOWED,
    RET_ALLOW,
    filter_program,
    syscall_table,
)

MACHINES = ("x86_64", "aarch64")
EPERM = 0x00050000 | errno.EPERM
ENOSYS = 0x00050000 | errno.ENOSYS


def run_bpf(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """Interpret a seccomp classic-BPF program on one seccomp_data; return the action."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    insns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    for _ in range(10_000):
        code, jt, jf, k = insns[pc]
        pc += 1
        if code == 0x20:  # ld w abs
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x15:  # jeq k
            pc += jt if acc == k else jf
        elif code == 0x35:  # jge k
            pc += jt if acc >= k else jf
        elif code == 0x45:  # jset k
            pc += jt if acc & k else jf
        elif code == 0x06:  # ret k
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x} at {pc - 1}")
    raise AssertionError("program did not return")


@pytest.mark.parametrize("machine", MACHINES)
def test_every_denied_syscall_gets_eperm(machine: str) -> None:
    table = syscall_table(machine)
    program = filter_program(machine)
    assert len(program) % 8 == 0 and len(program) // 8 < 4096  # the kernel's BPF_MAXINSNS
    denied = table.denied()
    assert {"keyctl", "add_key", "request_key", "unshare", "setns", "mount", "ptrace", "bpf",
            "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load"} <= set(denied)  # fmt: skip
    for name, nr in denied.items():
        assert run_bpf(program, nr, table.audit_arch) == EPERM, name
    assert run_bpf(program, table.numbers["clone3"], table.audit_arch) == ENOSYS


@pytest.mark.parametrize("machine", MACHINES)
def test_arguments_decide_clone_personality_socket(machine: str) -> None:
    table = syscall_table(machine)
    program = filter_program(machine)
    arch, nr = table.audit_arch, table.numbers
    sigchld, thread_flags = 17, 0x003D0F00  # fork(); pthread_create's clone flags
    assert run_bpf(program, nr["clone"], arch, (sigchld,)) == RET_ALLOW
    assert run_bpf(program, nr["clone"], arch, (thread_flags,)) == RET_ALLOW
    for bit in range(32):
        flag = 1 << bit
        if flag & CLONE_NEW_FLAGS:
            assert run_bpf(program, nr["clone"], arch, (flag | sigchld,)) == EPERM, hex(flag)
    # the upper half of a 64-bit argument cannot smuggle a flag past the check
    assert run_bpf(program, nr["clone"], arch, ((1 << 32) | 0x10000000,)) == EPERM
    for value in PERSONALITY_ALLOWED:
        assert run_bpf(program, nr["personality"], arch, (value,)) == RET_ALLOW
    assert run_bpf(program, nr["personality"], arch, (0x0040000,)) == EPERM  # ADDR_NO_RANDOMIZE
    assert run_bpf(program, nr["socket"], arch, (AF_VSOCK, 1, 0)) == EPERM
    for family in (1, 2, 10, 16):  # unix, inet, inet6, netlink
        assert run_bpf(program, nr["socket"], arch, (family, 1, 0)) == RET_ALLOW


@pytest.mark.parametrize("machine", MACHINES)
def test_ordinary_syscalls_allowed_and_foreign_abis_refused(machine: str) -> None:
    table = syscall_table(machine)
    program = filter_program(machine)
    by_argument = {table.numbers[n] for n in ("clone", "personality", "socket")}
    refused = set(table.denied().values()) | {table.numbers["clone3"]}
    for nr in set(range(460)) - by_argument - refused:  # read, openat, execve, wait4, ...
        assert run_bpf(program, nr, table.audit_arch) == RET_ALLOW, nr
    assert run_bpf(program, 0, 0x40000003) == ENOSYS  # AUDIT_ARCH_I386: int 0x80 from x86_64
    if machine == "x86_64":
        assert run_bpf(program, 0x40000000 | 0, table.audit_arch) == ENOSYS  # x32 read()


def test_unknown_architecture_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match="seccomp=False"):
        syscall_table("s390x")


_HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}


@pytest.mark.parametrize("machine", MACHINES)
def test_syscall_numbers_match_kernel_headers(machine: str) -> None:
    header = _HEADERS[machine]
    if not header.exists():
        pytest.skip(f"{header} not installed (linux-libc-dev)")
    defined: dict[str, int] = {}
    for match in re.finditer(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", header.read_text()):
        defined.setdefault(match.group(1), int(match.group(2)))
    table = syscall_table(machine)
    for name, nr in table.numbers.items():
        assert defined.get(name) == nr, (machine, name, nr, defined.get(name))
    missing = [n for n in DENIED if n in defined and n not in table.numbers]
    assert not missing, f"{machine} has these denied syscalls but the table lacks them: {missing}"
