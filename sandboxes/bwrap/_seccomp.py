"""A seccomp deny-list for sandboxed commands, after Docker's default profile, as a classic BPF
program that bubblewrap loads (`--seccomp FD`) right before it runs the command.

Why a hand-assembled program rather than libseccomp: libseccomp's Python binding is Debian's
`python3-seccomp`, built for the system Python and not importable from the project's virtual
environment; the program below is ~150 instructions, needs no package, and is unit tested with a
BPF interpreter (`tests/sandboxes/test_bwrap_seccomp.py`) as well as by calling every denied
syscall inside the sandbox.

What it denies (EPERM unless noted), on x86_64 and aarch64:

- kernel keyrings: `keyctl`, `add_key`, `request_key` (a sample could read the harness's session
  keys or plant keys for other samples);
- new namespaces: `unshare`, `setns`, and `clone` with any CLONE_NEW* flag; `clone3` gets ENOSYS,
  because a filter cannot read its flags (they sit behind a pointer), and glibc then falls back to
  `clone`, which the filter can inspect (what Docker does);
- mounts: `mount`, `umount2`, `pivot_root`, the new mount API (`open_tree`, `move_mount`,
  `fsopen`, `fsconfig`, `fsmount`, `fspick`, `mount_setattr`), `name_to_handle_at`,
  `open_by_handle_at`, quotas;
- other processes' memory: `ptrace`, `process_vm_readv/writev`, `kcmp`, `pidfd_getfd`,
  `migrate_pages`, `move_pages`;
- kernel attack surface: `bpf`, `perf_event_open`, `userfaultfd`, `io_uring_*`, `fanotify_init`,
  kernel modules, `kexec_*`, `reboot`, `swapon/off`, `acct`, `syslog`, `vhangup`, clock setting,
  `ioperm`/`iopl`, obsolete calls (`uselib`, `ustat`, `sysfs`, `_sysctl`, `nfsservctl`, ...);
- `personality` except the values Docker allows (so ASLR cannot be switched off), and
  `socket(AF_VSOCK)` (vsock is not network-namespaced: it reaches the hypervisor);
- every syscall of a foreign ABI (i386 via `int 0x80`, x32) with ENOSYS.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

# BPF opcodes (linux/filter.h, linux/bpf_common.h) and seccomp return values (linux/seccomp.h)
_LD_W_ABS = 0x20
_JEQ = 0x15
_JGE = 0x35
_JSET = 0x45
_RET = 0x06
RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_NR, _ARCH, _ARG0_LOW = 0, 4, 16  # offsets into struct seccomp_data (little endian)
_X32_BIT = 0x40000000

CLONE_NEW_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)
PERSONALITY_ALLOWED = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)  # as Docker's default profile
AF_VSOCK = 40

DENIED = (
    "acct", "add_key", "bpf", "clock_adjtime", "clock_settime", "create_module", "delete_module",
    "fanotify_init", "finit_module", "fsconfig", "fsmount", "fsopen", "fspick", "get_kernel_syms",
    "init_module", "io_uring_enter", "io_uring_register", "io_uring_setup", "ioperm", "iopl",
    "kcmp", "kexec_file_load", "kexec_load", "keyctl", "lookup_dcookie", "migrate_pages",
    "mount", "mount_setattr", "move_mount", "move_pages", "name_to_handle_at", "nfsservctl",
    "open_by_handle_at", "open_tree", "perf_event_open", "pidfd_getfd", "pivot_root",
    "process_vm_readv", "process_vm_writev", "ptrace", "query_module", "quotactl", "quotactl_fd",
    "reboot", "request_key", "setns", "settimeofday", "swapoff", "swapon", "_sysctl", "sysfs",
    "syslog", "umount2", "unshare", "uselib", "userfaultfd", "ustat", "vhangup",
)  # fmt: skip
"""Syscalls refused outright (EPERM), where the architecture has them."""

_COMMON = {  # numbers from linux/unistd_64.h (x86_64) and asm-generic/unistd.h (aarch64)
    "x86_64": {
        "acct": 163, "add_key": 248, "bpf": 321, "clock_adjtime": 305, "clock_settime": 227,
        "clone": 56, "clone3": 435, "create_module": 174, "delete_module": 176,
        "fanotify_init": 300, "finit_module": 313, "fsconfig": 431, "fsmount": 432, "fsopen": 430,
        "fspick": 433, "get_kernel_syms": 177, "init_module": 175, "io_uring_enter": 426,
        "io_uring_register": 427, "io_uring_setup": 425, "ioperm": 173, "iopl": 172, "kcmp": 312,
        "kexec_file_load": 320, "kexec_load": 246, "keyctl": 250, "lookup_dcookie": 212,
        "migrate_pages": 256, "mount": 165, "mount_setattr": 442, "move_mount": 429,
        "move_pages": 279, "name_to_handle_at": 303, "nfsservctl": 180, "open_by_handle_at": 304,
        "open_tree": 428, "perf_event_open": 298, "personality": 135, "pidfd_getfd": 438,
        "pivot_root": 155, "process_vm_readv": 310, "process_vm_writev": 311, "ptrace": 101,
        "query_module": 178, "quotactl": 179, "quotactl_fd": 443, "reboot": 169,
        "request_key": 249, "setns": 308, "settimeofday": 164, "socket": 41, "swapoff": 168,
        "swapon": 167, "_sysctl": 156, "sysfs": 139, "syslog": 103, "umount2": 166,
        "unshare": 272, "uselib": 134, "userfaultfd": 323, "ustat": 136, "vhangup": 153,
    },
    "aarch64": {
        "acct": 89, "add_key": 217, "bpf": 280, "clock_adjtime": 266, "clock_settime": 112,
        "clone": 220, "clone3": 435, "delete_module": 106, "fanotify_init": 262,
        "finit_module": 273, "fsconfig": 431, "fsmount": 432, "fsopen": 430, "fspick": 433,
        "init_module": 105, "io_uring_enter": 426, "io_uring_register": 427, "io_uring_setup": 425,
        "kcmp": 272, "kexec_file_load": 294, "kexec_load": 104, "keyctl": 219,
        "lookup_dcookie": 18, "migrate_pages": 238, "mount": 40, "mount_setattr": 442,
        "move_mount": 429, "move_pages": 239, "name_to_handle_at": 264, "nfsservctl": 42,
        "open_by_handle_at": 265, "open_tree": 428, "perf_event_open": 241, "personality": 92,
        "pidfd_getfd": 438, "pivot_root": 41, "process_vm_readv": 270, "process_vm_writev": 271,
        "ptrace": 117, "quotactl": 60, "quotactl_fd": 443, "reboot": 142, "request_key": 218,
        "setns": 268, "settimeofday": 170, "socket": 198, "swapoff": 225, "swapon": 224,
        "syslog": 116, "umount2": 39, "unshare": 97, "userfaultfd": 282, "vhangup": 58,
    },
}  # fmt: skip
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_MACHINE_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


class SeccompUnsupportedError(RuntimeError):
    """No syscall table for this machine's architecture."""


@dataclass(frozen=True)
class SyscallTable:
    """The syscall numbers of one architecture."""

    machine: str
    audit_arch: int
    numbers: dict[str, int]

    def denied(self) -> dict[str, int]:
        """{name: number} of the syscalls refused outright on this architecture."""
        return {name: self.numbers[name] for name in DENIED if name in self.numbers}


def syscall_table(machine: str | None = None) -> SyscallTable:
    """The table for `machine` (default: this one); raises SeccompUnsupportedError."""
    name = (machine or platform.machine()).lower()
    name = _MACHINE_ALIASES.get(name, name)
    if name not in _COMMON:
        raise SeccompUnsupportedError(
            f"bwrap sandbox: no seccomp syscall table for architecture {name!r} (supported: "
            f"{', '.join(sorted(_COMMON))}); set BwrapConfig(seccomp=False) to run without one"
        )
    return SyscallTable(name, _AUDIT_ARCH[name], dict(_COMMON[name]))


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _errno(code: int) -> int:
    return _RET_ERRNO | code


def filter_program(machine: str | None = None) -> bytes:
    """The BPF program (an array of struct sock_filter) bubblewrap reads from `--seccomp FD`."""
    table = syscall_table(machine)
    nr = table.numbers
    prog = [
        _insn(_LD_W_ABS, _ARCH),
        _insn(_JEQ, table.audit_arch, jt=1),  # native ABI: go on
        _insn(_RET, _errno(errno.ENOSYS)),  # i386 (int 0x80) and other foreign ABIs
        _insn(_LD_W_ABS, _NR),
    ]
    if table.machine == "x86_64":  # the x32 ABI reuses the native arch with bit 30 set
        prog += [_insn(_JGE, _X32_BIT, jf=1), _insn(_RET, _errno(errno.ENOSYS))]
    for number in sorted(table.denied().values()):
        prog += [_insn(_JEQ, number, jf=1), _insn(_RET, _errno(errno.EPERM))]
    prog += [_insn(_JEQ, nr["clone3"], jf=1), _insn(_RET, _errno(errno.ENOSYS))]
    # clone: refuse any new-namespace flag (flags are the first argument on both ABIs)
    prog += [
        _insn(_JEQ, nr["clone"], jf=4),
        _insn(_LD_W_ABS, _ARG0_LOW),
        _insn(_JSET, CLONE_NEW_FLAGS, jf=1),
        _insn(_RET, _errno(errno.EPERM)),
        _insn(_RET, RET_ALLOW),
    ]
    # personality: only the values Docker allows
    block = [_insn(_LD_W_ABS, _ARG0_LOW)]
    for value in PERSONALITY_ALLOWED:
        block += [_insn(_JEQ, value, jf=1), _insn(_RET, RET_ALLOW)]
    block.append(_insn(_RET, _errno(errno.EPERM)))
    prog += [_insn(_JEQ, nr["personality"], jf=len(block)), *block]
    # socket: no AF_VSOCK
    prog += [
        _insn(_JEQ, nr["socket"], jf=4),
        _insn(_LD_W_ABS, _ARG0_LOW),
        _insn(_JEQ, AF_VSOCK, jf=1),
        _insn(_RET, _errno(errno.EPERM)),
        _insn(_RET, RET_ALLOW),
    ]
    prog.append(_insn(_RET, RET_ALLOW))
    return b"".join(prog)


def write_program(path: str, machine: str | None = None) -> None:
    """Write the program to `path` (read-only, owner root when the harness runs as root)."""
    data = filter_program(machine)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o400)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
