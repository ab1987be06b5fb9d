"""Is a session still in use? The idle rule, and the processes holding its file open.

What is detected, and what is not:

- **Idle rule** (every platform): a session whose file was modified less than the idle period
  ago is skipped. This is the guard that matters for Claude Code, which opens its transcript,
  appends a line and closes it again on every write: between writes no process holds the file.
  `confirm_sessions_closed` replaces this rule with the user's word that no session is open.
- **Open descriptors, Linux**: every `/proc/<pid>/fd/*` link is compared with the file's device
  and inode (so a renamed or deleted path is still recognized). Only processes the running user
  may inspect are seen: all of them as root, the user's own otherwise (where Claude Code runs).
- **Open descriptors, macOS and other systems with `lsof`**: `lsof -t -- FILE` lists the holders.
- Not detected: memory maps without a descriptor, processes of other users without the right to
  inspect them, processes in other containers or on other machines sharing a network file
  system, Windows (no probe; the system itself refuses to replace a file held open without
  delete sharing), and a Claude Code that is running but between two writes. The last is why
  the idle rule, or the explicit confirmation, is required.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Final, Protocol

from pipeline.publish.live.fingerprint import Fingerprint

__all__ = [
    "ActivityOptions",
    "OpenFileProbe",
    "OpenFileSnapshot",
    "OpenFiles",
    "SessionActivity",
    "assess_activity",
    "platform_probe",
    "recently_modified",
]

_PROC: Final = Path("/proc")
_LSOF_TIMEOUT_SECONDS: Final = 20.0  # lsof answers in well under a second; a hung one must not hang a run
_NS_PER_SECOND: Final = 1_000_000_000


class SessionActivity(StrEnum):
    """Whether a session may be replaced now."""

    IDLE = "idle"  # not modified for the idle period and held by no process
    CONFIRMED_CLOSED = "confirmed-closed"  # the user said no session is open
    RECENTLY_MODIFIED = "recently-modified"  # written to within the idle period
    HELD_OPEN = "held-open"  # a process holds the file open


@dataclass(frozen=True, slots=True)
class ActivityOptions:
    """The idle rule and its explicit alternative."""

    idle_for_seconds: float
    confirm_sessions_closed: bool
    detect_open_files: bool


class OpenFiles(Protocol):
    """Answers which processes hold a file open."""

    def holders(self, path: Path, device: int, inode: int) -> tuple[int, ...]:
        """Ids of processes with the file open (empty when none are seen)."""
        ...


class OpenFileProbe(OpenFiles, Protocol):
    """A live probe, which can also take one snapshot of every open file for a whole run."""

    def snapshot(self) -> OpenFiles:
        """What is open now, for cheap look-ups (a later fresh `holders` call sees changes)."""
        ...


@dataclass(frozen=True, slots=True)
class OpenFileSnapshot:
    """Every regular file open at one moment, by (device, inode)."""

    open_files: Mapping[tuple[int, int], tuple[int, ...]]

    def holders(self, path: Path, device: int, inode: int) -> tuple[int, ...]:
        """The processes that held this file when the snapshot was taken."""
        del path
        return self.open_files.get((device, inode), ())


class ProcFdProbe:
    """Linux: the `/proc/<pid>/fd` links of every process we may inspect."""

    def holders(self, path: Path, device: int, inode: int) -> tuple[int, ...]:
        """Processes whose descriptors point at this device and inode."""
        name = path.name
        found = []
        with os.scandir(_PROC) as entries:
            for entry in entries:
                if entry.name.isdigit() and _holds(f"{entry.path}/fd", name, device, inode):
                    found.append(int(entry.name))
        return tuple(sorted(found))

    def snapshot(self) -> OpenFiles:
        """One pass over every descriptor of every process we may inspect."""
        found: dict[tuple[int, int], list[int]] = {}
        with os.scandir(_PROC) as entries:
            for entry in entries:
                if entry.name.isdigit():
                    for key in _open_regular_files(f"{entry.path}/fd"):
                        found.setdefault(key, []).append(int(entry.name))
        return OpenFileSnapshot(MappingProxyType({key: tuple(sorted(set(p))) for key, p in found.items()}))


def _open_regular_files(fd_dir: str) -> Iterator[tuple[int, int]]:
    try:
        descriptors = os.listdir(fd_dir)
    except OSError:
        return
    for descriptor in descriptors:
        try:
            status = os.stat(f"{fd_dir}/{descriptor}")
        except OSError:
            continue
        if stat.S_ISREG(status.st_mode):
            yield status.st_dev, status.st_ino


def _holds(fd_dir: str, name: str, device: int, inode: int) -> bool:
    try:
        descriptors = os.listdir(fd_dir)
    except OSError:
        return False  # gone, or not ours to inspect
    for descriptor in descriptors:
        link = f"{fd_dir}/{descriptor}"
        try:
            if name not in os.readlink(link):
                continue  # a cheap name filter before the stat that decides
            status = os.stat(link)
        except OSError:
            continue
        if (status.st_dev, status.st_ino) == (device, inode):
            return True
    return False


class LsofProbe:
    """Other systems with `lsof` (macOS): one `lsof -t` per file checked."""

    def __init__(self, executable: str) -> None:
        self._lsof = executable

    def holders(self, path: Path, device: int, inode: int) -> tuple[int, ...]:
        """Processes `lsof` lists for the path."""
        del device, inode  # lsof resolves the path itself
        try:
            done = subprocess.run(
                [self._lsof, "-t", "--", str(path)],
                capture_output=True,
                text=True,
                timeout=_LSOF_TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return ()
        return tuple(sorted(int(word) for word in done.stdout.split() if word.isdigit()))

    def snapshot(self) -> OpenFiles:
        """lsof answers per file; there is no cheaper whole-system view to take."""
        return self


def platform_probe() -> OpenFileProbe | None:
    """The best probe this platform offers, or None where there is none."""
    if sys.platform.startswith("linux") and _PROC.is_dir():
        return ProcFdProbe()
    lsof = shutil.which("lsof")
    return LsofProbe(lsof) if lsof else None


def assess_activity(
    path: Path,
    fingerprint: Fingerprint,
    now_ns: int,
    options: ActivityOptions,
    probe: OpenFiles | None,
) -> tuple[SessionActivity, tuple[int, ...]]:
    """Whether a session may be replaced now, and the holders found (the clock is the caller's)."""
    if options.detect_open_files and probe is not None:
        holders = probe.holders(path, fingerprint.device, fingerprint.inode)
        if holders:
            return SessionActivity.HELD_OPEN, holders
    if options.confirm_sessions_closed:
        return SessionActivity.CONFIRMED_CLOSED, ()
    if recently_modified(fingerprint.mtime_ns, now_ns, options):
        return SessionActivity.RECENTLY_MODIFIED, ()
    return SessionActivity.IDLE, ()


def recently_modified(mtime_ns: int, now_ns: int, options: ActivityOptions) -> bool:
    """Written to within the idle period (never, when the user confirmed the sessions closed)."""
    if options.confirm_sessions_closed:
        return False
    return now_ns - mtime_ns < options.idle_for_seconds * _NS_PER_SECOND
