"""Remove what a sample built, whatever it built: iterative (a directory 100k levels deep is fine),
relative to open directory descriptors (paths longer than PATH_MAX are fine), never following a
symlink, fixing permissions a sample took away, and never raising for what is inside the tree."""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class RemoveReport:
    """What `remove_tree` could not remove (empty when the tree is gone)."""

    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def _open_dir(name: str, dir_fd: int | None) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except PermissionError:  # a sample's chmod 000 (matters when the harness is not root)
        os.chmod(name, stat.S_IRWXU, dir_fd=dir_fd, follow_symlinks=dir_fd is None)
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def _unlink(name: str, dir_fd: int, report: RemoveReport, where: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    except PermissionError:
        try:  # the directory itself was made read-only
            os.fchmod(dir_fd, stat.S_IRWXU)
            os.unlink(name, dir_fd=dir_fd)
        except OSError as ex:
            report.failures.append(f"{where}/{name}: {ex.strerror}")
    except OSError as ex:
        report.failures.append(f"{where}/{name}: {ex.strerror}")


def remove_tree(path: Path | str) -> RemoveReport:
    """Delete `path` and everything below it. Never raises for the contents; returns what could
    not be removed (e.g. a mount point some other process holds)."""
    report = RemoveReport()
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return report
    except OSError as ex:
        report.failures.append(f"{path}: {ex.strerror}")
        return report
    if not stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(FileNotFoundError):
            try:
                os.unlink(path)
            except OSError as ex:
                report.failures.append(f"{path}: {ex.strerror}")
        return report
    try:
        fd = _open_dir(str(path), None)
    except OSError as ex:
        report.failures.append(f"{path}: {ex.strerror}")
        return report
    # One open descriptor at a time: descend into a subdirectory, come back up through "..",
    # checked against the (device, inode) recorded on the way down.
    names: list[str] = []  # the path from `path` down to the current directory
    ids: list[tuple[int, int]] = [(info.st_dev, info.st_ino)]
    pending: list[list[str]] = [_clear_files(fd, report, str(path))]  # subdirs to visit, per level
    try:
        while True:
            if pending[-1]:
                name = pending[-1].pop()
                try:
                    child = _open_dir(name, fd)
                except FileNotFoundError:
                    continue
                except OSError as ex:
                    report.failures.append(f"{path}/{'/'.join([*names, name])}: {ex.strerror}")
                    continue
                child_info = os.fstat(child)
                os.close(fd)
                fd = child
                names.append(name)
                ids.append((child_info.st_dev, child_info.st_ino))
                where = f"{path}/{'/'.join(names)}"
                pending.append(_clear_files(fd, report, where))
                continue
            # this level is done: go up and remove it
            pending.pop()
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            parent_info = os.fstat(parent)
            os.close(fd)
            fd = parent
            ids.pop()
            if (parent_info.st_dev, parent_info.st_ino) != ids[-1]:  # moved under us: stop here
                report.failures.append(f"{path}/{'/'.join(names)}: the tree changed during removal")
                return report
            name = names.pop()
            try:
                os.rmdir(name, dir_fd=fd)
            except FileNotFoundError:
                pass
            except OSError as ex:
                report.failures.append(f"{path}/{'/'.join([*names, name])}: {ex.strerror}")
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError as ex:
        report.failures.append(f"{path}: {ex.strerror}")
    return report


def _clear_files(dir_fd: int, report: RemoveReport, where: str) -> list[str]:
    """Unlink every non-directory in the directory; return its subdirectories."""
    subdirs: list[str] = []
    try:
        with os.scandir(dir_fd) as entries:
            listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
    except OSError as ex:
        report.failures.append(f"{where}: {ex.strerror}")
        return subdirs
    for name, is_dir in listed:
        if is_dir:
            subdirs.append(name)
        else:
            _unlink(name, dir_fd, report, where)
    return subdirs


def chown_tree(root: Path, uid: int) -> None:
    """lchown `root` and everything below it to uid:uid (iterative; files the harness copied in)."""
    os.lchown(root, uid, uid)
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                os.lchown(entry.path, uid, uid)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
