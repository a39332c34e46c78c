"""The container's seccomp profile: the bwrap sandbox's deny-list as a Docker JSON profile.

Docker's default profile allows some calls the project's bwrap filter refuses (on this engine:
`io_uring_*`, `socket(AF_VSOCK)`, and `ptrace`/`process_vm_*`/`kcmp`/`pidfd_getfd` on new
kernels), so both sandboxes use one list (`sandboxes.bwrap.SECCOMP_DENIED` and friends): every
listed syscall gets EPERM, `clone` with any CLONE_NEW* flag EPERM, `clone3` ENOSYS (a filter
cannot read its flags; glibc falls back to `clone`), `socket(AF_VSOCK)` EPERM, and `personality`
only Docker's allowed values. Every comparison on an `int` argument (socket's domain,
personality's persona) looks at its low 32 bits only, as the kernel does; clone's flags are an
`unsigned long` (each CLONE_NEW* bit is tested on its own). Everything else is allowed; the container's dropped capabilities
and no-new-privileges stop the rest of what Docker's default profile guards (a call that needs a
capability fails without it).
"""

from __future__ import annotations

import errno
import functools
import json
import platform
from typing import Any

from sandboxes.bwrap import AF_VSOCK, CLONE_NEW_FLAGS, PERSONALITY_ALLOWED, SECCOMP_DENIED

_ARCHES = {"x86_64": "SCMP_ARCH_X86_64", "aarch64": "SCMP_ARCH_AARCH64"}
_INT_MASK = 0xFFFFFFFF
"""libseccomp compares all 64 bits of an argument; for an `int` argument every rule masks to the
low 32 (SCMP_CMP_MASKED_EQ), which is what the kernel reads."""


def _deny(names: list[str], args: list[dict[str, Any]] | None = None, code: int = errno.EPERM):
    rule: dict[str, Any] = {"names": names, "action": "SCMP_ACT_ERRNO", "errnoRet": code}
    if args:
        rule["args"] = args
    return rule


def _arg(op: str, value: int, value_two: int = 0, index: int = 0) -> dict[str, Any]:
    return {"index": index, "value": value, "valueTwo": value_two, "op": op}


def _personality_rules() -> list[dict[str, Any]]:
    """EPERM for every 32-bit value but the allowed ones (the kernel reads the argument as an
    unsigned int, so the masks look at the low 32 bits only).

    runc turns several conditions on one argument into separate rules (an OR), so a range cannot
    be written as `>= low AND <= high`; each range is split into aligned blocks instead, each one
    condition `(arg & mask) == prefix`."""
    allowed = sorted(v for v in PERSONALITY_ALLOWED if v <= 0xFFFFFFFF)
    rules, low = [], 0
    for value in allowed:
        if value > low:
            rules += _blocks(low, value - 1)
        low = value + 1
    if low <= 0xFFFFFFFF:
        rules += _blocks(low, 0xFFFFFFFF)
    return rules


def _blocks(low: int, high: int) -> list[dict[str, Any]]:
    """[low, high] as aligned power-of-two blocks, one masked-equality rule each."""
    rules = []
    while low <= high:
        size = low & -low if low else 1 << 32
        while size > high - low + 1:
            size //= 2
        mask = _INT_MASK & ~(size - 1)
        rules.append(_deny(["personality"], [_arg("SCMP_CMP_MASKED_EQ", mask, low)]))
        low += size
    return rules


@functools.cache
def seccomp_profile(machine: str | None = None) -> str:
    """The profile as JSON (what `--security-opt seccomp=<file>` would read)."""
    name = (machine or platform.machine()).lower()
    rules: list[dict[str, Any]] = [_deny(list(SECCOMP_DENIED))]
    for flag in range(32):
        bit = 1 << flag
        if CLONE_NEW_FLAGS & bit:
            rules.append(_deny(["clone"], [_arg("SCMP_CMP_MASKED_EQ", bit, bit)]))
    rules.append(_deny(["clone3"], code=errno.ENOSYS))
    # socket(int domain, ...): the kernel reads 32 bits; compare those only, so a high bit set
    # in the 64-bit register does not slip past (issue 26 §3)
    rules.append(_deny(["socket"], [_arg("SCMP_CMP_MASKED_EQ", _INT_MASK, AF_VSOCK)]))
    rules += _personality_rules()
    profile: dict[str, Any] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": rules}
    if name in _ARCHES:
        profile["architectures"] = [_ARCHES[name]]
    return json.dumps(profile, separators=(",", ":"))
