"""The first step of a live replacement: find the session safely and freeze its complete bytes.

A session is replaced only when it is a regular file with one link, reached from the scanned
root without leaving it: its resolved directory must lie inside the resolved root and its own
name must not be a symlink. The frozen bytes and their SHA-256 are what every later step
compares the live file against.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import CompactionError
from pipeline.live_vocabulary import Step
from pipeline.publish.live.faults import NO_FAULTS, FaultSeam
from pipeline.publish.live.fingerprint import Fingerprint, fingerprint_of
from pipeline.publish.live.fsops import Operations, lstat, open_directory
from pipeline.read.discover import SessionFile
from pipeline.reasons import ReasonCode

__all__ = ["FrozenSource", "SessionTarget", "SourceRefusal", "SourceRefused", "freeze_source"]


class SourceRefusal(ReasonCode):
    """Why a session file is not a safe target for replacement."""

    MISSING = "missing"
    SYMLINK = "symlink"
    NOT_REGULAR = "not-a-regular-file"
    HARD_LINKED = "hard-linked"  # another name shares the bytes: replacing one would split them
    OUTSIDE_ROOT = "outside-root"  # reached through a symlink that leaves the scanned root
    CHANGED_WHILE_READ = "changed-while-read"
    UNREADABLE = "unreadable"


class SourceRefused(CompactionError):
    """A session cannot be replaced in place; carries the reason code and the path."""

    def __init__(self, path: Path, refusal: SourceRefusal, errno_name: str | None = None) -> None:
        self.path = path
        self.refusal = refusal
        self.errno_name = errno_name
        super().__init__(f"{path.name}: {refusal.value}" + (f" ({errno_name})" if errno_name else ""))


SessionTarget = SessionFile
"""A session file as discovery found it: its path, the root it was found under, its labels."""


@dataclass(frozen=True, slots=True)
class FrozenSource:
    """The complete original bytes of a session, their digest and the file's status when read."""

    target: SessionTarget
    directory: Path  # resolved
    name: str
    data: bytes
    sha256: str
    status: os.stat_result

    @property
    def path(self) -> Path:
        """The resolved path of the live file."""
        return self.directory / self.name

    @property
    def fingerprint(self) -> Fingerprint:
        """The file's fingerprint when it was frozen."""
        return fingerprint_of(self.status)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _resolved_root(root: Path) -> Path:
    """A root given as a file stands for its directory."""
    resolved = Path(os.path.realpath(root))
    return resolved if resolved.is_dir() else resolved.parent


def _check_kind(target: SessionTarget, status: os.stat_result | None) -> os.stat_result:
    if status is None:
        raise SourceRefused(target.path, SourceRefusal.MISSING)
    if stat.S_ISLNK(status.st_mode):
        raise SourceRefused(target.path, SourceRefusal.SYMLINK)
    if not stat.S_ISREG(status.st_mode):
        raise SourceRefused(target.path, SourceRefusal.NOT_REGULAR)
    if status.st_nlink != 1:
        raise SourceRefused(target.path, SourceRefusal.HARD_LINKED)
    return status


def freeze_source(target: SessionTarget, *, seam: FaultSeam = NO_FAULTS) -> FrozenSource:
    """Read and hash a session's complete bytes, or raise `SourceRefused` saying why not."""
    directory_path = Path(os.path.realpath(target.path.parent))
    if not _inside(directory_path, _resolved_root(target.root)):
        raise SourceRefused(target.path, SourceRefusal.OUTSIDE_ROOT)
    try:
        directory = open_directory(directory_path)
    except OSError as exc:
        raise SourceRefused(
            target.path, SourceRefusal.UNREADABLE, errno.errorcode.get(exc.errno or 0)
        ) from exc
    name = target.path.name
    try:
        before = _check_kind(target, lstat(directory, name))
        data, status = Operations(seam).read(Step.READ_SOURCE, directory, name)
    except OSError as exc:
        refusal = SourceRefusal.SYMLINK if exc.errno == errno.ELOOP else SourceRefusal.UNREADABLE
        raise SourceRefused(target.path, refusal, errno.errorcode.get(exc.errno or 0)) from exc
    finally:
        directory.close()
    if (status.st_ino, status.st_size) != (before.st_ino, len(data)):
        raise SourceRefused(target.path, SourceRefusal.CHANGED_WHILE_READ)
    return FrozenSource(target, directory_path, name, data, hashlib.sha256(data).hexdigest(), status)
