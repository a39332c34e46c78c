"""`bwrap`: an inspect sandbox environment on bubblewrap (no Docker engine needed).

Importing this package registers the provider, so `Task(sandbox="bwrap")`,
`Task(sandbox=("bwrap", BwrapConfig(memory_mb=1024)))` and `--sandbox bwrap` work.
`BwrapConfig(mode="persistent")` (the default) keeps one jail per sample with an exec server in it;
`mode="per_exec"` starts a fresh jail for every exec.
"""

from ._config import WORKDIR, BwrapConfig
from ._files import NotRegularFileError
from ._footprint import HostFootprint, process_table
from ._jail import JailGoneError
from ._probe import BwrapUnavailableError, bwrap_problem, require_bwrap
from ._reaper import reap_orphans, reap_stale_samples, receives_orphans
from ._sandbox import BwrapSandboxEnvironment
from ._seccomp import AF_VSOCK, CLONE_NEW_FLAGS, PERSONALITY_ALLOWED, syscall_table
from ._seccomp import DENIED as SECCOMP_DENIED
from ._tree import remove_tree

__all__ = [
    "AF_VSOCK",
    "CLONE_NEW_FLAGS",
    "PERSONALITY_ALLOWED",
    "SECCOMP_DENIED",
    "WORKDIR",
    "BwrapConfig",
    "BwrapSandboxEnvironment",
    "BwrapUnavailableError",
    "HostFootprint",
    "JailGoneError",
    "NotRegularFileError",
    "bwrap_problem",
    "process_table",
    "reap_orphans",
    "reap_stale_samples",
    "receives_orphans",
    "remove_tree",
    "require_bwrap",
    "syscall_table",
]
