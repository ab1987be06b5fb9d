"""The only directories a replacement writes to: the session's own and its backup directory.

Both are opened once, as descriptors, before anything is written; every later operation names
a single component inside one of them. Nothing can therefore be written anywhere else, even if
a directory on the way is swapped for a symlink during the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pipeline.publish.live.backups import BackupOptions, backup_subdirectory
from pipeline.publish.live.fsops import Directory, open_directory
from pipeline.publish.live.source import FrozenSource, SessionTarget

__all__ = ["Placement", "backup_directory_of"]


def backup_directory_of(
    target: SessionTarget, frozen_directory: Directory | None, options: BackupOptions
) -> Directory:
    """The session's own directory, or its mirror folder under the backup directory (created)."""
    if options.directory is None:
        assert frozen_directory is not None
        return frozen_directory
    return open_directory(
        options.directory / backup_subdirectory(target.root_label, target.label), create=True
    )


@dataclass(frozen=True, slots=True)
class Placement:
    """The open session directory and backup directory of one replacement."""

    session: Directory
    backups: Directory

    @staticmethod
    @contextmanager
    def open(frozen: FrozenSource, options: BackupOptions) -> Iterator[Placement]:
        """Open both directories for the duration of one transaction."""
        session = open_directory(frozen.directory)
        try:
            backups = backup_directory_of(frozen.target, session, options)
        except BaseException:
            session.close()
            raise
        try:
            yield Placement(session, backups)
        finally:
            if backups is not session:
                backups.close()
            session.close()
