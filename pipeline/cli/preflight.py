"""The user's mistakes about paths, caught before any work: one line and exit 2, never a traceback.

Every directory a command writes (`--out`, `--report-dir`, `--state-dir`, `--work-dir`,
`--backup-dir`, from flags or the configuration alike) must be a directory or creatable as one,
writable, and apart from the sessions it reads: a report directory inside a root would have the
next sweep read its reports as sessions, and a candidate written into a session file's own
directory would take the session's name. The checks leave nothing behind.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from pipeline.errors import UsageError
from pipeline.read.remote import check_store, is_url
from pipeline.settings import Settings

__all__ = ["check_listed", "check_written_directories", "writable_directory"]


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(path.anchor or "/")


def writable_directory(path: Path, what: str) -> Path:
    """`path`, resolved, when it is a directory we may write or one we may create; else `UsageError`."""
    path = path.expanduser().absolute()
    existing = _nearest_existing(path)
    if not existing.is_dir():
        kind = "a file" if existing.is_file() else "not a directory"
        where = "" if existing == path else f" ({existing} is {kind})"
        raise UsageError(f"{what} {path} must be a directory{where or f', but it is {kind}'}")
    if os.statvfs(existing).f_flag & os.ST_RDONLY:  # read-only even for root
        raise UsageError(f"{what} {path} is on a read-only file system")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path} is not writable (permission denied on {existing})")
    if existing != path:
        _probe_creation(path, existing, what)
    return path.resolve()


def _probe_creation(path: Path, existing: Path, what: str) -> None:
    """Create the missing directories and remove them again: what only trying can tell (a
    virtual file system, a quota) is told before any work, and nothing is left behind."""
    try:
        path.mkdir(parents=True)
    except OSError as exc:
        raise UsageError(f"{what} {path} cannot be created: {exc.strerror}") from exc
    finally:
        for made in (path, *path.parents):
            if made == existing:
                break
            try:
                made.rmdir()
            except OSError:
                break  # not made by us, or not empty: leave it


def _apart(path: Path, roots: Sequence[Path], what: str, *, around: bool) -> None:
    """Neither inside a directory root (nor around one, when `around`), nor a file root's directory."""
    for root in roots:
        resolved = root.resolve()
        if resolved.is_file():
            if path == resolved.parent:
                raise UsageError(
                    f"{what} {path} is the directory of the session {root}: choose another directory"
                )
            continue
        if path == resolved or resolved in path.parents or (around and path in resolved.parents):
            where = "inside" if path == resolved or resolved in path.parents else "around"
            raise UsageError(f"{what} {path} is {where} the session root {root}: choose a directory apart")


def _written(args: argparse.Namespace, settings: Settings) -> list[tuple[str, str, bool]]:
    """(flag, configured path, whether it must also not be around a root) of what the command writes."""
    changes_backups = args.command == "backups" and bool(
        getattr(args, "yes", False) or getattr(args, "move_to_archive", False)
    )
    live = (
        args.command in ("restore", "repair-read-pages", "repair", "vacuum")
        or bool(getattr(args, "in_place", False))
        or changes_backups
    )
    report = settings.sweep.report_dir
    chosen = [("--report-dir", report, True)] if report and not is_url(report) else []
    out = getattr(args, "out", None)
    if out is not None:
        chosen.append(("--out", str(out), True))
    if live:
        chosen.append(("--state-dir", settings.state.dir, False))
        if settings.in_place.work_dir:
            chosen.append(("--work-dir", settings.in_place.work_dir, True))
        if settings.in_place.backup_dir:  # may sit inside a root: backup names are never sessions
            chosen.append(("--backup-dir", settings.in_place.backup_dir, False))
    return chosen


def check_written_directories(args: argparse.Namespace, settings: Settings, roots: Sequence[Path]) -> None:
    """Every directory the command will write: a directory we may write, apart from the sessions."""
    local = [root for root in roots if not is_url(str(root)) and root.exists()]
    if is_url(settings.sweep.report_dir):
        check_store(settings.sweep.report_dir)
    for flag, configured, around in _written(args, settings):
        path = writable_directory(Path(configured), flag)
        _apart(path, local, flag, around=around)


def check_listed(settings: Settings, roots: Sequence[Path]) -> None:
    """What a command that only lists (`backups`) reads: roots that exist, and a state and a
    backup directory that are directories when they exist (missing ones hold nothing yet)."""
    for root in roots:
        if not root.exists():
            raise UsageError(f"no such file or directory: {root}")
    for flag, configured in (
        ("--state-dir", settings.state.dir),
        ("--backup-dir", settings.in_place.backup_dir),
    ):
        path = Path(configured).expanduser() if configured else None
        if path is not None and path.exists() and not path.is_dir():
            raise UsageError(f"{flag} {path} must be a directory, but it is a file")
