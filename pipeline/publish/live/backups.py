"""Numbered backups of an original: `.backup.zst`, `.backup1.zst`, ... in the archive, a backup dir
or beside the session.

A backup is written to a private temporary file, fsynced, read back and verified over its
decompressed bytes (SHA-256 and byte equality with the frozen original), and only then given a
numbered name by a hard link, which fails rather than replace anything. A numbered name therefore
only ever holds a complete, verified copy; only the user's retention policy (`retention`) or a
verified move into the archive (`archive_move`) ever removes one. Compression: `auto` (the default)
is zstd through the `zstandard` package (the `zstd` extra) when installed, else gzip from the
standard library; `none` keeps plain copies.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from pipeline.errors import CompactionError
from pipeline.live_vocabulary import BackupCompression, BackupCompressionChoice, BackupPlacement, Step
from pipeline.publish.live.fsops import Directory, Operations, lstat

__all__ = [
    "MAX_BACKUP_NUMBER",
    "Backup",
    "BackupFile",
    "BackupOptions",
    "BackupUnavailable",
    "BackupUnreadable",
    "backup_name",
    "backup_subdirectory",
    "chosen_compression",
    "claim_numbered_name",
    "decode_backup",
    "encode_backup",
    "parse_backup_name",
    "read_backup",
    "require_compression",
    "scan_backups",
    "verify_existing",
    "write_backup",
    "zstd_installed",
]

MAX_BACKUP_NUMBER: Final = 9_999  # a session compacted every night for 27 years; beyond is a bug
_BACKUP_MODE_MASK: Final = 0o666  # a backup keeps the original's read/write bits, never exec or setuid
_BACKUP_NAME: Final = re.compile(r"^(?P<session>.+)\.backup(?P<number>[1-9][0-9]*)?(?P<suffix>\.gz|\.zst)?$")


_BY_SUFFIX: Final = {compression.suffix: compression for compression in BackupCompression}


class BackupUnavailable(CompactionError):
    """The chosen backup compression needs a package that is not installed."""

    def __init__(self, compression: BackupCompression, package: str) -> None:
        self.compression = compression
        self.package = package
        super().__init__(f"backup compression {compression.value} needs {package} (pip install '.[zstd]')")


class BackupUnreadable(CompactionError):
    """A backup's stored bytes do not decode (corrupt, truncated, or of another encoding)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"backup {path.name} cannot be decoded: {reason}")


@dataclass(frozen=True, slots=True)
class BackupOptions:
    """Where backups go and how they are stored."""

    directory: Path | None  # None: beside each session file
    compression: BackupCompression
    level: int  # gzip 1-9, zstd 1-22
    placement: BackupPlacement  # what `directory` is: the archive, the user's directory, or beside


@dataclass(frozen=True, slots=True)
class Backup:
    """A verified numbered backup of one original."""

    path: Path
    sha256: str  # of the original bytes (after decompression)
    size: int  # original bytes
    stored_size: int
    compression: BackupCompression
    reused: bool  # an existing verified backup of the same bytes, not a new file

    def to_report(self) -> dict[str, object]:
        """JSON-ready description (the path, digest, sizes and encoding; no content)."""
        return {
            "path": str(self.path),
            "sha256": self.sha256,
            "bytes": self.size,
            "stored_bytes": self.stored_size,
            "compression": self.compression.value,
            "reused": self.reused,
        }


@dataclass(frozen=True, slots=True)
class BackupFile:
    """A file whose name says it is a numbered backup, as found on disk."""

    path: Path
    session_name: str
    number: int
    compression: BackupCompression
    stored_size: int
    modified: datetime


def zstd_installed() -> bool:
    """Whether the `zstandard` package (the `zstd` extra) can be imported."""
    try:
        import zstandard  # noqa: F401, PLC0415 - an optional extra, loaded only when chosen
    except ImportError:
        return False
    return True


def chosen_compression(choice: BackupCompressionChoice) -> BackupCompression:
    """The encoding a `backup_compression` choice stands for (`auto`: zstd if installed, else gzip)."""
    if choice is BackupCompressionChoice.AUTO:
        return BackupCompression.ZSTD if zstd_installed() else BackupCompression.GZIP
    return BackupCompression(choice.value)


def require_compression(compression: BackupCompression) -> None:
    """Raise `BackupUnavailable` now, before any session runs, if the encoder is missing."""
    if compression is BackupCompression.ZSTD:
        try:
            import zstandard  # noqa: F401, PLC0415 - an optional extra, loaded only when chosen
        except ImportError as exc:
            raise BackupUnavailable(compression, "zstandard") from exc


def backup_name(session_name: str, number: int, compression: BackupCompression) -> str:
    """`x.jsonl.backup`, `x.jsonl.backup1.gz`, ..."""
    return f"{session_name}.backup{number or ''}{compression.suffix}"


def parse_backup_name(name: str) -> tuple[str, int, BackupCompression] | None:
    """(session file name, number, compression) of a backup's file name, or None."""
    match = _BACKUP_NAME.match(name)
    if match is None:
        return None
    return match["session"], int(match["number"] or 0), _BY_SUFFIX[match["suffix"] or ""]


def backup_subdirectory(root_label: str, label: str) -> Path:
    """Where a session's backups go under a backup directory: its report label's folder."""
    return Path(root_label, *Path(label).parts[:-1])


def encode_backup(data: bytes, compression: BackupCompression, level: int) -> bytes:
    """The stored form of an original (gzip without a timestamp, so equal inputs store equally)."""
    if compression is BackupCompression.GZIP:
        return gzip.compress(data, compresslevel=level, mtime=0)
    if compression is BackupCompression.ZSTD:
        import zstandard  # noqa: PLC0415 - optional extra

        return zstandard.ZstdCompressor(level=level, write_content_size=True).compress(data)
    return data


def decode_backup(stored: bytes, compression: BackupCompression, path: Path) -> bytes:
    """The original bytes of a stored backup; `BackupUnreadable` when they do not decode."""
    try:
        if compression is BackupCompression.GZIP:
            return gzip.decompress(stored)
        if compression is BackupCompression.ZSTD:
            import zstandard  # noqa: PLC0415 - optional extra

            reader = zstandard.ZstdDecompressor().decompressobj()
            return reader.decompress(stored)
    except (OSError, EOFError, zlib.error) as exc:
        raise BackupUnreadable(path, type(exc).__name__) from exc
    except ImportError as exc:
        raise BackupUnreadable(path, "zstandard-not-installed") from exc
    except Exception as exc:  # zstandard.ZstdError is not importable without the extra
        if type(exc).__name__ == "ZstdError":
            raise BackupUnreadable(path, "ZstdError") from exc
        raise
    return stored


def read_backup(path: Path) -> bytes:
    """The original bytes a backup file holds (decoded by its name's suffix)."""
    parsed = parse_backup_name(path.name)
    if parsed is None:
        raise BackupUnreadable(path, "not-a-backup-name")
    return decode_backup(path.read_bytes(), parsed[2], path)


def _taken(directory: Directory, session_name: str, number: int) -> bool:
    """A number is taken when any encoding of it exists: one number, one backup."""
    return any(lstat(directory, backup_name(session_name, number, c)) is not None for c in BackupCompression)


def claim_numbered_name(
    ops: Operations,
    step: Step,
    directory: Directory,
    temporary: str,
    session_name: str,
    compression: BackupCompression,
) -> str:
    """Link a file to the first free backup number of a session; never over an existing name."""
    inode = os.stat(temporary, dir_fd=directory.fd, follow_symlinks=False).st_ino
    for number in range(MAX_BACKUP_NUMBER + 1):
        if _taken(directory, session_name, number):
            continue
        name = backup_name(session_name, number, compression)
        try:
            ops.link(step, directory, temporary, directory, name)
        except FileExistsError:
            continue
        except OSError:
            # The link may have happened before the error was reported: the inode decides.
            claimed = lstat(directory, name)
            if claimed is None or claimed.st_ino != inode:
                raise
        return name
    raise FileExistsError(f"no free backup number up to {MAX_BACKUP_NUMBER} for {session_name}")


def write_backup(
    ops: Operations,
    directory: Directory,
    session_name: str,
    original: bytes,
    original_sha256: str,
    options: BackupOptions,
    token: str,
    original_status: os.stat_result,
    *,
    sync_directory: bool,
) -> Backup:
    """Write, verify and claim a new numbered backup; the temporary file never survives.

    `sync_directory` fsyncs the backup directory at once; a backup beside the session is made
    durable by the fsync of that same directory after publication instead, and the displaced
    original is only removed once that fsync succeeded.
    """
    stored = encode_backup(original, options.compression, options.level)
    temporary = f".{session_name}.compaction-{token}.backup-tmp"
    try:
        descriptor = ops.create(Step.BACKUP_CREATE, directory, temporary)
        try:
            ops.write(Step.BACKUP_WRITE, descriptor, stored)
            _share_like(descriptor, original_status)
            ops.fsync(Step.BACKUP_FSYNC, descriptor)
        finally:
            os.close(descriptor)
        read_back, _ = ops.read(Step.BACKUP_VERIFY, directory, temporary)
        decoded = decode_backup(read_back, options.compression, directory.child(temporary))
        if decoded != original:  # byte equality with the frozen original: its digest follows
            raise BackupUnreadable(directory.child(temporary), "verification-mismatch")
        name = claim_numbered_name(
            ops, Step.BACKUP_CLAIM, directory, temporary, session_name, options.compression
        )
    finally:
        # The numbered name, if claimed, is a second link to the same verified file.
        _remove_quietly(directory, temporary)
    if sync_directory:
        ops.fsync_directory(Step.BACKUP_DIRECTORY_FSYNC, directory)
    return Backup(
        directory.child(name), original_sha256, len(original), len(stored), options.compression, False
    )


def _share_like(descriptor: int, original: os.stat_result) -> None:
    """Readable by whoever could read the original (never executable), owned alike where we may."""
    os.fchmod(descriptor, stat.S_IMODE(original.st_mode) & _BACKUP_MODE_MASK)
    if os.geteuid() == 0 and (original.st_uid, original.st_gid) != (os.getuid(), os.getgid()):
        os.fchown(descriptor, original.st_uid, original.st_gid)


def verify_existing(path: Path, original: bytes, original_sha256: str) -> Backup | None:
    """An existing backup holding exactly `original`, re-verified now; None otherwise."""
    parsed = parse_backup_name(path.name)
    try:
        if parsed is None or path.is_symlink() or not path.is_file():
            return None
        stored = path.read_bytes()
        decoded = decode_backup(stored, parsed[2], path)
    except (OSError, BackupUnreadable):
        return None
    if decoded != original or hashlib.sha256(decoded).hexdigest() != original_sha256:
        return None
    return Backup(path, original_sha256, len(original), len(stored), parsed[2], True)


def _remove_quietly(directory: Directory, name: str) -> None:
    try:
        os.unlink(name, dir_fd=directory.fd)
    except FileNotFoundError:
        pass
    except OSError:
        pass  # a leftover temporary is a hidden second link to a verified backup or a partial copy


def scan_backups(directory: Path) -> Iterator[BackupFile]:
    """Every backup-named regular file under a directory (symlinks and dot-files skipped)."""
    for folder, subfolders, files in os.walk(directory, followlinks=False):
        subfolders.sort()
        for name in sorted(files):
            parsed = parse_backup_name(name)
            path = Path(folder, name)
            if parsed is None or name.startswith("."):
                continue
            status = path.lstat()
            if not path.is_file() or path.is_symlink():
                continue
            modified = datetime.fromtimestamp(status.st_mtime, tz=UTC)
            yield BackupFile(path, parsed[0], parsed[1], parsed[2], status.st_size, modified)
