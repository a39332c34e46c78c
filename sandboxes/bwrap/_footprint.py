"""What one sample holds on the host, and what of it is still there: for leak accounting from
the host side (the `agent_stress` task counts leaks after a run with it)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ._disk import mounts_under

ProcessTable = dict[int, tuple[int, bool]]
"""{pid: (real uid, zombie)} of the host's processes."""


def process_table() -> ProcessTable:
    """One scan of /proc: every host process's real uid and whether it is a zombie."""
    table: ProcessTable = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        uid, state = None, ""
        try:
            for line in Path(entry.path, "status").read_text().splitlines():
                if line.startswith("State:"):
                    state = line.split()[1]
                elif line.startswith("Uid:"):
                    uid = int(line.split()[1])
                    break
        except (OSError, ValueError, IndexError):
            continue
        if uid is not None:
            table[int(entry.name)] = (uid, state == "Z")
    return table


@dataclass(frozen=True)
class HostFootprint:
    """A sample's host resources: its folder, its private uids, its cgroup directories."""

    folder: Path
    uids: tuple[int, ...] = ()
    cgroup_dirs: tuple[Path, ...] = field(default_factory=tuple)

    def processes(self, table: ProcessTable | None = None) -> dict[int, bool]:
        """{pid: zombie} of the host processes that are this sample's (by uid or cgroup)."""
        table = process_table() if table is None else table
        found = {pid: zombie for pid, (uid, zombie) in table.items() if uid in self.uids}
        for d in self.cgroup_dirs:
            try:
                pids = [int(p) for p in (d / "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                continue
            for pid in pids:
                if pid in table:
                    found[pid] = table[pid][1]
        return found

    def leftovers(self, table: ProcessTable | None = None) -> dict[str, int]:
        """Counts of what is still on the host: processes (running), zombies, cgroups, mounts,
        work_dirs (the sample folder). All zero once the sample has been cleaned up."""
        procs = self.processes(table)
        zombies = sum(procs.values())
        return {
            "processes": len(procs) - zombies,
            "zombies": zombies,
            "cgroups": sum(d.exists() for d in self.cgroup_dirs),
            "mounts": len(mounts_under(self.folder)),
            "work_dirs": int(self.folder.exists()),
        }
