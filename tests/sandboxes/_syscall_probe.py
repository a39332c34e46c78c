"""A script run inside the sandbox that calls every syscall the seccomp filter denies, with
arguments chosen so that the kernel, when no filter stops the call, fails it with a different error
than EPERM (or lets it succeed): so the results tell the filter's refusal from the kernel's."""

from __future__ import annotations

# Syscalls the kernel refuses for lack of a capability before it looks at any argument: EPERM with
# or without the filter (the filter's own test, test_bwrap_seccomp.py, covers them).
CAPABILITY_FIRST = frozenset({
    "acct", "fanotify_init", "fsmount", "fsopen", "fspick", "move_mount", "pivot_root", "reboot",
    "swapoff", "swapon", "syslog", "vhangup",
})  # fmt: skip

PROBE = r"""
import ctypes, errno, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = json.loads(sys.argv[1])
def call(name, *args):
    if name not in NR:
        return None
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(NR[name]), *[ctypes.c_long(a) for a in args])
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
res = {}
BAD = 1  # an invalid user pointer
P = [
 ("acct", (0,)), ("add_key", (0, 0, 0, 0, 0)), ("bpf", (-1, 0, 0)),
 ("clock_adjtime", (0, 0)), ("clock_settime", (0, 0)),
 ("clone", (0x10000000 | 0x200, 0, 0, 0, 0)),  # CLONE_NEWUSER|CLONE_FS: EINVAL when allowed
 ("clone3", (0, 0)), ("create_module", (0, 0)), ("delete_module", (0, 0)),
 ("fanotify_init", (0xffffffff, 0)), ("finit_module", (-1, 0, 0)),
 ("fsconfig", (-1, 0, 0, 0, 0)), ("fsmount", (-1, 0xffffffff, 0)), ("fsopen", (0, 0xffffffff)),
 ("fspick", (-1, 0, 0xffffffff)), ("get_kernel_syms", (0,)), ("init_module", (0, 0, 0)),
 ("io_uring_enter", (-1, 0, 0, 0, 0, 0)), ("io_uring_register", (-1, 0, 0, 0)),
 ("io_uring_setup", (1, 0)), ("ioperm", (0, 0, 1)), ("iopl", (4,)),
 ("kcmp", (0x7ffffff0, 0x7ffffff0, 0, 0, 0)), ("kexec_file_load", (-1, -1, 0, 0, 0)),
 ("kexec_load", (0, 0, 0, 0)), ("keyctl", (0, -3, 0)), ("lookup_dcookie", (0, 0, 0)),
 ("migrate_pages", (0x7ffffff0, 0, 0, 0)), ("mount", (0, 0, 0, 0, 0)),
 ("mount_setattr", (-1, 0, 0xffffffff, 0, 0)), ("move_mount", (-1, 0, -1, 0, 0xffffffff)),
 ("move_pages", (0x7ffffff0, 0, 0, 0, 0, 0)), ("name_to_handle_at", (-100, 0, 0, 0, 0xffff)),
 ("nfsservctl", (0, 0, 0)), ("open_by_handle_at", (-1, 0, 0)), ("open_tree", (-1, 0, 0xffffffff)),
 ("perf_event_open", (0, 0, -1, -1, 0)), ("pidfd_getfd", (-1, 0, 0)), ("pivot_root", (0, 0)),
 ("process_vm_readv", (0x7ffffff0, 0, 0, 0, 0, 1)), ("process_vm_writev", (0x7ffffff0, 0, 0, 0, 0, 1)),
 ("ptrace", (2, 0x7ffffff0, 0, 0)), ("query_module", (0, 0, 0, 0, 0)), ("quotactl", (0, 0, 0, 0)),
 ("quotactl_fd", (-1, 0, 0, 0)), ("reboot", (0, 0, 0, 0)), ("request_key", (0, 0, 0, 0)),
 ("setns", (-1, 0)), ("settimeofday", (BAD, 0)), ("swapoff", (0,)), ("swapon", (0, 0)),
 ("_sysctl", (0,)), ("sysfs", (0xffff, 0, 0)), ("syslog", (10, 0, 0)), ("umount2", (0, 0xff00)),
 ("unshare", (0x00004000,)), ("uselib", (0,)), ("userfaultfd", (0x11,)), ("ustat", (0, 0)),
 ("vhangup", ()), ("personality", (0x0040000,)), ("socket", (40, 1, 0)),
]
for name, args in P:
    r = call(name, *args)
    if r is not None: res[name] = r
# allowed arg variants (must work under the filter)
res["allowed:personality_query"] = call("personality", 0xffffffff)
res["allowed:socket_unix"] = call("socket", 1, 1, 0)
print(json.dumps(res))
"""
